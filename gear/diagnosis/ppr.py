"""Stage marks of HippoRAG 2-style PPR runs: the dense base list that seeds the passage nodes, the seeds (a kept seed
fact is one of the passage's triples, or a seed entity is one of its entities), and PPR's ranking.

Which entities a passage holds is not in the trace; a seed entity counts as one of the passage's when a context edge
PPRRanked draws joins them, or else when the passage's text names it (every content token; gear.diagnosis.
grounding.names_in) — the same lexical rule the diagnosis uses wherever the trace is silent."""

from __future__ import annotations

from gear.diagnosis.expansion import base_marks, more
from gear.diagnosis.facts import TraceFacts, rank_of, spo
from gear.diagnosis.grounding import names_in
from gear.diagnosis.model import BASE, RANKED, SEED, Family, StageMark
from gear.events import PPRRanked, PPRSeeded


def seed_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    marks = []
    for e in facts.trace.of(PPRSeeded):
        seeds = [f"seed fact {spo(f.triple)} ({f.score:.2f})" for f in e.facts if f.kept and f.triple.passage_id == pid]
        ranked = facts.trace.first(PPRRanked, e.iteration)
        joined = {edge.source for edge in (ranked.edges if ranked else []) if edge.kind == "context" and
                  edge.target == pid}
        words = facts.tokens.of(pid) if facts.text_known(pid) else frozenset()
        for entity in e.entities:
            if entity.id in joined:
                seeds.append(f"seed entity '{entity.name}' (context edge)")
            elif words and names_in(entity.name, words):
                seeds.append(f"seed entity '{entity.name}' (named in its text)")
        note = more(seeds) if seeds else ("no fact kept: the dense ranking stands" if e.fallback else "")
        marks.append(StageMark(SEED, e.iteration, bool(seeds), note=note))
    return marks


def ranked_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    marks = []
    for e in facts.trace.of(PPRRanked):
        rank = rank_of(e.passages, pid)
        marks.append(StageMark(RANKED, e.iteration, rank is not None, rank,
                               note="" if rank else f"not in PPR's top {len(e.passages)}"))
    return marks


def ppr_marks(facts: TraceFacts, pid: int) -> list[StageMark]:
    return [*base_marks(facts, pid), *seed_marks(facts, pid), *ranked_marks(facts, pid)]


PPR_STAGES = (BASE, SEED, RANKED)


PPR = Family("PPR", PPR_STAGES, ppr_marks, True)
