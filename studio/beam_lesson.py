"""The beam search's sub-steps in teaching mode (gear.viz.lesson.beam_steps): Algorithm 1 beside the picture with the
current sub-step's lines marked, the search's graph as far as it has grown (one layout for the whole search, so no
node moves between sub-steps), and the sub-step's table of candidates, scores and penalties. What is drawn comes
from gear.viz.beam_lesson, which the handout uses too; untrusted text reaches the page through st.dataframe and
the escaped graph only."""

from __future__ import annotations

import streamlit as st

from gear import trace as t
from gear import viz
from gear.viz import beam_lesson
from gear.viz.lesson import LessonStep
from studio.widgets import iframe, table

GRAPH_HEIGHT = 520


def draw(trace: t.Trace, step: LessonStep, key: str) -> None:
    e = step.event
    if not isinstance(e, t.BeamsSearched):
        return
    # the graph across the page (the whole search's layout is wide: every hop a column), Algorithm 1 beside the
    # sub-step's table below it
    picture = beam_lesson.picture(e, step.phase, step.hop, viz.passage_lookup(trace))
    iframe(picture.html(GRAPH_HEIGHT), GRAPH_HEIGHT + 60)
    left, right = st.columns([2, 5])
    # the style and the listing in two calls: markdown ends a <style> block at its end tag and read the rest as text
    left.markdown(f"<style>{' '.join(beam_lesson.ALGORITHM_CSS.split())}</style>", unsafe_allow_html=True)
    left.markdown(beam_lesson.algorithm_html(step.lines), unsafe_allow_html=True)
    left.caption(f"b = {e.width}, l = {e.length}, γ = {e.gamma:g}, at most {e.max_neighbours} neighbours; "
                 f"diversity {'on' if e.diversity else 'off'}.")
    rows = beam_lesson.rows(e, step.phase, step.hop)
    with right:
        table(rows, height=min(560, 38 + 35 * len(rows)))
