"""Trace → Diagnosis: where each gold passage was lost, the answer checks, the proposed error category.

A pure function of a trace — no index, no LLM, nothing re-run — unless the run's index is handed in as a probe
(gear.diagnosis.probe): then the category may consult the index's triples and re-run the beam search or another base
retriever (never the model); the stage table is the trace's alone either way. "Lost at" is the first stage, in the
method's pipeline order, that the passage did not reach in any iteration (the best any iteration achieved); a passage
within the top k of the final ranking is "found". Stages are not a strict funnel — the graph reaches passages the base
list missed, fusion carries base passages the reader skipped — so each passage also gets "dropped at": the stage after
the last one it reached (before the final ranking), where it left the run for good. A run cut short (no final ranking or
no RunFinished) is diagnosed as far as it went: its passages stay "open", with the stages they missed among those that
ran, and the diagnosis says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gear.diagnosis.answer import check_answer
from gear.diagnosis.categories import propose
from gear.diagnosis.evidence import passage_evidence
from gear.diagnosis.facts import TraceFacts, rank_of
from gear.diagnosis.model import (
    FINAL,
    FOUND,
    FOUND_STATUS,
    LOST_STATUS,
    NONE,
    OPEN_STATUS,
    RUN_LEVEL,
    Diagnosis,
    GoldPassage,
    StageMark,
    hop_type,
)
from gear.diagnosis.probe import Probe, fits, index_texts
from gear.diagnosis.registry import FAMILIES, family_for, run_name
from gear.events import PPRSeeded, QueryRewritten
from gear.trace import Trace

DEFAULT_K = 5


def final_marks(facts: TraceFacts, pid: int, k: int) -> list[StageMark]:
    if facts.final is None:
        return []
    rank = rank_of(facts.final.passages, pid)
    missed = "not in the final ranking" if rank is None else f"rank {rank} > {k}"
    return [StageMark(FINAL, RUN_LEVEL, rank is not None, rank, note="" if rank else "not in the final ranking"),
            StageMark(FOUND, RUN_LEVEL, rank is not None and rank <= k, rank,
                      note="" if rank is not None and rank <= k else missed)]


def follow(p: GoldPassage, stages: list[str], complete: bool) -> None:
    """Set the passage's status and lost-at stage from its marks."""
    ran = [s for s in stages if any(m.stage == s for m in p.marks)]
    p.lost_at = next((s for s in ran if not p.reached(s)), None)
    before_final = [n for n, s in enumerate(ran) if s not in (FINAL, FOUND) and p.reached(s)]
    after = ran[before_final[-1] + 1:] if before_final else ran
    p.dropped_at = next((s for s in after if not p.reached(s)), None)
    if p.reached(FOUND):
        p.status, p.lost_at, p.dropped_at = FOUND_STATUS, None, None
    elif complete and p.lost_at is not None:
        p.status = LOST_STATUS
    else:
        p.status = OPEN_STATUS


def diagnose(trace: Trace, k: int = DEFAULT_K, passages: Mapping[int, tuple[str, str]] | None = None,
             missing_gold: Sequence[str] = (), hop: str | None = None, probe: Probe | None = None) -> Diagnosis:
    """Follow every gold passage of the run through its method's stages and propose an error category.

    `passages`: (title, text) by id for passages the trace may not show — a gold passage no stage reached has only
    its id in the trace, so the rules that read its text (the graph's missed bridge, the gold answer in no gold
    passage) stay silent about it unless the caller knows it (`gear eval` from its index, `gear diagnose --qa`).
    `missing_gold`: titles of gold passages the question names that the index lacks (a trace holds ids only, so the
    caller says so): the only ground for "no gold passage of the question is in the index". A run with no gold
    passage known and none named missing gets no category: its gold passages are to be marked first.
    `hop`: the question's type where its QA record names one (2Wiki's comparison, inference, …; HotpotQA's bridge):
    a trace holds only the id, from which MuSiQue's hop type is read and no other set's.
    `probe`: the index the run was made on (an `Engine` over it): extraction told from graph by its triples, the
    beam search and the base retrievers re-run to test a claim (gear.diagnosis.probe); the stage table is unchanged."""
    unfit = probe is not None and not fits(probe, trace)
    if probe is not None and not unfit:  # gold passages no event shows, named from the run's index
        passages = {**index_texts(probe, trace), **(passages or {})}
    probe = None if unfit else probe
    facts = TraceFacts.of(trace, passages)
    method, family = family_for(facts)
    stages = [*family.stages, FINAL, FOUND]
    gold_passages: list[GoldPassage] = []
    for pid in facts.gold:
        p = GoldPassage(pid, facts.title(pid), [*family.marks(facts, pid), *final_marks(facts, pid, k)])
        follow(p, stages, facts.finished)
        p.evidence = passage_evidence(p, stages, k)
        gold_passages.append(p)
    notes = []
    if not facts.finished:
        last = facts.iterations[-1] if facts.iterations else 0
        notes.append(f"the run was cut short after iteration {last} (no "
                     f"{'final ranking' if facts.final is None else 'RunFinished'}): diagnosed as far as it went")
    if facts.start is None:
        notes.append("the trace has no RunStarted: no gold passages or answers to follow")
    elif not facts.gold and not missing_gold:
        notes.append("no gold passages known for this question: mark the passages that hold the answer")
    if missing_gold and facts.gold:
        notes.append(f"the index lacks {len(missing_gold)} named gold passage{'' if len(missing_gold) == 1 else 's'} "
                     f"({', '.join(repr(t) for t in missing_gold)}): recall counts only the gold passages it holds")
    repeated = [e.iteration for e in trace.of(QueryRewritten) if e.repeated]
    if repeated:
        notes.append(f"the rewriter repeated an earlier query in iteration{'s' if len(repeated) > 1 else ''} "
                     f"{', '.join(map(str, repeated))}: the next iteration searched with the same words")
    if unfit:
        notes.append("the index given is not the one this run was made on (its passages differ): the diagnosis did "
                     "not consult it")
    unregistered = facts.method not in FAMILIES
    if unregistered:
        notes.append(f"method {facts.method!r} is not registered: diagnosed with the {family.name} stages its "
                     "events show")
    d = Diagnosis(facts.question_id, facts.start.question if facts.start else "", method,
                  run_name(method, family, facts), family.name, hop or hop_type(facts.question_id), k, stages,
                  facts.iterations, facts.finished, gold_passages, check_answer(facts, family.name == "IRCoT"), None,
                  notes=notes, missing_gold=list(dict.fromkeys(missing_gold)))
    graph = family.graph or bool(trace.of(PPRSeeded))
    propose(d, facts, graph, probe).apply(d)
    if d.answer is not None and d.answer.form_only and d.category != NONE:
        d.notes.append(f"the answer is right in substance ({d.answer.form_only}): exact match fails it on form alone")
    return d
