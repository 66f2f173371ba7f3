"""PPR retrieval (HippoRAG 2 style) as one of the engine's methods: dense query-to-triple matching, the optional
recognition filter, Personalized PageRank over the entity–passage graph (gear.retrieve.ppr), and the trace events of
each. It lives with the agent because the filter is an LLM call, counted like every other (Step.ask); without the
filter no LLM is created at all.

The run is single-step like NaiveGE: `k` is the cut-off. Its base list (BaseRetrieved) is the dense passage ranking
that seeds the passage nodes; both dense parts use the dense encoder whatever `retriever` says, as HippoRAG 2 does.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING

from gear.agent.requests import Request
from gear.agent.run import Run, Timer
from gear.agent.steps import Step
from gear.config import Settings
from gear.eval.measures import recall_at_cutoffs
from gear.parsing import parse_kept_facts
from gear.prompts import peers
from gear.retrieve.ppr import PPRResult, ranked
from gear.trace import BaseRetrieved, FinalRanking, IterationStarted, RunFinished, Trace
from gear.trace.views import passage_views, ppr_events
from gear.types import Scored

if TYPE_CHECKING:
    from gear.agent.engine import Engine

FILTER_TOKENS = 64  # a handful of numbers in JSON


def recognise(step: Step, query: str, facts: list[Scored], iteration: int) -> tuple[list[Scored], str]:
    """HippoRAG 2's recognition memory: the LLM keeps the matched facts that help answer `query`."""
    spo = [t.spo for t in step.backend.triples([f.id for f in facts])]
    raw = step.ask(Request("filter", peers.filter_prompt(query, spo), peers.FILTER_SCHEMA, FILTER_TOKENS), iteration)
    numbers, warnings = parse_kept_facts(raw, len(facts))
    step.warn(iteration, warnings, "recognition filter")
    return [facts[n - 1] for n in sorted(numbers)], raw


def ppr_search(engine: Engine, query: str, k: int, settings: Settings, trace: Trace, gold: Collection[int],
               iteration: int, step: Step | None = None) -> PPRResult:
    """One PPR retrieval for `query`, its PPRSeeded and PPRRanked events emitted; the filter runs when it is on
    and a `step` (the run's LLM context) is given."""
    s = settings
    index = engine.ppr_index(s)
    qv = engine.encode_query(query)
    matched = index.match_facts(qv, s.ppr_seed_triples)
    kept, raw = matched, ""
    filtered = s.ppr_filter and step is not None and bool(matched)
    if filtered:
        assert step is not None
        kept, raw = recognise(step, query, matched, iteration)
    result = index.rank(qv, kept, passage_weight=s.ppr_passage_weight, max_entities=s.ppr_seed_entities,
                        damping=s.ppr_damping)
    for event in ppr_events(iteration, query, index, matched, result, passage_weight=s.ppr_passage_weight,
                            damping=s.ppr_damping, k=k, filtered=filtered, raw=raw, gold=gold):
        trace.emit(event)
    return result


def run_ppr(engine: Engine, question: str, *, k: int, settings: Settings, gold: Collection[int],
            trace: Trace) -> Run:
    """Single-step PPR retrieval: the dense base list, then PPR's ranking, cut at k."""
    timer = Timer(trace)
    t0 = start = time.perf_counter()
    trace.emit(IterationStarted(1, question))
    built = engine.has_ppr_index(settings)
    index = engine.ppr_index(settings)
    if not built:
        start = timer.stage("PPR graph build", 1, start)
    dense = ranked(index.passage_scores(engine.encode_query(question)), k)
    trace.emit(BaseRetrieved(1, question, k, passage_views(engine.backend, dense, gold)))
    start = timer.stage("base retrieval", 1, start)
    step = Step(engine, settings, trace, gold) if settings.ppr_filter else None
    result = ppr_search(engine, question, k, settings, trace, gold, 1, step)
    timer.stage("PPR", 1, start)
    top = result.ranking[:k]
    trace.emit(FinalRanking(1, passage_views(engine.backend, top, gold)))
    total = (time.perf_counter() - t0) * 1000
    trace.emit(RunFinished(1, 1, total, recall_at_cutoffs([r.id for r in top], gold)))
    return Run(top, trace, {**timer.totals, "total": total})
