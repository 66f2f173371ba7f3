"""Pictures of two evaluations lined up (gear.eval.pairing): where each gold passage ended in A against where it ended
in B, and the proposed categories A → B, as plotly Sankey diagrams whose bands carry the questions they hold.
Imports no Streamlit. Streamlit's plotly selection events do not fire on Sankey links (streamlit/streamlit#8933, open
on 1.67), so the app picks a band with `band_choices` beside the figure; the figure's hover names the questions."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from gear.diagnosis import CATEGORY_LABELS
from gear.eval.pairing import FOUND_END, NO_CATEGORY, OPEN_END, UNKNOWN_END, Band
from gear.viz.graph import FONT, esc_html

FOUND_COLOUR, OPEN_COLOUR, UNKNOWN_COLOUR = "#2f9e44", "#fab005", "#adb5bd"
LOST_COLOURS = ["#e8590c", "#f76707", "#fd7e14", "#d9480f", "#c92a2a", "#e03131", "#f03e3e", "#a61e4d", "#862e9c"]
GAINED_BAND, LOST_BAND, SAME_BAND = "rgba(47,158,68,0.45)", "rgba(224,49,49,0.45)", "rgba(134,142,150,0.30)"
CATEGORY_COLOURS = {"none": FOUND_COLOUR, "base_retriever": "#1c7ed6", "extraction": "#ae3ec9", "graph": "#0c8599",
                    "reader": "#e8590c", "reasoner": "#e03131", "dataset": "#868e96", NO_CATEGORY: UNKNOWN_COLOUR}
HOVER_IDS = 6  # question ids named in a band's hover before "…"


def end_words(end: str) -> str:
    """An ending as a node says it: "found", "lost at base", "ranked past 5" (final@5), "cut short", "unknown"."""
    if end == FOUND_END:
        return "found"
    if end == OPEN_END:
        return "run cut short"
    if end == UNKNOWN_END:
        return "unknown (no diagnosis)"
    if end.startswith("final@"):
        return f"ranked past {end.split('@', 1)[1]}"
    if end == "final":
        return "not in the final ranking"
    return f"lost at {end}"


def category_words(category: str) -> str:
    return CATEGORY_LABELS.get(category, category)


def band_words(band: Band, unit: str, categories: bool = False) -> str:
    """One line naming a band: "found → lost at beam: 12 gold passages, 9 questions"."""
    say = category_words if categories else end_words
    n = len(band.questions)
    count = f"{band.count} {unit}{'s' if band.count != 1 else ''}"
    held = "" if categories else f", {n} question{'s' if n != 1 else ''}"
    return f"{say(band.source)} → {say(band.target)}: {count}{held}"


def band_choices(bands: Sequence[Band], unit: str, categories: bool = False) -> dict[str, Band]:
    """The bands a picker offers, by their words, changed ones (source ≠ target) first."""
    ordered = sorted(bands, key=lambda b: (b.source == b.target, -b.count))
    return {band_words(b, unit, categories=categories): b for b in ordered}


def _node_colour(name: str, categories: bool, lost: dict[str, str]) -> str:
    if categories:
        return CATEGORY_COLOURS.get(name, UNKNOWN_COLOUR)
    if name == FOUND_END:
        return FOUND_COLOUR
    if name == OPEN_END:
        return OPEN_COLOUR
    if name == UNKNOWN_END:
        return UNKNOWN_COLOUR
    return lost.setdefault(name, LOST_COLOURS[len(lost) % len(LOST_COLOURS)])


def flow_figure(bands: Sequence[Band], names: tuple[str, str], unit: str = "gold passage",
                categories: bool = False, title: str | None = None) -> go.Figure:
    """A Sankey: A's endings (or categories) on the left, B's on the right, a band per pair holding its gold passages
    (or questions). Bands that B gains are green, those it loses red (passages: found in one run only), the rest grey;
    a band's hover says its count and the questions it holds. Names and ids are escaped (plotly renders HTML)."""
    say = category_words if categories else end_words
    left = list(dict.fromkeys(b.source for b in bands))
    right = list(dict.fromkeys(b.target for b in bands))
    lost: dict[str, str] = {}
    colours = {n: _node_colour(n, categories, lost) for n in (*left, *right)}
    totals_left = {n: sum(b.count for b in bands if b.source == n) for n in left}
    totals_right = {n: sum(b.count for b in bands if b.target == n) for n in right}
    labels = [f"{esc_html(names[0])}: {say(n)} ({totals_left[n]})" for n in left] + \
             [f"{esc_html(names[1])}: {say(n)} ({totals_right[n]})" for n in right]
    link_colours, hover = [], []
    for b in bands:
        if not categories and b.target == FOUND_END and b.source != FOUND_END:
            link_colours.append(GAINED_BAND)
        elif not categories and b.source == FOUND_END and b.target != FOUND_END:
            link_colours.append(LOST_BAND)
        elif categories and b.source != b.target:
            link_colours.append("rgba(28,126,214,0.35)")
        else:
            link_colours.append(SAME_BAND)
        ids = ", ".join(esc_html(q) for q in b.questions[:HOVER_IDS]) + (" …" if len(b.questions) > HOVER_IDS else "")
        hover.append(f"{esc_html(band_words(b, unit, categories=categories))}<br>{ids}")
    fig = go.Figure(go.Sankey(
        arrangement="snap",
        node={"label": labels, "color": [colours[n] for n in (*left, *right)], "pad": 14, "thickness": 16,
              "line": {"color": "#495057", "width": 0.5}},
        link={"source": [left.index(b.source) for b in bands],
              "target": [len(left) + right.index(b.target) for b in bands],
              "value": [b.count for b in bands], "color": link_colours, "customdata": hover,
              "hovertemplate": "%{customdata}<extra></extra>"},
        textfont={"size": 13, "family": FONT}))
    what = "proposed category per question" if categories else "where each gold passage ended"
    fig.update_layout(title=title or f"{what}: {esc_html(names[0])} → {esc_html(names[1])}",
                      font={"size": 13, "family": FONT}, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      height=max(320, 60 + 28 * max(len(left), len(right))))
    return fig
