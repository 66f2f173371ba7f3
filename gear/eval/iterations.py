"""What a multi-step run had after each iteration, read from its trace alone (the paper's Figures 4 and 6, R@15 across
iterations, and Figure 5, tokens across iterations).

After iteration n, GeAR's ranking is the one it would have returned had it stopped there: passageLink for the gist
memory as it stood after n, and the RRF of those links with the fused lists of iterations 1..n — exactly what a run
capped at n iterations ranks, since its first n iterations are the same prompts and answers (the reasoner at n is
asked either way; only the rewrite after it is skipped). IRCoT's is its collection after the n-th retrieval. A run
that stopped before n keeps its final ranking, as the paper carries a terminated question's recall forward. Tokens
after n are those of the calls of iterations 1..n (Trace.tokens: memo answers cost nothing), the answer's QA call
counted apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gear.events import GistUpdated, PassagesAdded, PassagesFused, PassagesLinked, RunStarted
from gear.measures import recall_at
from gear.store.fusion import rrf
from gear.trace import Trace

ANSWER_STEP = "qa"  # the QA call after the final ranking (gear.agent.asks: Ask("qa", …))


def last_iteration(trace: Trace) -> int:
    """How many iterations (GeAR) or retrievals (IRCoT) the run made; 1 for a single-step run."""
    added = trace.of(PassagesAdded)
    if added:
        return len(added)
    return max(trace.iterations(), default=1)


def ranking_after(trace: Trace, n: int) -> list[int]:
    """The passage ids the run would have ranked had it stopped after iteration n (its final ranking for n at or past
    its last iteration)."""
    added = trace.of(PassagesAdded)
    if added:
        return list(added[min(n, len(added)) - 1].collected)
    fused = [e for e in trace.of(PassagesFused) if e.iteration <= n]
    if not fused:
        raise ValueError("the trace has no fused list: not a GeAR run, or a run cut short")
    start = trace.first(RunStarted)
    rrf_k = int((start.settings if start else {}).get("rrf_k") or 60)
    memory = [e for e in trace.of(GistUpdated) if e.iteration <= n]
    linked = trace.first(PassagesLinked)
    links = {tuple(view.triple): [p.id for p in view.passages] for view in (linked.links if linked else [])}
    lists = [links.get(tuple(t), []) for t in (memory[-1].memory if memory else [])]
    return [s.id for s in rrf([*lists, *([p.id for p in e.passages] for e in fused)], rrf_k)]


def recall_by_iteration(trace: Trace, ks: Sequence[int], depth: int) -> list[dict[str, float]]:
    """R@k (fractions) after iterations 1..depth, the final ranking carried past the run's last iteration."""
    start = trace.first(RunStarted)
    gold = start.gold_passage_ids if start else []
    last = last_iteration(trace)
    out: list[dict[str, float]] = []
    for n in range(1, depth + 1):
        if n <= last or not out:
            ranked = ranking_after(trace, n)
            out.append({str(k): recall_at(ranked, gold, k) for k in ks})
        else:
            out.append(out[-1])
    return out


def tokens_by_iteration(trace: Trace, depth: int) -> list[tuple[int, int]]:
    """(prompt, completion) tokens spent by the end of iterations 1..depth, the answer's QA call left out."""
    out: list[tuple[int, int]] = []
    prompt = completion = 0
    for n in range(1, depth + 1):
        p, c = trace.tokens(n)
        qp, qc = trace.tokens(n, ANSWER_STEP)
        prompt, completion = prompt + p - qp, completion + c - qc
        out.append((prompt, completion))
    return out


@dataclass
class IterationCurves:
    """Over a set of runs: mean R@k (percent) after each iteration, the total tokens spent by then (retrieval only),
    the answers' tokens, and how many runs were still going at each iteration."""

    label: str
    ks: list[int]
    recall: list[dict[str, float]] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)
    completion_tokens: list[int] = field(default_factory=list)
    answer_tokens: tuple[int, int] = (0, 0)
    running: list[int] = field(default_factory=list)
    questions: int = 0


def curves(label: str, traces: Sequence[Trace], ks: Sequence[int], depth: int) -> IterationCurves:
    """The curves of a set of runs (one per question) over iterations 1..depth."""
    ks = sorted(ks)
    recalls = [recall_by_iteration(t, ks, depth) for t in traces]
    tokens = [tokens_by_iteration(t, depth) for t in traces]
    lasts = [last_iteration(t) for t in traces]
    answers = [t.tokens(step=ANSWER_STEP) for t in traces]
    return IterationCurves(
        label, list(ks),
        recall=[{str(k): 100.0 * float(np.mean([r[n][str(k)] for r in recalls])) if recalls else 0.0 for k in ks}
                for n in range(depth)],
        prompt_tokens=[sum(t[n][0] for t in tokens) for n in range(depth)],
        completion_tokens=[sum(t[n][1] for t in tokens) for n in range(depth)],
        answer_tokens=(sum(a[0] for a in answers), sum(a[1] for a in answers)),
        running=[sum(last >= n for last in lasts) for n in range(1, depth + 1)],
        questions=len(traces))
