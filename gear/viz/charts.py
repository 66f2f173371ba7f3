"""The charts: plotly figures of a run, of evaluation reports and of an index, and the rows of the ranked-list tables
shown beside them. Imports no Streamlit."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from gear import measures, methods
from gear.eval.protocol import protocol_of, runs_per_cutoff
from gear.events import LLMCalled, PassagesLinked, Reasoned, StageTimed
from gear.trace import PassageView, Trace
from gear.viz.graph import FONT, esc_html, short, spo_text


# -- ranked lists -----------------------------------------------------------------------------------------------------
def shown_titles(passages: Iterable[PassageView]) -> dict[int, str]:
    """Each passage's title as a table shows it: a title that several passages share (two "St. Peter's Basilica"
    side by side) followed by the passage's id, so they can be told apart."""
    ids: dict[str, set[int]] = {}
    seen = list(passages)
    for p in seen:
        ids.setdefault(p.title, set()).add(p.id)
    return {p.id: f"{p.title} (#{p.id})" if len(ids[p.title]) > 1 else p.title for p in seen}


def rank_movement(base: Sequence[PassageView], fused: Sequence[PassageView]) -> list[dict[str, Any]]:
    """Rows for the fused list: its rank, the passage's rank in the base list, and the move (▲/▼/new)."""
    before = {p.id: n for n, p in enumerate(base, 1)}
    titles = shown_titles(fused)
    rows = []
    for n, p in enumerate(fused, 1):
        b = before.get(p.id)
        if b is None:
            move = "new (from graph)"
        elif b > n:
            move = f"▲ {b - n}"
        elif b < n:
            move = f"▼ {n - b}"
        else:
            move = "="
        rows.append({"rank": n, "gold": "★" if p.gold else "", "title": titles[p.id], "base rank": b or None,
                     "move": move, "score": round(p.score, 4), "id": p.id})
    return rows


def passage_rows(passages: Sequence[PassageView], limit: int | None = None) -> list[dict[str, Any]]:
    titles = shown_titles(passages[:limit])
    return [{"rank": n, "gold": "★" if p.gold else "", "title": titles[p.id], "text": short(p.text, 200),
             "score": round(p.score, 4), "id": p.id} for n, p in enumerate(passages[:limit], 1)]


def linked_rows(e: PassagesLinked) -> list[dict[str, Any]]:
    """passageLink's table: each gist triple and the passages it links to (titles told apart by id when shared)."""
    titles = shown_titles(p for link in e.links for p in link.passages)
    return [{"gist triple": spo_text(link.triple),
             "linked passages": "; ".join(("★ " if p.gold else "") + titles[p.id] for p in link.passages)}
            for link in e.links]


@dataclass(frozen=True)
class Verdict:
    """The reasoner's verdict as a person should read it. `tone`: "caught" (the run's guard rejected an answerable
    verdict), "agrees" (answerable, and its answer is the gold one), "contradicts" (answerable with an answer that is
    not the gold one), "unchecked" (answerable, no gold answer known) or "open" (not answerable yet). Only "agrees" is
    ever shown as a success: a verdict is the model's claim, not a check."""

    tone: str
    text: str


def verdict(e: Reasoned, gold_answers: Sequence[str] = (), esc: Callable[[str], str] = str) -> Verdict:
    """The verdict in words; `esc` escapes every part that comes from the run (answers, reasons) for the sink the
    text goes to (the app passes studio.core.safe.esc_md; HTML escapes the whole)."""
    cites = f" (cites memory facts {', '.join(map(str, e.cited))})" if e.cited else ""
    if e.rejected:
        return Verdict("caught", f"Reasoner hallucination caught — the model said answerable: {esc(e.answer)}{cites}, "
                                 f"but {esc(e.rejected)}. The loop goes on.")
    if not e.answerable:
        return Verdict("open", f"Not answerable yet — {esc(e.reason)}")
    said = f"Answerable — the reasoner's answer: {esc(e.answer)}{cites}. The loop stops here."
    if not gold_answers:
        return Verdict("unchecked", said + " A verdict is the model's claim, not a check; the run's answer is the QA "
                                           "step's, at the end.")
    if measures.exact_match(e.answer, gold_answers):
        return Verdict("agrees", said + " Its answer is the gold one.")
    gold = esc(" / ".join(gold_answers[:3]))
    return Verdict("contradicts", said + f" Its answer is not the gold one ({gold}): the loop ends on a verdict "
                                         "nothing in the run supports.")


def gold_entry(rankings: Mapping[str, Sequence[PassageView]], gold: Mapping[int, str]) -> list[dict[str, Any]]:
    """Where each gold passage entered each method's ranking (rank, or None when absent)."""
    rows = []
    for pid, title in gold.items():
        row: dict[str, Any] = {"gold passage": title}
        for method, ranked in rankings.items():
            ids = [p.id for p in ranked]
            row[method] = ids.index(pid) + 1 if pid in ids else None
        rows.append(row)
    return rows


