"""What a diagnosis reads from a trace, gathered once: the run's start, the passages and triples its events show (a
trace carries the text of every passage and triple it mentions), the iterations, and whether the run finished."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gear.diagnosis.grounding import Attribution, PassageTokens
from gear.events import (
    BaseRetrieved,
    BeamsSearched,
    FinalRanking,
    InitialNodes,
    PassagesAdded,
    PassagesExpanded,
    PassagesFused,
    PassagesLinked,
    PPRRanked,
    PPRSeeded,
    ProximalTriples,
    RunFinished,
    RunStarted,
    TriplesLinked,
)
from gear.trace import PassageView, Trace, TripleView


def rank_of(passages: Sequence[PassageView] | Sequence[int], pid: int) -> int | None:
    """1-based rank of a passage in a list of views or ids; None when absent."""
    for n, p in enumerate(passages, 1):
        if (p.id if isinstance(p, PassageView) else p) == pid:
            return n
    return None


def spo(triple: Sequence[str] | TripleView) -> str:
    parts = triple.spo if isinstance(triple, TripleView) else tuple(triple)
    return "⟨" + ", ".join(str(x) for x in parts) + "⟩"


@dataclass
class TraceFacts:
    trace: Trace
    start: RunStarted | None
    texts: dict[int, tuple[str, str]]  # passage id → (title, text), from every view in the trace
    triples: dict[int, TripleView]     # index triple id → view, from every event that names one
    tokens: PassageTokens
    iterations: list[int]
    final: FinalRanking | None
    finished: bool
    _attributions: dict[int, list[Attribution]] = field(default_factory=dict)

    @classmethod
    def of(cls, trace: Trace, known: Mapping[int, tuple[str, str]] | None = None) -> TraceFacts:
        """`known`: (title, text) of passages the trace may not show (gold passages no stage reached), from the
        caller's index or QA set; the trace's own views come first."""
        texts: dict[int, tuple[str, str]] = {}
        titles: dict[int, str] = {}
        triples: dict[int, TripleView] = {}
        for event in trace.events:
            for view in _passages(event):
                texts.setdefault(view.id, (view.title, view.text))
            for t in _triples(event):
                triples.setdefault(t.id, t)
                if t.passage_title:
                    titles.setdefault(t.passage_id, t.passage_title)
        for pid, pair in (known or {}).items():
            if pid not in texts or not texts[pid][1]:
                texts[pid] = (pair[0] or texts.get(pid, ("", ""))[0], pair[1] or "")
        for pid, title in titles.items():  # a passage only a triple names: its title, text unknown
            texts.setdefault(pid, (title, ""))
        iterations = trace.iterations() or sorted({e.iteration for e in trace.of(BaseRetrieved)})
        final = trace.first(FinalRanking)
        finished = final is not None and trace.first(RunFinished) is not None
        return cls(trace, trace.first(RunStarted), texts, triples, PassageTokens(texts), iterations, final, finished)

    # -- the run's start ------------------------------------------------------------------------------------------
    @property
    def method(self) -> str:
        return self.start.method if self.start else ""

    @property
    def gold(self) -> list[int]:
        return list(dict.fromkeys(self.start.gold_passage_ids)) if self.start else []

    @property
    def answers(self) -> list[str]:
        return list(self.start.answers) if self.start else []

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self.start.settings) if self.start else {}

    @property
    def question_id(self) -> str:
        return self.start.question_id if self.start else ""

    def setting(self, name: str, default: Any) -> Any:
        value = self.settings.get(name)
        return default if value is None else value

    # -- passages and triples ---------------------------------------------------------------------------------------
    def title(self, pid: int) -> str:
        title = self.texts.get(pid, ("", ""))[0]
        return title or f"passage #{pid}"

    def text_known(self, pid: int) -> bool:
        return bool(self.texts.get(pid, ("", ""))[1])

    def passage_of(self, triple_id: int) -> int | None:
        view = self.triples.get(triple_id)
        return view.passage_id if view is not None else None

    def attributions(self, read: ProximalTriples) -> list[Attribution]:
        """Where each triple of one read came from (gear.diagnosis.grounding), worked out once per read."""
        key = id(read)
        if key not in self._attributions:
            self._attributions[key] = [self.tokens.attribute(t, read.passage_ids) for t in read.triples]
        return self._attributions[key]


def _passages(event: object) -> list[PassageView]:
    if isinstance(event, (BaseRetrieved, PassagesExpanded, PassagesFused, FinalRanking, PPRRanked, PassagesAdded)):
        return list(event.passages)
    if isinstance(event, PassagesLinked):
        return [p for link in event.links for p in link.passages]
    return []


def _triples(event: object) -> list[TripleView]:
    if isinstance(event, (InitialNodes, BeamsSearched)):
        return list(event.triples)
    if isinstance(event, TriplesLinked):
        return [link.linked for link in event.links if link.linked is not None]
    if isinstance(event, PPRSeeded):
        return [f.triple for f in event.facts]
    return []
