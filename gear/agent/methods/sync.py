"""SyncGE (paper §3.1): single-step retrieval with synchronised graph expansion — the reader's proximal triples,
linked into the index by tripleLink, are the initial nodes."""

from __future__ import annotations

from gear.agent import steps
from gear.agent.context import Outcome, RunContext
from gear.events import IterationStarted


def run(ctx: RunContext, question: str, k: int) -> Outcome:
    ctx.trace.emit(IterationStarted(1, question))
    return Outcome(steps.sync(ctx, question, question, k, [], 1).fused)
