"""A lesson's sub-step in teaching mode — the beam search's (Algorithm 1), tripleLink's or PPR's
(gear.viz.lesson) — drawn from gear.viz.sub_steps.view, which the handout draws too: the picture across the page (one
layout for the module's whole sequence, so no node moves between sub-steps, as tall as its labels' size needs), then
the sub-step's table as HTML (gear.viz.tables: wrapped text, two decimals, the rows the penalty moved marked), with
Algorithm 1 beside the explanation for the beam search (`algorithm`). Untrusted text reaches the page through the
escaped table and the escaped graph only."""

from __future__ import annotations

from typing import Any

import streamlit as st

from gear import events as ev
from gear import trace as t
from gear import viz
from gear.viz import beam_lesson, sub_steps
from gear.viz.lesson import LessonStep
from gear.viz.tables import TABLE_CSS, table_html
from studio.core.safe import esc_md
from studio.core.widgets import iframe

MAIN_WIDTH = viz.PICTURE_WIDTH  # px of the main column at 1280 px: what the picture's height is fitted to


def has_algorithm(step: LessonStep) -> bool:
    """Whether the step is one of Algorithm 1's (its listing goes beside the step's words)."""
    return isinstance(step.event, ev.BeamsSearched) and bool(step.lines)


def algorithm(step: LessonStep, where: Any) -> None:
    """Algorithm 1's listing with the step's lines marked, and the search's knobs, in `where` (a column)."""
    e = step.event
    if not isinstance(e, ev.BeamsSearched):
        return
    # the style and the listing in two calls: markdown ends a <style> block at its end tag and read the rest as text
    where.markdown(f"<style>{' '.join(beam_lesson.ALGORITHM_CSS.split())}</style>", unsafe_allow_html=True)
    where.markdown(beam_lesson.algorithm_html(step.lines), unsafe_allow_html=True)
    where.caption(esc_md(f"b = {e.width}, l = {e.length}, γ = {e.gamma:g}, at most {e.max_neighbours} neighbours; "
                         f"diversity {'on' if e.diversity else 'off'}."))


def draw(trace: t.Trace, step: LessonStep, key: str) -> None:
    shown = sub_steps.view(trace.events, step, viz.passage_lookup(trace))
    if shown.picture is not None:
        height = shown.picture.height(MAIN_WIDTH)
        iframe(shown.picture.html(height), height + 60)
    if shown.caption and not shown.algorithm:
        st.caption(esc_md(shown.caption))
    lesson_table(shown.rows)


def lesson_table(rows: list[dict[str, Any]]) -> None:
    """A lesson's table as the handout prints it: every column on screen, text wrapped, rows marked."""
    if not rows:
        st.caption("(none)")
        return
    st.html(f"<style>{TABLE_CSS}</style>{table_html(rows)}")
