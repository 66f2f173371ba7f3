"""The base retriever alone (BM25, dense or hybrid): C′q = h^k_base(q, C), the reference every method is measured
against."""

from __future__ import annotations

import time

from gear.agent import steps
from gear.agent.context import Outcome, RunContext
from gear.events import IterationStarted


def run(ctx: RunContext, question: str, k: int) -> Outcome:
    start = time.perf_counter()
    ctx.trace.emit(IterationStarted(1, question))
    found = steps.base(ctx, question, k, 1)
    ctx.timer.stage("base retrieval", 1, start)
    return Outcome(found)
