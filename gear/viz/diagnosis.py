"""Pictures of diagnoses (gear.diagnosis), for the app's views and the docs: the funnel of gold passages through
the stages, where they were lost, the proposed categories (plotly), and the rows of a gold passage × stage table.
Imports no Streamlit. Each figure takes a Summary or its to_dict() form (what an evaluation report keeps)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from gear.diagnosis import (
    CATEGORIES,
    CATEGORY_LABELS,
    FOUND,
    RUN_LEVEL,
    Diagnosis,
    GoldPassage,
    StageMark,
    Summary,
    stage_label,
)
from gear.diagnosis.model import FOUND_STATUS, LOST_STATUS, OPEN_STATUS
from gear.diagnosis.summary import UNDETERMINED
from gear.viz.graph import FONT, esc_html

_LAYOUT = {"template": "plotly_white", "font": {"size": 15, "family": FONT},
           "margin": {"l": 50, "r": 20, "t": 50, "b": 50}, "legend": {"orientation": "h", "y": -0.2}}
GOLD_ROW = "gold passages"  # the funnel's top: every gold passage of the run's questions
ZERO = "zero"  # the name of the words written on a funnel's empty stage
NOT_A_CHAIN = "<br>(not a chain: each stage by any route)"  # under the title of a run drawn as bars
RUN_COLOURS = ["#1c7ed6", "#f76707", "#2f9e44", "#ae3ec9", "#e03131", "#0c8599", "#5c940d", "#868e96"]
SummaryLike = Summary | Mapping[str, Mapping[str, Any]]


def _runs(summary: SummaryLike) -> dict[str, Mapping[str, Any]]:
    return summary.to_dict() if isinstance(summary, Summary) else dict(summary)


def reach_text(n: int, gold: int) -> str:
    """A bar's words: the gold passages that reached the stage and their share of all ("0 · 0 %" for none)."""
    return f"{n} · {round(100 * n / gold) if gold else 0} %"


def is_chain(run: Mapping[str, Any]) -> bool:
    """Whether a run's counts are a funnel: its summary says every gold passage reached a first run of the stages
    (`chain`; a summary saved before it said so: whether the counts never increase downwards)."""
    counts = [run["gold"], *(run["funnel"].get(s, 0) for s in run["stages"])]
    monotone = all(a >= b for a, b in pairwise(counts))
    return bool(run.get("chain", True)) and monotone


