"""Build trace events from engine results: the place where ids become the titles and texts a UI shows.

It lives with the agent, which calls it, above the stages whose results it reads (retrieve, store), so that gear.trace
— the contract between engine and UI — sits below every stage and imports none of them."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from gear.events import BeamsSearched, Event, InitialNodes, PassagesExpanded, PassagesFused, PPRRanked, PPRSeeded
from gear.retrieve.beam import BeamParams, BeamSearchResult, Candidate
from gear.retrieve.expand import Expansion
from gear.retrieve.ppr import PPRIndex, PPRResult
from gear.store.base import SearchBackend
from gear.trace import (
    BeamCandidatesView,
    BeamView,
    CandidateView,
    EdgeView,
    EntityView,
    FactSeedView,
    PassageView,
    TripleView,
)
from gear.types import Scored

TOP_ENTITIES = 15  # entities a PPRRanked event shows, besides the seeds, with the edges among them
#: candidates per beam and hop a trace keeps besides the kept ones (BeamsSearched.hops), so a lesson can show why
#: those beams: the first 6 by s' tell the story (the penalty reorders the top of V) and keep a trace small
CANDIDATES_RECORDED = 6


def passage_views(backend: SearchBackend, ranked: Sequence[Scored] | Sequence[int],
                  gold: Collection[int] = ()) -> list[PassageView]:
    items = [(r.id, r.score) if isinstance(r, Scored) else (int(r), 0.0) for r in ranked]
    found = backend.passages([i for i, _ in items])
    return [PassageView(p.id, p.title, p.text, float(s), p.id in gold) for p, (_, s) in zip(found, items, strict=True)]


def triple_views(backend: SearchBackend, ids: Iterable[int], gold: Collection[int] = ()) -> list[TripleView]:
    triples = backend.triples(list(ids))
    titles = {p.id: p.title for p in backend.passages(sorted({t.passage_id for t in triples}))}
    return [TripleView(t.id, t.subject, t.predicate, t.object, t.passage_id, titles.get(t.passage_id, ""),
                       t.passage_id in gold) for t in triples]


def beams_event(iteration: int, search: BeamSearchResult, backend: SearchBackend, params: BeamParams,
                score_mode: str, gold: Collection[int] = ()) -> BeamsSearched:
    steps = [[BeamView(list(b.triple_ids), b.score, list(b.hop_scores), list(b.penalties)) for b in step]
             for step in search.steps]
    ids = sorted({t for step in search.steps for b in step for t in b.triple_ids})
    initial = [_candidate(c) for c in search.initial]
    hops = [[BeamCandidatesView(v.beam, v.total, [_candidate(c) for c in v.candidates]) for v in hop]
            for hop in search.hops]
    weighed = sorted({c.triple_id for c in initial} | {c.triple_id for hop in hops for v in hop for c in v.candidates
                                                       if c.triple_id >= 0} - set(ids))
    return BeamsSearched(iteration, steps, triple_views(backend, ids, gold), params.width, params.length,
                         params.max_neighbours, params.gamma, params.diversity, score_mode, search.candidates_scored,
                         search.recorded, initial, hops, triple_views(backend, weighed, gold))


def _candidate(c: Candidate) -> CandidateView:
    return CandidateView(c.triple, c.hop_score, c.accumulated, c.rank, c.penalty, c.score, c.kept)


def expansion_events(iteration: int, source: str, result: Expansion, backend: SearchBackend, params: BeamParams,
                     score_mode: str, gold: Collection[int] = ()) -> list[Event]:
    """The events of one graph expansion, NaiveGE and SyncGE alike: initial nodes, beams, C̃q and the fused list."""
    return [InitialNodes(iteration, source, triple_views(backend, result.initial, gold)),
            beams_event(iteration, result.search, backend, params, score_mode, gold),
            PassagesExpanded(iteration, passage_views(backend, result.expanded, gold)),
            PassagesFused(iteration, passage_views(backend, result.fused, gold))]


def ppr_events(iteration: int, query: str, index: PPRIndex, matched: Sequence[Scored], result: PPRResult, *,
               passage_weight: float, damping: float, k: int, filtered: bool = False, raw: str = "",
               gold: Collection[int] = ()) -> list[Event]:
    """The events of one PPR retrieval: the seeds (matched facts, what the filter kept, entity weights) and the
    outcome (top entities with the edges among them and to the top k passages, the ranked passages)."""
    backend, names = index.backend, index.entity_names
    kept = {f.id for f in result.facts}
    facts = [FactSeedView(view, fact.score, fact.id in kept)
             for view, fact in zip(triple_views(backend, [f.id for f in matched], gold), matched, strict=True)]
    seeds = [EntityView(e, names[e], w, float(result.scores[e])) for e, w in result.seeds.entities.items()]
    top = [s.id for s in index.top_entities(result, TOP_ENTITIES)]
    shown = list(dict.fromkeys([*top, *result.seeds.entities]))
    passages = result.ranking[:k]
    entities = [EntityView(e, names[e], float(result.seeds.vector[e]), float(result.scores[e])) for e in shown]
    edges = [EdgeView(*edge) for edge in index.edges_between(shown, [p.id for p in passages])]
    return [PPRSeeded(iteration, query, facts, seeds, passage_weight, filtered, raw, result.fallback),
            PPRRanked(iteration, damping, result.iterations, entities, edges, passage_views(backend, passages, gold),
                      index.graph.counts())]
