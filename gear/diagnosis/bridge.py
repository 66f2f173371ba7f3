"""The bridge rule: the path to a lost gold passage is in its text, and the graph did not take it.

A graph step reached a triple of another gold passage whose subject or object this passage's text names, yet nothing
reached this passage; what its own index triples say about that name decides between graph, extraction and the base
retriever (docs/diagnosis.md, "The rules", item 3: base / retrieval and beam / seed).
"""

from __future__ import annotations

from collections.abc import Sequence

from gear.diagnosis.claims import ref
from gear.diagnosis.evidence import lost_cause
from gear.diagnosis.facts import TraceFacts, spo
from gear.diagnosis.grounding import entity_tokens, names_in
from gear.diagnosis.model import (
    BASE,
    BASE_RETRIEVER,
    EXTRACTION,
    GRAPH,
    STEP_BEAM,
    STEP_LINK,
    STEP_SEED,
    Cause,
    Diagnosis,
    GoldPassage,
    Ref,
    stage_label,
)
from gear.events import BeamsSearched, InitialNodes, PPRSeeded, TriplesLinked
from gear.store.graph import normalise_entity
from gear.trace import TripleView


def bridge(p: GoldPassage, d: Diagnosis, facts: TraceFacts, step: str) -> Cause | None:
    """The path is in the text: a graph step reached a triple of another gold passage whose subject or object this
    passage's text names, yet nothing reached this passage. What the passage's own index triples (those the trace
    shows) say about that name decides the cause, named at the graph's `step` (beam, PPR's seed) it missed:
    - one of them has it under another entity string ("southern Africa" for "Africa") → graph: the graph does not
      join the two names;
    - the trace shows all of them (NaiveGE's initial nodes) and none names it → extraction: the fact is in the text,
      in no triple;
    - one of them has exactly that entity → base_retriever, named at the base list it was missing from: the edge is
      there, the graph step did not take it;
    - none shown → graph, weak: a missing edge cannot be told from a beam that did not take it."""
    if not facts.text_known(p.id):
        return None
    words = facts.tokens.of(p.id)
    others = {q.id: q.title for q in d.passages if q.id != p.id}
    own = [t for t in facts.triples.values() if t.passage_id == p.id]
    complete = p.reached(BASE) and any(e.source == "naive" for e in facts.trace.of(InitialNodes))

    def cause(category: str, at: str, text: str, reached: Ref, weak: bool = False) -> Cause:
        return lost_cause(category, p, at, d.k, text, weak, refs=(reached,))

    for how, reached, triple in _graph_triples(facts):
        if triple.passage_id not in others:
            continue
        for end in (triple.subject, triple.object):
            if not names_in(end, words):
                continue
            seen = f"{how} reached {spo(triple)} of gold '{others[triple.passage_id]}', whose '{end}' it names too"
            exact = [t for t in own if normalise_entity(end) in (normalise_entity(t.subject),
                                                                 normalise_entity(t.object))]
            if exact:
                at = BASE if BASE in d.stages and not p.reached(BASE) else step
                return cause(BASE_RETRIEVER if at == BASE else GRAPH, at,
                             f"{seen}, and its triple {spo(exact[0])} shares that entity: the graph joins them, but "
                             f"no {stage_label(step, d.k)} took that edge", reached)
            other = _other_name(end, own, p.title)
            if other is not None:
                return cause(GRAPH, step, f"{seen}, but its triple {spo(other[0])} names it '{other[1]}': another "
                                          "entity string, so the graph does not join them", reached)
            if complete:
                return cause(EXTRACTION, step, f"{seen}, but none of its {len(own)} index triples names it: the fact "
                                               "is in its text, in no triple, so no beam can reach it", reached)
            return cause(GRAPH, step, f"{seen}, yet no graph step reached it: an edge missing or one the graph step "
                                      "did not follow (the trace shows none of its triples, so cannot tell which)",
                         reached, weak=True)
    return None


def _other_name(end: str, triples: Sequence[TripleView], title: str) -> tuple[TripleView, str] | None:
    """A triple naming the same thing under another entity string: one's content tokens inside the other's (the
    passage's own subject, its title, is another thing even when it holds the name: "St. Peter's Basilica")."""
    words = set(entity_tokens(end))
    for t in triples:
        for x in (t.subject, t.object):
            if normalise_entity(x) == normalise_entity(title):
                continue
            theirs = set(entity_tokens(x))
            if words and theirs and (words <= theirs or theirs <= words) and normalise_entity(x) != \
                    normalise_entity(end):
                return t, x
    return None


def _graph_triples(facts: TraceFacts) -> list[tuple[str, Ref, TripleView]]:
    """The triples a graph step reached, with how (in words and as a ref): kept beams, tripleLink, PPR's kept seed
    facts."""
    found: list[tuple[str, Ref, TripleView]] = []
    for e in facts.trace.of(BeamsSearched):
        kept = sorted({t for beam in (e.steps[-1] if e.steps else []) for t in beam.triple_ids})
        found.extend((f"a beam (iteration {e.iteration})", ref("reached", STEP_BEAM, e.iteration, None, t),
                      facts.triples[t]) for t in kept if t in facts.triples)
    for linked in facts.trace.of(TriplesLinked):
        found.extend((f"tripleLink (iteration {linked.iteration})",
                      ref("reached", STEP_LINK, linked.iteration, None, link.linked.id), link.linked)
                     for link in linked.links if link.linked is not None)
    for seeded in facts.trace.of(PPRSeeded):
        found.extend((f"a PPR seed fact (iteration {seeded.iteration})",
                      ref("reached", STEP_SEED, seeded.iteration, None, f.triple.id), f.triple)
                     for f in seeded.facts if f.kept)
    return found
