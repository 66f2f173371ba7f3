"""Counts over many diagnoses, per run (method and variant): the funnel (gold passages reaching each stage), where
they were lost, the proposed categories, the same per hop type, and the answer checks."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from gear.diagnosis.model import CATEGORIES, FOUND_STATUS, LOST_STATUS, OPEN_STATUS, Diagnosis

UNDETERMINED = "undetermined"  # a run cut short with no loss yet, or nothing to judge against


@dataclass
class HopCounts:
    questions: int = 0
    gold: int = 0
    found: int = 0
    lost_at: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)


@dataclass
class RunSummary:
    run: str
    method: str
    family: str
    k: int
    stages: list[str]
    questions: int = 0
    gold: int = 0
    found: int = 0
    open: int = 0       # gold passages of runs cut short, not yet found
    cut_short: int = 0  # runs cut short
    funnel: dict[str, int] = field(default_factory=dict)      # stage → gold passages that reached it
    found_within: dict[str, int] = field(default_factory=dict)  # cut-off → gold passages within it in the final
    #                                                             ranking: what R@k of the same runs counts
    chain: bool = True  # every gold passage reached a first run of the stages, none a later stage after a miss: the
    #                     counts are a funnel (never increasing downwards); False where the graph reached passages an
    #                     earlier stage missed (GeAR, NaiveGE, PPR): each stage's count stands alone
    lost_at: dict[str, int] = field(default_factory=dict)     # stage → gold passages lost there (complete runs)
    dropped_at: dict[str, int] = field(default_factory=dict)  # stage → gold passages that left the run there
    categories: dict[str, int] = field(default_factory=dict)  # proposed category → questions
    second: dict[str, int] = field(default_factory=dict)      # second category → questions
    by_hop: dict[str, HopCounts] = field(default_factory=dict)
    answers: dict[str, int] = field(default_factory=dict)


@dataclass
class Summary:
    runs: dict[str, RunSummary]

    def to_dict(self) -> dict[str, Any]:
        return {name: asdict(r) for name, r in self.runs.items()}


def _add(counts: dict[str, int], key: str, n: int = 1) -> None:
    counts[key] = counts.get(key, 0) + n


def _ordered(counts: dict[str, int], order: Iterable[str]) -> dict[str, int]:
    keys = [k for k in order if k in counts] + sorted(k for k in counts if k not in order)
    return {k: counts[k] for k in keys}


def summarise(diagnoses: Iterable[Diagnosis], ks: Iterable[int] = ()) -> Summary:
    """Counts per run; `ks`: the cut-offs to count the gold passages found within (besides the diagnoses' own k)."""
    runs: dict[str, RunSummary] = {}
    cutoffs = set(ks)
    for d in diagnoses:
        r = runs.get(d.run)
        if r is None:
            r = runs[d.run] = RunSummary(d.run, d.method, d.family, d.k, list(d.stages))
            r.funnel = {s: 0 for s in d.stages}
        for k in sorted(cutoffs | {d.k}):
            _add(r.found_within, str(k), d.found_within(k))
        hop = r.by_hop.setdefault(d.hop, HopCounts())
        category = d.category or UNDETERMINED
        r.questions += 1
        hop.questions += 1
        _add(r.categories, category)
        _add(hop.categories, category)
        if d.second:
            _add(r.second, d.second)
        r.cut_short += not d.complete
        for p in d.passages:
            r.gold += 1
            hop.gold += 1
            reached = [p.reached(stage) for stage in d.stages]
            for stage, yes in zip(d.stages, reached, strict=True):
                if yes:
                    _add(r.funnel, stage)
            r.chain &= reached == sorted(reached, reverse=True)  # reached stages first, then only misses
            if p.status == FOUND_STATUS:
                r.found += 1
                hop.found += 1
            elif p.status == LOST_STATUS and p.lost_at:
                _add(r.lost_at, p.lost_at)
                _add(hop.lost_at, p.lost_at)
                if p.dropped_at:
                    _add(r.dropped_at, p.dropped_at)
            elif p.status == OPEN_STATUS:
                r.open += 1
        a = d.answer
        if a is not None:
            _add(r.answers, "answered", a.answer is not None)
            _add(r.answers, "right", a.right is True)
            _add(r.answers, "answerable_wrong", bool(a.answerable_wrong))
            _add(r.answers, "rejected", bool(a.rejected))
            _add(r.answers, "in_qa_passages_but_wrong", bool(a.in_qa_passages) and a.right is False)
            _add(r.answers, "stopped_early", a.stopped_early)
    order = (*CATEGORIES, UNDETERMINED)
    for r in runs.values():
        r.lost_at = _ordered(r.lost_at, r.stages)
        r.dropped_at = _ordered(r.dropped_at, r.stages)
        r.categories = _ordered(r.categories, order)
        r.second = _ordered(r.second, order)
        r.by_hop = dict(sorted(r.by_hop.items()))
        r.found_within = dict(sorted(r.found_within.items(), key=lambda item: int(item[0])))
        for hop in r.by_hop.values():
            hop.lost_at = _ordered(hop.lost_at, r.stages)
            hop.categories = _ordered(hop.categories, order)
    return Summary(runs)
