"""SyncGE (paper §3.1) and the multi-step GeAR agent (§4): read, tripleLink, graph expansion, gist memory,
reasoning for termination, query re-writing, passageLink and the final RRF — every step recorded in the Trace.

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
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from gear.agent.run import Run
from gear.agent.steps import Step
from gear.config import Settings
from gear.eval.measures import recall_at_cutoffs
from gear.store.fusion import rrf
from gear.trace import (
    FinalRanking,
    GistUpdated,
    IterationStarted,
    PassageLinkView,
    PassagesLinked,
    RunFinished,
    Trace,
)
from gear.trace.views import passage_views
from gear.types import SPO, Scored

if TYPE_CHECKING:
    from gear.agent.engine import Engine


def _finish(step: Step, ranked: list[Scored], iterations: int, started: float, question: str,
            answers: Sequence[str]) -> Run:
    step.trace.emit(FinalRanking(iterations, passage_views(step.backend, ranked, step.gold)))
    answer = None
    if step.s.answer:
        start = time.perf_counter()
        answer = step.answer(question, ranked, answers, iterations)
        step.timer.stage("qa", iterations, start)
    total = (time.perf_counter() - started) * 1000
    step.trace.emit(RunFinished(iterations, iterations, total, recall_at_cutoffs([r.id for r in ranked], step.gold)))
    return Run(ranked, step.trace, {**step.timer.totals, "total": total}, answer)


def run_sync(engine: Engine, question: str, *, k: int, settings: Settings, gold: Collection[int], trace: Trace,
             answers: Sequence[str] = ()) -> Run:
    """SyncGE: single-step retrieval with synchronised graph expansion."""
    started = time.perf_counter()
    step = Step(engine, settings, trace, gold)
    trace.emit(IterationStarted(1, question))
    fused = step.sync(question, question, k, [], 1).fused
    return _finish(step, fused, 1, started, question, answers)


def run_agent(engine: Engine, question: str, *, k: int, settings: Settings, gold: Collection[int], trace: Trace,
              answers: Sequence[str] = ()) -> Run:
    """The GeAR loop (paper §4) for at most `max_iterations` iterations; `k` is ignored in favour of agent_k."""
    started = time.perf_counter()
    s = settings
    step = Step(engine, s, trace, gold)
    memory: list[SPO] = []
    iteration_lists: list[list[int]] = []
    queries = [question]
    n = 0
    for n in range(1, s.max_iterations + 1):
        trace.emit(IterationStarted(n, queries[-1]))
        fused = _iteration(step, question, queries[-1], memory, n)
        iteration_lists.append([p.id for p in fused])
        start = time.perf_counter()
        verdict = step.reason(question, memory, n)
        start = step.timer.stage("reason", n, start)
        if verdict.answerable or n == s.max_iterations:
            break
        queries.append(step.rewrite(question, memory, verdict.reason, queries, n))
        step.timer.stage("rewrite", n, start)

    start = time.perf_counter()
    links = [(t, step.passage_link(t)) for t in memory]
    trace.emit(PassagesLinked(n, [PassageLinkView(list(t), passage_views(step.backend, ids, step.gold))
                                  for t, ids in links]))
    ranked = rrf([ids for _, ids in links] + iteration_lists, k=s.rrf_k)
    step.timer.stage("passageLink + final RRF", n, start)
    return _finish(step, ranked, n, started, question, answers)


def _iteration(step: Step, question: str, query: str, memory: list[SPO], n: int) -> list[Scored]:
    """SyncGE with q(n), then the gist read that grows the memory G(n) in place; returns the fused list Cq(n)."""
    s = step.s
    result = step.sync(query, question, s.agent_k, memory, n)
    fused = result.fused
    start = time.perf_counter()
    if s.gist_read == "expanded":
        to_read, label = result.expanded[: s.gist_read_k], "read(C̃q, q, G(n−1)) — expanded passages"
    else:
        to_read, label = [p.id for p in fused[: s.gist_read_k]], f"read(Cq(n)[:{s.gist_read_k}], q, G(n−1))"
    added = step.read(to_read, question, memory, n, "gist", label)
    memory.extend(t for t in dict.fromkeys(added) if t not in memory)
    step.trace.emit(GistUpdated(n, [list(t) for t in added], [list(t) for t in memory]))
    step.timer.stage("gist read", n, start)
    return fused
