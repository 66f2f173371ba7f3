"""The multi-step GeAR agent (paper §4): each iteration a SyncGE pass with q(n), the gist read that grows the memory,
reasoning for termination and query re-writing; then passageLink for every memory triple and the final RRF.

Choices the paper leaves open, made explicit here (and recorded in each run's settings):
- the sync reader of iteration n reads the base passages C′q(n) with the original question q and the memory G(n-1)
  (docs/architecture.md, "one question"); beam search and base retrieval use the rewritten query q(n);
- the gist reader reads the top `gist_read_k` passages of the fused list Cq(n) (§4.1) or, with
  gist_read="expanded", only the expanded passages C̃q (the authors' published pseudocode);
- the gist memory is the concatenation of every iteration's proximal triples, exact repeats dropped;
- passageLink(t) = RRF(h^k(t, C), passages of h^k(t, T)) with k = passage_link_k (unstated in the paper; 5).
"""

from __future__ import annotations

import time

from gear.agent import steps
from gear.agent.context import Outcome, RunContext
from gear.agent.event_builders import passage_views
from gear.events import GistUpdated, IterationStarted, PassagesLinked
from gear.store.fusion import rrf
from gear.trace import PassageLinkView
from gear.types import SPO, Scored


def run(ctx: RunContext, question: str, k: int) -> Outcome:
    """The GeAR loop for at most `max_iterations` iterations; `k` is ignored in favour of agent_k."""
    s, trace, timer = ctx.settings, ctx.trace, ctx.timer
    memory: list[SPO] = []
    iteration_lists: list[list[int]] = []
    queries = [question]
    n = 0
    for n in range(1, s.max_iterations + 1):
        trace.emit(IterationStarted(n, queries[-1]))
        fused = iteration(ctx, question, queries[-1], memory, n)
        iteration_lists.append([p.id for p in fused])
        start = time.perf_counter()
        verdict = steps.reason(ctx, question, memory, n)
        start = timer.stage("reason", n, start)
        if verdict.answerable or n == s.max_iterations:
            break
        queries.append(steps.rewrite(ctx, question, memory, verdict.reason, queries, n))
        timer.stage("rewrite", n, start)

    start = time.perf_counter()
    links = [(t, steps.passage_link(ctx, t)) for t in memory]
    trace.emit(PassagesLinked(n, [PassageLinkView(list(t), passage_views(ctx.backend, ids, ctx.gold))
                                  for t, ids in links]))
    ranked = rrf([ids for _, ids in links] + iteration_lists, k=s.rrf_k)
    timer.stage("passageLink + final RRF", n, start)
    return Outcome(ranked, n)


def iteration(ctx: RunContext, question: str, query: str, memory: list[SPO], n: int) -> list[Scored]:
    """SyncGE with q(n), then the gist read that grows the memory G(n) in place; returns the fused list Cq(n)."""
    s = ctx.settings
    result = steps.sync(ctx, query, question, s.agent_k, memory, n)
    fused = result.fused
    start = time.perf_counter()
    if s.gist_read == "expanded":
        to_read, label = result.expanded[: s.gist_read_k], "read(C̃q, q, G(n−1)) — expanded passages"
    else:
        to_read, label = [p.id for p in fused[: s.gist_read_k]], f"read(Cq(n)[:{s.gist_read_k}], q, G(n−1))"
    added = steps.read(ctx, to_read, question, memory, n, "gist", label)
    memory.extend(t for t in dict.fromkeys(added) if t not in memory)
    ctx.trace.emit(GistUpdated(n, [list(t) for t in added], [list(t) for t in memory]))
    ctx.timer.stage("gist read", n, start)
    return fused
