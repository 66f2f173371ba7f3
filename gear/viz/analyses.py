"""Pictures of the paper's analyses beyond Table 1: a sweep's grid as a heatmap (gear.eval.sweep; the paper's table
of max iterations × beam length), R@k across iterations with the single-step line (Figures 4 and 6) and the tokens
spent across iterations (Figure 5) (gear.eval.iterations). Imports no Streamlit; the app and
scripts/paper_figures.py draw the same figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gear.eval.iterations import IterationCurves
from gear.eval.sweep import CellRecord, Sweep
from gear.viz.graph import FONT, esc_html

_LAYOUT: dict[str, Any] = {"font": {"family": FONT, "size": 13}, "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
                           "legend": {"orientation": "h", "y": -0.2}}
COLOURS = ["#1c7ed6", "#e8590c", "#2f9e44", "#862e9c", "#c92a2a", "#0c8599"]
SIGNIFICANT = 0.05  # a cell's difference from the baseline is starred below this sign-test p


def measures(sweep: Sweep) -> list[str]:
    """What a sweep's heatmap can show: R@k for each cut-off, EM and F1 when the cells answered, tokens and seconds
    per question."""
    out = [f"R@{k}" for k in sweep.ks]
    if any(c.em is not None for c in sweep.cells):
        out += ["EM", "F1"]
    return [*out, "tokens/question", "seconds/question"]


def cell_value(cell: CellRecord, measure: str) -> float | None:
    if measure.startswith("R@"):
        return cell.recall.get(measure[2:])
    return {"EM": cell.em, "F1": cell.f1, "tokens/question": cell.tokens_per_question,
            "seconds/question": cell.seconds_per_question}.get(measure)


def sweep_heatmap(sweep: Sweep, measure: str, rows: str, columns: str | None = None,
                  fixed: Mapping[str, Any] | None = None) -> go.Figure:
    """The grid of one measure: `rows` × `columns` (two swept settings; one row when there is one), the other swept
    settings held at `fixed` (default: the baseline's). Each cell shows its value and, against the baseline, the
    difference with * when the sign test's p < 0.05 (R@k, EM, F1)."""
    baseline = sweep.cell(sweep.baseline)
    held = {a.name: (fixed or {}).get(a.name, baseline.values.get(a.name) if baseline else a.values[0])
            for a in sweep.axes if a.name not in (rows, columns)}
    axis = {a.name: a.values for a in sweep.axes}
    row_values = axis[rows]
    column_values = axis[columns] if columns else [None]
    z: list[list[float | None]] = []
    text: list[list[str]] = []
    for rv in row_values:
        z_row, text_row = [], []
        for cv in column_values:
            wanted = {rows: rv, **({columns: cv} if columns else {}), **held}
            cell = next((c for c in sweep.cells if all(c.values.get(k) == v for k, v in wanted.items())), None)
            value = cell_value(cell, measure) if cell else None
            z_row.append(value)
            text_row.append(_cell_text(cell, measure, value, cell is not None and cell.name == sweep.baseline))
        z.append(z_row)
        text.append(text_row)
    fig = go.Figure(go.Heatmap(
        z=z, x=[esc_html(str(v)) for v in column_values] if columns else [esc_html(measure)],
        y=[esc_html(str(v)) for v in row_values], text=text, texttemplate="%{text}", colorscale="Blues",
        colorbar={"title": {"text": esc_html(measure)}}, hoverongaps=False,
        hovertemplate=f"{esc_html(rows)} %{{y}}" + (f", {esc_html(columns)} %{{x}}" if columns else "")
                      + "<br>%{text}<extra></extra>"))
    held_text = ", ".join(f"{esc_html(k)} = {esc_html(str(v))}" for k, v in held.items())
    fig.update_layout(title=f"{esc_html(measure)} by {esc_html(rows)}" + (f" × {esc_html(columns)}" if columns else "")
                      + f" ({len(sweep.questions)} question{'' if len(sweep.questions) == 1 else 's'}"
                      + (f"; {held_text}" if held_text else "") + ")",
                      xaxis_title=esc_html(columns) if columns else "", yaxis_title=esc_html(rows),
                      xaxis={"type": "category"}, yaxis={"type": "category", "autorange": "reversed"}, **_LAYOUT)
    return fig


def _cell_text(cell: CellRecord | None, measure: str, value: float | None, is_baseline: bool) -> str:
    if cell is None or value is None:
        return "—"
    digits = 0 if measure == "tokens/question" else 1
    if is_baseline:
        return f"<b>{value:.{digits}f}</b><br>baseline"
    paired = next((m for m in cell.paired if m.name == measure), None)
    if paired is None:
        return f"{value:.{digits}f}"
    significant = paired.p_sign is not None and paired.p_sign < SIGNIFICANT
    return (f"{value:.{digits}f}<br>{paired.difference:+.1f}" + ("*" if significant else "")
            + f" ({int(paired.better):d}↑ {int(paired.worse):d}↓)")


def iteration_recall_figure(curves: Sequence[IterationCurves], k: int = 15,
                            references: Sequence[tuple[str, float]] = (), title: str = "") -> go.Figure:
    """R@k after each iteration, one line per method (a terminated question carries its recall forward), and a
    horizontal line for each single-step reference (the paper: Hybrid + SyncGE)."""
    fig = go.Figure()
    depth = max((len(c.recall) for c in curves), default=1)
    for n, c in enumerate(curves):
        fig.add_scatter(name=esc_html(c.label), x=list(range(1, len(c.recall) + 1)),
                        y=[r[str(k)] for r in c.recall], mode="lines+markers",
                        line={"color": COLOURS[n % len(COLOURS)]},
                        customdata=c.running, hovertemplate="iteration %{x}: %{y:.1f}<br>%{customdata} runs still "
                                                            "going<extra></extra>")
    for n, (label, value) in enumerate(references):
        fig.add_scatter(name=esc_html(label), x=[1, depth], y=[value, value], mode="lines",
                        line={"dash": "dash", "color": "#495057" if n == 0 else COLOURS[-1 - n]})
    fig.update_layout(title=esc_html(title or f"R@{k} across iterations"), xaxis_title="iteration",
                      yaxis_title=f"R@{k} (%)", xaxis_dtick=1 if depth <= 10 else 2, **_LAYOUT)
    return fig


def iteration_tokens_figure(curves: Sequence[IterationCurves], single_step: Sequence[tuple[str, int, int]] = (),
                            title: str = "") -> go.Figure:
    """Input tokens (left) and output tokens (right) spent by the end of each iteration, all questions together (the
    answers' QA calls left out), one line per method; a single-step method is one point left of iteration 1 (the
    paper's Figure 5: Hybrid + SyncGE)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("input tokens", "output tokens"), horizontal_spacing=0.12)
    for n, c in enumerate(curves):
        its = list(range(1, len(c.prompt_tokens) + 1))
        for col, values in ((1, c.prompt_tokens), (2, c.completion_tokens)):
            fig.add_scatter(name=esc_html(c.label), x=its, y=values, mode="lines+markers", showlegend=col == 1,
                            legendgroup=esc_html(c.label), line={"color": COLOURS[n % len(COLOURS)]}, row=1, col=col)
    for n, (label, prompt, completion) in enumerate(single_step):
        colour = COLOURS[(len(curves) + n) % len(COLOURS)]
        for col, value in ((1, prompt), (2, completion)):
            fig.add_scatter(name=esc_html(label), x=[0.5], y=[value], mode="markers", showlegend=col == 1,
                            legendgroup=esc_html(label), marker={"symbol": "diamond", "size": 11, "color": colour},
                            row=1, col=col)
    fig.update_xaxes(title_text="iteration", dtick=1, range=[0.2, max((len(c.prompt_tokens) for c in curves),
                                                                      default=1) + 0.3])
    fig.update_yaxes(rangemode="tozero")
    fig.update_layout(title=esc_html(title or "LLM tokens spent by the end of each iteration"), **_LAYOUT)
    return fig
