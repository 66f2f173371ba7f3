"""Pictures of diagnoses (gear.eval.diagnosis), for the app's views and the docs: the funnel of gold passages through
the stages, where they were lost, the proposed categories (plotly), and the rows of a gold passage × stage table.
Imports no Streamlit. Each figure takes a Summary or its to_dict() form (what an evaluation report keeps)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from gear.eval.diagnosis import (
    CATEGORIES,
    CATEGORY_LABELS,
    RUN_LEVEL,
    Diagnosis,
    StageMark,
    Summary,
    cell,
    stage_label,
)
from gear.eval.diagnosis.summary import UNDETERMINED
from gear.viz.graph import FONT, esc_html

_LAYOUT = {"template": "plotly_white", "font": {"size": 15, "family": FONT},
           "margin": {"l": 50, "r": 20, "t": 50, "b": 50}, "legend": {"orientation": "h", "y": -0.2}}
RUN_COLOURS = ["#1c7ed6", "#f76707", "#2f9e44", "#ae3ec9", "#e03131", "#0c8599", "#5c940d", "#868e96"]
SummaryLike = Summary | Mapping[str, Mapping[str, Any]]


def _runs(summary: SummaryLike) -> dict[str, Mapping[str, Any]]:
    return summary.to_dict() if isinstance(summary, Summary) else dict(summary)


def funnel_figure(summary: SummaryLike) -> go.Figure:
    """Gold passages reaching each stage of each run (a funnel per run; the stages are the run's own)."""
    fig = go.Figure()
    for n, (name, run) in enumerate(_runs(summary).items()):
        stages = list(run["stages"])
        fig.add_trace(go.Funnel(name=esc_html(name), y=[stage_label(s, run["k"]) for s in stages],
                                x=[run["funnel"].get(s, 0) for s in stages], textinfo="value+percent initial",
                                marker_color=RUN_COLOURS[n % len(RUN_COLOURS)]))
    fig.update_layout(title="Gold passages reaching each stage", funnelmode="group", **_LAYOUT)
    return fig


def lost_at_figure(summary: SummaryLike, key: str = "lost_at") -> go.Figure:
    """Gold passages lost at each stage ("lost_at": the first stage missed; "dropped_at": where they left the run),
    grouped by run."""
    runs = _runs(summary)
    order: list[str] = []
    for run in runs.values():
        order.extend(stage_label(s, run["k"]) for s in run["stages"] if stage_label(s, run["k"]) not in order)
    fig = go.Figure()
    for n, (name, run) in enumerate(runs.items()):
        counts = {stage_label(s, run["k"]): c for s, c in run[key].items()}
        fig.add_bar(name=esc_html(name), x=order, y=[counts.get(s, 0) for s in order],
                    marker_color=RUN_COLOURS[n % len(RUN_COLOURS)])
    what = "first stage missed" if key == "lost_at" else "stage where they left the run"
    fig.update_layout(barmode="group", title=f"Gold passages lost, by {what}", yaxis_title="gold passages",
                      **_LAYOUT)
    return fig


def diagnosis_category_figure(summary: SummaryLike) -> go.Figure:
    """Questions per proposed error category, grouped by run (the paper's categories, then "no error")."""
    runs = _runs(summary)
    names = [c for c in (*CATEGORIES, UNDETERMINED) if any(r["categories"].get(c) for r in runs.values())]
    fig = go.Figure()
    for n, (name, run) in enumerate(runs.items()):
        fig.add_bar(name=esc_html(name), x=[CATEGORY_LABELS.get(c, c) for c in names],
                    y=[run["categories"].get(c, 0) for c in names], text=[run["categories"].get(c, 0) for c in names],
                    textposition="outside", marker_color=RUN_COLOURS[n % len(RUN_COLOURS)])
    fig.update_layout(barmode="group", title="Proposed error category per question", yaxis_title="questions",
                      **_LAYOUT)
    return fig


def stage_rows(d: Diagnosis, per_iteration: bool = False) -> list[dict[str, Any]]:
    """A row per gold passage, a column per stage (or per stage and iteration): ✓ with rank/hop, ✗, or · (never
    ran), then where it was lost. Titles are passage text: escape them where they become markup."""
    rows = []
    for p in d.passages:
        row: dict[str, Any] = {"gold passage": p.title}
        for stage in d.stages:
            label = stage_label(stage, d.k)
            iterations = sorted({m.iteration for m in p.marks if m.stage == stage})
            if per_iteration and iterations and iterations != [RUN_LEVEL] and len(d.iterations) > 1:
                for it in iterations:
                    mark = next(m for m in p.marks if m.stage == stage and m.iteration == it)
                    row[f"{label} it{it}"] = _mark(mark)
            else:
                row[label] = cell(p, stage)
        row["lost at"] = "found" if p.status == "found" else stage_label(p.lost_at, d.k) if p.lost_at else "—"
        row["dropped at"] = stage_label(p.dropped_at, d.k) if p.dropped_at else ""
        rows.append(row)
    return rows


def _mark(mark: StageMark) -> str:
    if not mark.reached:
        return "✗"
    if mark.hop is not None:
        return f"✓ hop {mark.hop}"
    return f"✓ {mark.rank}" if mark.rank is not None and mark.stage not in ("read", "gist") else "✓"
