"""Stage marks of the graph-expansion family — GeAR, SyncGE, NaiveGE — and of base-only runs: for one gold passage,
what each event of each iteration shows (base rank, read, tripleLink, initial nodes, beam hop, expanded and fused
ranks, gist read, passageLink)."""

from __future__ import annotations

from gear.diagnosis.facts import TraceFacts, rank_of, spo
from gear.diagnosis.model import (
    BASE,
    BEAM,
    EXPANDED,
    FUSED,
    GIST,
    INITIAL,
    LINK,
    LINKED,
    READ,
    RUN_LEVEL,
    Family,
    StageMark,
)
from gear.events import (
    BaseRetrieved,
    BeamsSearched,
    InitialNodes,
    PassagesExpanded,
    PassagesFused,
    PassagesLinked,
    ProximalTriples,
    TriplesLinked,
)


def more(items: list[str], shown: int = 1) -> str:
    head = "; ".join(items[:shown])
    return head + (f" (+{len(items) - shown} more)" if len(items) > shown else "")


def base_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    marks = []
    for e in facts.trace.of(BaseRetrieved):
        rank = rank_of(e.passages, pid)
        marks.append(StageMark(BASE, e.iteration, rank is not None, rank,
                               note="" if rank else f"not in the base list (top {e.k})"))
    return marks


def read_marks(facts: TraceFacts, pid: int, role: str, stage: str) -> list[StageMark]:
    """The sync (role "sync") or gist ("gist") reader: did it read the passage, and did a triple come from it."""
    marks = []
    for e in facts.trace.of(ProximalTriples):
        if e.role != role:
            continue
        if pid not in e.passage_ids:
            marks.append(StageMark(stage, e.iteration, False, note="not among the passages read"))
            continue
        drawn = [spo(a.triple) for a in facts.attributions(e) if pid in a.passages]
        note = more(drawn) if drawn else f"read (position {e.passage_ids.index(pid) + 1}), no triple drawn from it"
        marks.append(StageMark(stage, e.iteration, bool(drawn), e.passage_ids.index(pid) + 1, note=note))
    return marks


def link_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    marks = []
    linked_iterations = set()
    for e in facts.trace.of(TriplesLinked):
        linked_iterations.add(e.iteration)
        mine = [f"{spo(link.proximal)} → {spo(link.linked)} ({link.similarity:.2f})" for link in e.links
                if link.linked is not None and link.linked.passage_id == pid]
        marks.append(StageMark(LINK, e.iteration, bool(mine), note=more(mine)))
    for nodes in facts.trace.of(InitialNodes):  # traces without TriplesLinked: the sync initial nodes say the same
        if nodes.source == "sync" and nodes.iteration not in linked_iterations:
            mine = [spo(t) for t in nodes.triples if t.passage_id == pid]
            marks.append(StageMark(LINK, nodes.iteration, bool(mine), note=more(mine)))
    return marks


def initial_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    marks = []
    for e in facts.trace.of(InitialNodes):
        if e.source != "naive":
            continue
        mine = [spo(t) for t in e.triples if t.passage_id == pid]
        marks.append(StageMark(INITIAL, e.iteration, bool(mine),
                               note=f"{len(mine)} of its triples" if mine else "none of its triples"))
    return marks


def beam_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    """A kept beam (the last step, the one flattened into C̃q) holds one of its triples: the lowest hop."""
    marks = []
    for e in facts.trace.of(BeamsSearched):
        kept = e.steps[-1] if e.steps else []
        hops = [(n, t) for beam in kept for n, t in enumerate(beam.triple_ids, 1) if facts.passage_of(t) == pid]
        if hops:
            hop, tid = min(hops)
            marks.append(StageMark(BEAM, e.iteration, True, hop=hop, note=spo(facts.triples[tid])))
            continue
        dropped = [s for s, step in enumerate(e.steps[:-1], 1) for beam in step for t in beam.triple_ids
                   if facts.passage_of(t) == pid]
        note = f"a beam held one of its triples at step {dropped[0]} but none was kept" if dropped else ""
        marks.append(StageMark(BEAM, e.iteration, False, note=note))
    return marks


def list_marks(facts: TraceFacts, pid: int, stage: str, event_type: type[PassagesExpanded] | type[PassagesFused]
               ) -> list[StageMark]:
    marks = []
    for e in facts.trace.of(event_type):
        rank = rank_of(e.passages, pid)
        marks.append(StageMark(stage, e.iteration, rank is not None, rank))
    return marks


def passage_link_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    marks = []
    for e in facts.trace.of(PassagesLinked):
        hits = [(rank, link.triple) for link in e.links if (rank := rank_of(link.passages, pid)) is not None]
        if hits:
            rank, triple = min(hits, key=lambda h: h[0])
            marks.append(StageMark(LINKED, RUN_LEVEL, True, rank,
                                   note=f"{spo(triple)}" + (f" (+{len(hits) - 1} more)" if len(hits) > 1 else "")))
        else:
            marks.append(StageMark(LINKED, RUN_LEVEL, False, note=f"in none of {len(e.links)} passageLink lists"))
    return marks


def gear_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    return [*sync_marks(facts, pid), *read_marks(facts, pid, "gist", GIST), *passage_link_marks(facts, pid)]


def sync_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    return [*base_marks(facts, pid), *read_marks(facts, pid, "sync", READ), *link_marks(facts, pid),
            *beam_marks(facts, pid), *list_marks(facts, pid, EXPANDED, PassagesExpanded),
            *list_marks(facts, pid, FUSED, PassagesFused)]


def naive_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    return [*base_marks(facts, pid), *initial_marks(facts, pid), *beam_marks(facts, pid),
            *list_marks(facts, pid, EXPANDED, PassagesExpanded), *list_marks(facts, pid, FUSED, PassagesFused)]


GEAR_STAGES = (BASE, READ, LINK, BEAM, EXPANDED, FUSED, GIST, LINKED)
SYNC_STAGES = (BASE, READ, LINK, BEAM, EXPANDED, FUSED)
NAIVE_STAGES = (BASE, INITIAL, BEAM, EXPANDED, FUSED)
BASE_STAGES = (BASE,)


GEAR = Family("GeAR", GEAR_STAGES, gear_marks, True, ("prompts",))
SYNC = Family("SyncGE", SYNC_STAGES, sync_marks, True, ("prompts",))
NAIVE = Family("NaiveGE", NAIVE_STAGES, naive_marks, True)
BASE_ONLY = Family("base", BASE_STAGES, base_marks, False)
