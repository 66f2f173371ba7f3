"""PPR retrieval (HippoRAG 2 style) as one of the engine's methods: dense query-to-triple matching, the optional
recognition filter, Personalized PageRank over the entity–passage graph (gear.retrieve.ppr), and the trace events of
each. It lives with the agent because the filter is an LLM call, counted like every other (RunContext.ask); without
the filter the run is given no LLM at all (gear.methods: its `llm_setting`).

The run is single-step like NaiveGE: `k` is the cut-off. Its base list (BaseRetrieved) is the dense passage ranking
that seeds the passage nodes; both dense parts use the dense encoder whatever `retriever` says, as HippoRAG 2 does.
"""

from __future__ import annotations

import time

from gear.agent.asks import Ask
from gear.agent.context import Outcome, RunContext
from gear.agent.event_builders import passage_views, ppr_events
from gear.events import BaseRetrieved, IterationStarted
from gear.parsing import parse_kept_facts
from gear.prompts import peers
from gear.retrieve.ppr import PPRResult, ranked
from gear.types import Scored

FILTER_TOKENS = 64  # a handful of numbers in JSON


def recognise(ctx: RunContext, query: str, facts: list[Scored], iteration: int) -> tuple[list[Scored], str]:
    """HippoRAG 2's recognition memory: the LLM keeps the matched facts that help answer `query`."""
    spo = [t.spo for t in ctx.backend.triples([f.id for f in facts])]
    raw = ctx.ask(Ask("filter", peers.filter_prompt(query, spo), peers.FILTER_SCHEMA, FILTER_TOKENS), iteration)
    numbers, warnings = parse_kept_facts(raw, len(facts))
    ctx.warn(iteration, warnings, "recognition filter")
    return [facts[n - 1] for n in sorted(numbers)], raw


def ppr_search(ctx: RunContext, query: str, k: int, iteration: int) -> PPRResult:
    """One PPR retrieval for `query`, its PPRSeeded and PPRRanked events emitted; the recognition filter runs when
    the settings turn it on."""
    s = ctx.settings
    index = ctx.ppr_index()
    qv = ctx.encode_query(query)
    matched = index.match_facts(qv, s.ppr_seed_triples)
    kept, raw = matched, ""
    filtered = s.ppr_filter and bool(matched)
    if filtered:
        kept, raw = recognise(ctx, query, matched, iteration)
    result = index.rank(qv, kept, passage_weight=s.ppr_passage_weight, max_entities=s.ppr_seed_entities,
                        damping=s.ppr_damping)
    for event in ppr_events(iteration, query, index, matched, result, passage_weight=s.ppr_passage_weight,
                            damping=s.ppr_damping, k=k, filtered=filtered, raw=raw, gold=ctx.gold):
        ctx.trace.emit(event)
    return result


def run(ctx: RunContext, question: str, k: int) -> Outcome:
    """Single-step PPR retrieval: the dense base list, then PPR's ranking, cut at k."""
    timer = ctx.timer
    start = time.perf_counter()
    ctx.trace.emit(IterationStarted(1, question))
    built = ctx.ppr_ready()
    index = ctx.ppr_index()
    if not built:
        start = timer.stage("PPR graph build", 1, start)
    dense = ranked(index.passage_scores(ctx.encode_query(question)), k)
    ctx.trace.emit(BaseRetrieved(1, question, k, passage_views(ctx.backend, dense, ctx.gold)))
    start = timer.stage("base retrieval", 1, start)
    result = ppr_search(ctx, question, k, 1)
    timer.stage("PPR", 1, start)
    return Outcome(result.ranking[:k])