def funnel_figure(summary: SummaryLike) -> go.Figure:
    """Gold passages reaching each stage of each run, in pipeline order, side by side (two to a row), each with its
    method's own stages (one shared axis would interleave the families' stages into nonsense). A run whose stages are
    a chain (base only, IRCoT; every passage reached a first run of them) is drawn as a funnel, never widening
    downwards; where the graph reaches passages an earlier stage missed (GeAR, SyncGE, NaiveGE, PPR) the counts are
    no funnel, and are drawn as what they are: a bar per stage. A stage no gold passage reached says "0 · 0 %"."""
    runs = _runs(summary)
    cols = 1 if len(runs) <= 1 else 2
    rows = max(1, math.ceil(len(runs) / cols))
    tallest = max((len(run["stages"]) for run in runs.values()), default=1) + 1  # + the gold passages' bar
    plot = rows * 32 * tallest + (rows - 1) * 70  # 32 px a bar (its text stays legible), 70 px between rows
    titles = [esc_html(name) + ("" if is_chain(run) else NOT_A_CHAIN) for name, run in runs.items()]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=titles,
                        horizontal_spacing=0.22, vertical_spacing=70 / plot if rows > 1 else 0.0)
    for n, (name, run) in enumerate(runs.items()):
        stages = list(run["stages"])
        # the run's gold passages on top: each stage's share is of them all (not of the base list, which the graph
        # stages can exceed)
        labels = [GOLD_ROW, *(stage_label(s, run["k"]) for s in stages)]
        counts = [run["gold"], *(run["funnel"].get(s, 0) for s in stages)]
        text = [reach_text(c, run["gold"]) for c in counts]
        colour = RUN_COLOURS[n % len(RUN_COLOURS)]
        where = {"row": n // cols + 1, "col": n % cols + 1}
        if is_chain(run):
            fig.add_trace(go.Funnel(name=esc_html(name), y=labels, x=counts, text=text, texttemplate="%{text}",
                                    textposition="auto", insidetextanchor="middle", cliponaxis=False,
                                    textfont={"size": 13}, marker_color=colour, connector={"fillcolor": "#f1f3f5"}),
                          **where)
            for label, count in zip(labels, counts, strict=True):  # a funnel draws no words on a bar of width 0
                if count == 0:
                    fig.add_annotation(name=ZERO, x=0, y=label, text=reach_text(0, run["gold"]), showarrow=False,
                                       font={"size": 13}, **where)
        else:
            fig.add_trace(go.Bar(name=esc_html(name), y=labels, x=counts, orientation="h", text=text,
                                 textposition="outside", cliponaxis=False, textfont={"size": 13},
                                 marker_color=colour), **where)
            fig.update_yaxes(autorange="reversed", **where)  # pipeline order from the top, as a funnel reads
            fig.update_xaxes(range=[0, max(1, run["gold"]) * 1.35], showticklabels=False, **where)
    fig.update_layout(**{**_LAYOUT, "margin": {"l": 80, "r": 20, "t": 80, "b": 30}},
                      title="Gold passages reaching each stage (share of all gold passages)", showlegend=False,
                      height=plot + 110)
    fig.update_annotations(font_size=14)
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
    """Questions per proposed error category, grouped by run (the paper's six, the answer step, the rewriter, the final
    ranking, then "no error" and undetermined)."""
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


# -- the gold passage × stage table of one run (the app's "Gold passages" panel) -----------------------------------
LOST_CELL, DROPPED_CELL, FOUND_CELL, OPEN_CELL = "lost", "dropped", "found", "open"  # how a cell is highlighted
PASSAGE_COLUMN, LOST_COLUMN = "gold passage", "lost at"


@dataclass(frozen=True)
class StageTable:
    """A row per gold passage, a column per stage of the run's method; `marks[n]` names the cells of row n to
    highlight (column → LOST_CELL, DROPPED_CELL, FOUND_CELL or OPEN_CELL). Titles are passage text: escape them where
    they become markup."""

    columns: list[str]
    rows: list[dict[str, str]]
    marks: list[dict[str, str]]
    per_iteration: list[str]  # the stage columns a run of several iterations has once per iteration
    iteration: int | None     # the iteration shown in those columns; None: the best any iteration achieved


def short_mark(mark: StageMark | None) -> str:
    """One result in a few characters: ✓3 (rank 3), ✓h2 (a beam reached it at hop 2), ✓, ✗, or · when the stage
    did not run."""
    if mark is None:
        return "·"
    if not mark.reached:
        return "✗"
    if mark.hop is not None:
        return f"✓h{mark.hop}"
    return f"✓{mark.rank}" if mark.rank is not None and mark.stage not in ("read", "gist") else "✓"


def stage_table(d: Diagnosis, iteration: int | None = None) -> StageTable:
    """The Ask panel's table, narrow enough for a laptop screen: in the stages a run has once per iteration, the
    cells show one iteration (`iteration`) or, by default, the best any iteration achieved (GeAR's base list: ✓3 when
    some iteration's list held the passage at rank 3); a once-per-run stage (passageLink, final ranking) has its one
    result. The stage a passage was lost at is marked, the one it left the run at too when that is later, and the
    final@k cell of a passage found; the last column says both ("base → final@5")."""
    per_iteration = [s for s in d.stages
                     if any(m.iteration != RUN_LEVEL for p in d.passages for m in p.marks if m.stage == s)]
    columns = [PASSAGE_COLUMN, *(stage_label(s, d.k) for s in d.stages), LOST_COLUMN]
    rows, marks = [], []
    for p in d.passages:
        row = {PASSAGE_COLUMN: p.title}
        for stage in d.stages:
            label = stage_label(stage, d.k)
            if stage in per_iteration and iteration is not None:
                row[label] = short_mark(next((m for m in p.marks if m.stage == stage and m.iteration == iteration),
                                             None))
            else:
                row[label] = short_mark(p.best(stage))
        marked: dict[str, str] = {}
        if p.status == FOUND_STATUS:
            marked[stage_label(FOUND, d.k)] = FOUND_CELL
        elif p.lost_at:
            marked[stage_label(p.lost_at, d.k)] = OPEN_CELL if p.status == OPEN_STATUS else LOST_CELL
            if _dropped_later(p):
                marked.setdefault(stage_label(p.dropped_at or "", d.k), DROPPED_CELL)
        where = _where(p, d.k)
        row[LOST_COLUMN] = f"{where} → {stage_label(p.dropped_at or '', d.k)}" if _dropped_later(p) else where
        rows.append(row)
        marks.append(marked)
    return StageTable(columns, rows, marks, [stage_label(s, d.k) for s in per_iteration], iteration)


def _dropped_later(p: GoldPassage) -> bool:
    """A lost passage that reached stages after the one it was lost at and left the run later (a run cut short has
    not let its open passages go yet)."""
    return p.status == LOST_STATUS and p.dropped_at is not None and p.dropped_at != p.lost_at


def _where(p: GoldPassage, k: int) -> str:
    if p.status == FOUND_STATUS:
        return "found"
    if p.lost_at is None:
        return "open" if p.status == OPEN_STATUS else "—"
    label = stage_label(p.lost_at, k)
    return f"open ({label})" if p.status == OPEN_STATUS else label


def outcome(d: Diagnosis, pid: int) -> str:
    """What became of one gold passage in one run, in a few characters: "✓ rank 2" (found), "✗ base → final@5"
    (lost at base, left the run at final@5), "✗ base" (never reached a stage after it), "… read" for a run cut short
    before it got there; "" when the run did not have it as gold."""
    p = next((p for p in d.passages if p.id == pid), None)
    if p is None:
        return ""
    if p.status == FOUND_STATUS:
        best = p.best(FOUND)
        return f"✓ rank {best.rank}" if best is not None and best.rank is not None else "✓"
    if p.status == OPEN_STATUS:
        return f"… {stage_label(p.lost_at, d.k)}" if p.lost_at else "…"
    where = stage_label(p.lost_at, d.k) if p.lost_at else "—"
    return f"✗ {where}" + (f" → {stage_label(p.dropped_at or '', d.k)}" if _dropped_later(p) else "")


OUTCOME_LEGEND = ("✓ rank r: found, at rank r of the final ranking · ✗ A → B: lost at A (the first stage it never "
                  "reached), left the run at B · … A: the run was cut short before A")


def side_by_side_rows(diagnoses: Mapping[str, Diagnosis]) -> list[dict[str, str]]:
    """One row per gold passage of any of the runs (one question, several methods), one column per run: what became
    of the passage in that run (`outcome`); then a row with each run's proposed category."""
    titles: dict[int, str] = {}
    for d in diagnoses.values():
        for p in d.passages:
            if p.id not in titles or titles[p.id].startswith("passage #"):
                titles[p.id] = p.title
    rows = [{PASSAGE_COLUMN: title, **{name: outcome(d, pid) for name, d in diagnoses.items()}}
            for pid, title in titles.items()]
    rows.append({PASSAGE_COLUMN: "proposed category",
                 **{name: category_label(d) for name, d in diagnoses.items()}})
    return rows


def category_label(d: Diagnosis) -> str:
    """The proposed category in the paper's words ("—" when there was nothing to judge)."""
    return CATEGORY_LABELS.get(d.category, d.category) if d.category else "—"
