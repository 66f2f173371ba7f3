"""A lesson's sub-step in teaching mode — the beam search's (Algorithm 1), tripleLink's or PPR's
(gear.viz.lesson) — drawn from gear.viz.sub_steps.view, which the handout draws too: the picture across the page (one
layout for the module's whole sequence, so no node moves between sub-steps), then the sub-step's table, with
Algorithm 1 beside it for the beam search. Untrusted text reaches the page through st.dataframe and the escaped graph
only."""

from __future__ import annotations

import streamlit as st

from gear import trace as t
from gear import viz
from gear.viz import beam_lesson, sub_steps
from gear.viz.lesson import LessonStep
from studio.safe import esc_md
from studio.widgets import iframe, table

GRAPH_HEIGHT = 520
MAIN_WIDTH = 820  # px of the main column at 1280 px: what the picture's height is fitted to


def draw(trace: t.Trace, step: LessonStep, key: str) -> None:
    shown = sub_steps.view(trace.events, step, viz.passage_lookup(trace))
    if shown.picture is not None:
        height = shown.picture.height(MAIN_WIDTH, GRAPH_HEIGHT)
        iframe(shown.picture.html(height), height + 60)
    if shown.algorithm:
        left, right = st.columns([2, 5])
        # the style and the listing in two calls: markdown ends a <style> block at its end tag and read the rest as text
        left.markdown(f"<style>{' '.join(beam_lesson.ALGORITHM_CSS.split())}</style>", unsafe_allow_html=True)
        left.markdown(shown.algorithm, unsafe_allow_html=True)
        left.caption(esc_md(shown.caption))
    else:
        right = st.container()
        if shown.caption:
            right.caption(esc_md(shown.caption))
    with right:
        table(shown.rows, height=min(560, 38 + 35 * max(1, len(shown.rows))))