GOLD_MARK = "★ "


def side_by_side(rankings: Mapping[str, Sequence[PassageView]], k: int) -> list[dict[str, Any]]:
    """Row n holds every method's n-th passage title (gold ones marked with GOLD_MARK), so k ranks of several
    methods read across one table instead of several narrow ones. A title that several different passages shown
    share (paragraphs of one article) is followed by the start of each one's text, so they can be told apart."""
    ids: dict[str, set[int]] = {}
    for ranked in rankings.values():
        for p in ranked[:k]:
            ids.setdefault(p.title, set()).add(p.id)

    def name(p: PassageView) -> str:
        shared = len(ids[p.title]) > 1
        return (GOLD_MARK if p.gold else "") + p.title + (f" — {short(p.text, SNIPPET)}" if shared else "")

    rows = []
    for n in range(k):
        row: dict[str, Any] = {"rank": n + 1}
        for method, ranked in rankings.items():
            row[method] = name(ranked[n]) if n < len(ranked) else ""
        rows.append(row)
    return rows


SNIPPET = 48  # characters of a passage's text that tell it from another of the same title


def recall_at(ranked: Sequence[PassageView], gold: Iterable[int], k: int) -> float | None:
    """R@k of a list of passage views (gear.measures.recall_at), None when the gold passages are unknown."""
    gold = list(gold)
    return measures.recall_at([p.id for p in ranked], gold, k) if gold else None


# -- plotly figures of one run -----------------------------------------------------------------------------------------
_LAYOUT = {"template": "plotly_white", "font": {"size": 15, "family": FONT}, "margin": {"l": 50, "r": 20, "t": 50,
                                                                                         "b": 50},
           "legend": {"orientation": "h", "y": -0.2}}


def tokens_figure(trace: Trace) -> go.Figure:
    """Prompt and completion tokens per iteration and LLM step (the paper's efficiency claim, per run), as the run's
    cost counts them (Trace.cost): a request the run repeated was paid for once, so its repeats stand at 0 and the bars
    add up to the cost shown beside them."""
    calls = trace.of(LLMCalled)
    paid = {id(c) for c in trace.paid_calls()}
    names = [f"it{c.iteration} {c.step}" for c in calls]
    hover = ["" if id(c) in paid else "a repeat of an earlier request: paid for once" for c in calls]
    fig = go.Figure([go.Bar(name="prompt tokens", x=names, y=[c.prompt_tokens if id(c) in paid else 0 for c in calls],
                            hovertext=hover, marker_color="#4dabf7"),
                     go.Bar(name="completion tokens", x=names,
                            y=[c.completion_tokens if id(c) in paid else 0 for c in calls], hovertext=hover,
                            marker_color="#f76707")])
    title = "LLM tokens per step"
    if len(paid) < len(calls):
        repeats = len(calls) - len(paid)
        title += f"<br><sup>{trace.cost().tokens:,d} in all: {repeats:d} repeated requests paid once</sup>"
    fig.update_layout(barmode="stack", title=title, yaxis_title="tokens", **STEP_LAYOUT)
    fig.update_xaxes(automargin=True, tickangle=-45)  # a run of 4 iterations has 17 steps: slanted, and room made
    return fig


# a chart with one bar per step: the legend above the plot, so the slanted step names below it have the room
STEP_LAYOUT = {**_LAYOUT, "legend": {"orientation": "h", "yanchor": "bottom", "y": 1.0, "x": 0},
               "margin": {"l": 50, "r": 20, "t": 80, "b": 20}}


def time_figure(trace: Trace) -> go.Figure:
    """Milliseconds per stage and iteration."""
    stages = trace.of(StageTimed)
    iterations = sorted({s.iteration for s in stages})
    fig = go.Figure()
    for name in dict.fromkeys(s.stage for s in stages):
        fig.add_bar(name=name, x=[f"iteration {i}" for i in iterations],
                    y=[sum(s.ms for s in stages if s.stage == name and s.iteration == i) for i in iterations])
    fig.update_layout(barmode="stack", title="Time per step (ms)", yaxis_title="ms", **_LAYOUT)
    return fig


# -- plotly figures of evaluation reports (EvalReport.to_dict() form) --------------------------------------------------
def report_label(report: Mapping[str, Any]) -> str:
    """"Hybrid GeAR", "Dense + PPR": the retriever and the method's report name (gear.methods)."""
    return methods.run_label(str(report.get("method", "")), str(report.get("retriever", "")))


