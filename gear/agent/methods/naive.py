"""NaiveGE (paper §3.1): the base passages' triples are all initial nodes of the graph expansion; no LLM."""

from __future__ import annotations

import time

from gear.agent import steps
from gear.agent.context import Outcome, RunContext
from gear.events import IterationStarted
from gear.retrieve.expand import naive_initial_nodes


def run(ctx: RunContext, question: str, k: int) -> Outcome:
    start = time.perf_counter()
    ctx.trace.emit(IterationStarted(1, question))
    found = steps.base(ctx, question, k, 1)
    start = ctx.timer.stage("base retrieval", 1, start)
    initial = naive_initial_nodes(ctx.backend, [p.id for p in found])
    result = steps.expand(ctx, question, found, initial, 1, source="naive")
    ctx.timer.stage("graph expansion", 1, start)
    return Outcome(result.fused)
