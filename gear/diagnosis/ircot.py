"""Stage marks of IRCoT runs: retrieval n (its query was the question, or thought n−1) returned the passage — with its
rank in that retrieval's hits, and whether it was new to the collection then."""

from __future__ import annotations

from gear.diagnosis.facts import TraceFacts, rank_of
from gear.diagnosis.model import RETRIEVAL, Family, StageMark
from gear.events import BaseRetrieved, PassagesAdded


def _query_note(n: int, query: str) -> str:
    short = query if len(query) <= 80 else query[:77] + "…"
    return "with the question" if n == 1 else f"with thought {n - 1}: {short!r}"


def retrieval_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    added = {e.iteration: e for e in facts.trace.of(PassagesAdded)}
    marks = []
    seen = set()
    for e in facts.trace.of(BaseRetrieved):  # IRCoT emits one for every retrieval, base retriever or PPR
        seen.add(e.iteration)
        rank = rank_of(e.passages, pid)
        new = e.iteration in added and rank_of(added[e.iteration].passages, pid) is not None
        note = _query_note(e.iteration, e.query) + ("" if rank is None else ", new" if new else ", already collected")
        marks.append(StageMark(RETRIEVAL, e.iteration, rank is not None, rank, note=note))
    for n, add in added.items():  # older or partial traces: the passages each retrieval added
        if n not in seen:
            rank = rank_of(add.passages, pid)
            marks.append(StageMark(RETRIEVAL, n, rank is not None, rank, note=_query_note(n, add.query)))
    return sorted(marks, key=lambda m: m.iteration)


IRCOT_STAGES = (RETRIEVAL,)


IRCOT = Family("IRCoT", IRCOT_STAGES, retrieval_marks, False, ("ircot_retriever",))