def report_labels(reports: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each report's label, told apart where two share one (a figure's legend showed "Hybrid + NaiveGE" twice for
    the same method under the two protocols): by the protocol, then the index, then a number."""
    labels = [esc_html(r.get("label") or report_label(r)) for r in reports]
    for part in (lambda r: "one run per cut-off" if runs_per_cutoff(str(r.get("method", "")), protocol_of(r))
                 else "one run",
                 lambda r: esc_html(r.get("index") or (r.get("index_info") or {}).get("name") or "")):
        clash = {x for x in labels if labels.count(x) > 1}
        extra = [part(r) for r in reports]
        labels = [f"{x} ({e})" if x in clash and e and len({extra[i] for i, y in enumerate(labels) if y == x}) > 1
                  else x for x, e in zip(labels, extra, strict=True)]
    seen: dict[str, int] = {}
    out = []
    for x in labels:
        seen[x] = seen.get(x, 0) + 1
        out.append(x if labels.count(x) == 1 else f"{x} #{seen[x]}")
    return out


def recall_by_method_figure(reports: Sequence[Mapping[str, Any]]) -> go.Figure:
    fig = go.Figure()
    for r, label in zip(reports, report_labels(reports), strict=True):
        ks = list(r.get("recall", {}))
        fig.add_bar(name=label, x=[f"R@{k}" for k in ks], y=[r["recall"][k] for k in ks],
                    text=[f"{r['recall'][k]:.1f}" for k in ks], textposition="outside")
    fig.update_layout(barmode="group", title="Recall@k by method", yaxis_title="recall (%)",
                      yaxis_range=[0, 105], **_LAYOUT)
    return fig


def recall_per_iteration_figure(reports: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Paper Fig. 3 form: recall of the cumulative list after each iteration, one line per k."""
    fig = go.Figure()
    for r, label in zip(reports, report_labels(reports), strict=True):
        per = r.get("recall_per_iteration") or {}
        if not per:
            continue
        its = sorted(per, key=int)
        for k in next(iter(per.values())):
            fig.add_scatter(name=f"{label} R@{k}", x=[int(i) for i in its], y=[per[i][k] for i in its],
                            mode="lines+markers")
    fig.update_layout(title="Recall after each iteration", xaxis_title="iteration", yaxis_title="recall (%)",
                      xaxis_dtick=1, **_LAYOUT)
    return fig


def recall_by_hop_figure(reports: Sequence[Mapping[str, Any]], k: str | None = None) -> go.Figure:
    fig = go.Figure()
    for r, label in zip(reports, report_labels(reports), strict=True):
        hops = r.get("by_hop") or {}
        if not hops:
            continue
        kk = k or (list(r.get("recall", {}))[-1] if r.get("recall") else None)
        if kk is None:
            continue
        names = list(hops)
        fig.add_bar(name=f"{label} R@{kk}", x=[f"{h} (n={hops[h]['n']})" for h in names],
                    y=[hops[h]["recall"].get(kk, 0.0) for h in names])
    fig.update_layout(barmode="group", title="Recall by hop type", yaxis_title="recall (%)", yaxis_range=[0, 105],
                      **_LAYOUT)
    return fig


def tokens_per_question_figure(reports: Sequence[Mapping[str, Any]]) -> go.Figure:
    fig = go.Figure()
    for r, label in zip(reports, report_labels(reports), strict=True):
        rows = r.get("per_question") or []
        totals = [q.get("prompt_tokens", 0) + q.get("completion_tokens", 0) for q in rows]
        if any(totals):
            fig.add_box(name=label, y=totals, boxpoints="all", jitter=0.3)
    fig.update_layout(title="LLM tokens per question", yaxis_title="tokens", **_LAYOUT)
    return fig


# -- index statistics --------------------------------------------------------------------------------------------------
def density_figure(counts: Sequence[int]) -> go.Figure:
    """Histogram of triples per passage (triple density ρ_t)."""
    counts = [int(c) for c in counts]
    fig = go.Figure(go.Histogram(x=counts, xbins={"start": -0.5, "end": max(counts, default=0) + 0.5, "size": 1},
                                 marker_color="#1971c2"))
    mean = sum(counts) / len(counts) if counts else 0.0
    fig.update_layout(title=f"Triples per passage (mean {mean:.1f})", xaxis_title="triples in a passage",
                      yaxis_title="passages", bargap=0.05, xaxis_dtick=1 if max(counts, default=0) <= 30 else None,
                      yaxis_rangemode="tozero", **_LAYOUT)
    peak = max(Counter(counts).values(), default=0)
    if peak <= 10:
        fig.update_yaxes(dtick=1)
    return fig


def degree_figure(top: Sequence[tuple[str, int]]) -> go.Figure:
    fig = go.Figure(go.Bar(x=[d for _, d in top][::-1], y=[esc_html(short(n, 40)) for n, _ in top][::-1],
                           orientation="h",
                           marker_color="#7b2cbf"))
    fig.update_layout(title="Top entities by degree (triples touching them)", xaxis_title="triples",
                      height=max(320, 26 * len(top) + 100), **_LAYOUT)
    return fig


def category_figure(counts: Mapping[str, int]) -> go.Figure:
    names = list(counts)
    fig = go.Figure(go.Bar(x=names, y=[counts[n] for n in names], marker_color="#e8590c",
                           text=[counts[n] for n in names], textposition="outside"))
    fig.update_layout(title="Tagged failures by error category", yaxis_title="traces", **_LAYOUT)
    return fig


def finite(x: float) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)
