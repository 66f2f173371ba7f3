"""A lecture needs a run shown one module at a time, large, with a plain explanation and the paper's notation beside
it; the live view shows everything at once. Teaching mode steps through a recorded trace (Next/Back), reusing the
trace view to draw each step."""

from __future__ import annotations

import streamlit as st

from gear import trace as t
from studio.notation import STEPS, TAUGHT, at_iteration
from studio.safe import esc_md
from studio.trace_view import TraceView


def teaching_steps(trace: t.Trace) -> list[t.Event]:
    """The events teaching mode steps through: one per module of the method (the gist read is explained with the
    memory it grows)."""
    return [e for e in trace if type(e) in TAUGHT and not (isinstance(e, t.ProximalTriples) and e.role != "sync")]


TEACH_CSS = """
<style>
  .teach-title { font-size: 2.1rem; font-weight: 700; margin: 0.2rem 0; }
  .teach-notation { font-size: 1.6rem; color: #1971c2; font-family: 'Liberation Serif', serif; margin: 0.2rem 0; }
  .teach-text { font-size: 1.35rem; line-height: 1.5; color: #212529; }
  .teach-query { font-size: 1.3rem; background: #f1f3f5; padding: 0.5rem 0.8rem; border-radius: 6px; }
  [data-testid="stDataFrame"] { font-size: 18px; }
</style>
"""


def lesson_ended(trace: t.Trace, key: str = "teach_step") -> bool:
    """Whether the lesson on `trace` shows its last step (Next and Back have moved the step before the page draws)."""
    return int(st.session_state.get(key, 0)) >= len(teaching_steps(trace)) - 1


def _move(key: str, by: int, n: int) -> None:
    """Next/Back: the step changes before the page draws, so the buttons are drawn for the step shown (at the last
    step Next is disabled; it used to look active there and do nothing)."""
    st.session_state[key] = max(0, min(int(st.session_state.get(key, 0)) + by, n - 1))


def teach(trace: t.Trace, key: str = "teach_step") -> None:
    """Step through a run one module at a time (Next/Back), with a plain explanation and the paper's notation. The
    run's outcome belongs to the last step (lesson_ended), not before: it gives the ending away."""
    steps = teaching_steps(trace)
    if not steps:
        st.info("This trace has no module steps to teach.")
        return
    st.markdown(TEACH_CSS, unsafe_allow_html=True)
    i = max(0, min(int(st.session_state.get(key, 0)), len(steps) - 1))
    st.session_state[key] = i
    back, info, nxt = st.columns([1, 4, 1])
    back.button("◀ Back", key=f"{key}_back", disabled=i == 0, width="stretch", on_click=_move,
                args=(key, -1, len(steps)))
    nxt.button("Next ▶", key=f"{key}_next", disabled=i >= len(steps) - 1, width="stretch", type="primary",
               on_click=_move, args=(key, 1, len(steps)))
    event = steps[i]
    step = STEPS[type(event)]  # trusted constants; the notation is HTML
    name, notation, text = step.short, at_iteration(step.notation, event.iteration), step.explanation
    info.progress((i + 1) / len(steps), text=f"Step {i + 1} of {len(steps)} · iteration {event.iteration}")
    st.markdown(f"<div class='teach-title'>{esc_md(name)}</div><div class='teach-notation'>{notation}</div>"
                f"<div class='teach-text'>{esc_md(text)}</div>", unsafe_allow_html=True)
    query = next((e.query for e in trace.of(t.IterationStarted) if e.iteration == event.iteration), trace.question)
    st.markdown(f"<div class='teach-query'>q<sup>({event.iteration})</sup> = {esc_md(query)}</div>",
                unsafe_allow_html=True)
    view = TraceView(graph_height=620, key=f"{key}-view")
    position = next(j for j, e in enumerate(trace.events) if e is event)
    view.events = trace.events[: position + 1]
    start = trace.first(t.RunStarted)
    view.gold_known = bool(start and start.gold_passage_ids)
    view.draw(event)
    if isinstance(event, t.GistUpdated):
        gist_read = next((x for x in trace.of(t.ProximalTriples, event.iteration) if x.role == "gist"), None)
        if gist_read is not None:
            st.caption("read from: " + esc_md(gist_read.source))
