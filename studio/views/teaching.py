"""A lecture needs a run shown one step at a time, large, with a plain explanation and the paper's notation beside
it; the live view shows everything at once. Teaching mode steps through a recorded trace (Next/Back) along the
lesson's steps (gear.viz.lesson: one per module; Graph expansion opened into Algorithm 1's sub-steps, tripleLink and
PPR into theirs; repeated iterations folded), reusing the trace view to draw each module and studio.views.sub_step for
the sub-steps. The page's address follows the step (studio.core.links), and the whole lesson downloads as one HTML file
(gear.viz.handout).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from gear import events as ev
from gear import trace as t
from gear.viz import handout
from gear.viz.lesson import LessonStep, lesson_steps, position, step_query
from gear.viz.notation import STEPS
from studio.core import links
from studio.core.keys import TEACH_STEP
from studio.core.resources import demo_build, engine_for, queue_demo_build
from studio.core.safe import esc_md
from studio.core.waiting import home_of
from studio.views import beam_knobs, sub_step
from studio.views.trace import TraceView

if TYPE_CHECKING:  # the engine loads torch: imported where one is made
    from gear.agent.engine import Engine


def teaching_steps(trace: t.Trace) -> list[LessonStep]:
    """The steps teaching mode walks through (gear.viz.lesson.lesson_steps)."""
    return lesson_steps(trace)


TEACH_CSS = """
<style>
  .teach-title { font-size: 2.1rem; font-weight: 700; margin: 0.2rem 0; }
  .teach-notation { font-size: 1.6rem; color: #1971c2; font-family: 'Liberation Serif', serif; margin: 0.2rem 0; }
  .teach-text { font-size: 1.3rem; line-height: 1.5; color: #212529; }
  .teach-query { font-size: 1.3rem; background: #f1f3f5; padding: 0.5rem 0.8rem; border-radius: 6px; }
  [data-testid="stDataFrame"] { font-size: 18px; }
</style>
"""


def _build(name: str) -> None:
    queue_demo_build(name)


def _engine(index: Path) -> Engine | None:
    """The engine of a run's index for the beam-search knobs; None while a demo index is still built (said here;
    its progress bar is the page's, at the top, when it is the sidebar's index)."""
    build = demo_build(index)
    if build is None:
        return engine_for(index)
    if build.started is None and build.stage == "not built yet":  # automatic builds are off: a click builds it
        st.caption(f"Searching again needs the {esc_md(build.name)} demo index, not built yet.")
        st.button("Build it now", key=f"knobs_build_{build.name}", on_click=_build, args=(build.name,),
                  icon=":material/construction:")
    else:
        st.caption(f":material/hourglass_top: Searching again needs the {esc_md(build.name)} demo index, being built: "
                   f"{esc_md(build.line())}. The search runs when it is ready.")
    return None


def lesson_ended(trace: t.Trace, key: str = TEACH_STEP) -> bool:
    """Whether the lesson on `trace` shows its last step (Next and Back have moved the step before the page draws)."""
    return int(st.session_state.get(key, 0)) >= len(teaching_steps(trace)) - 1


def _move(key: str, by: int, n: int) -> None:
    """Next/Back: the step changes before the page draws, so the buttons are drawn for the step shown (at the last
    step Next is disabled; it used to look active there and do nothing)."""
    st.session_state[key] = max(0, min(int(st.session_state.get(key, 0)) + by, n - 1))


def teach(trace: t.Trace, key: str = TEACH_STEP) -> None:
    """Step through a run one step at a time (Next/Back), with a plain explanation and the paper's notation. The
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
    step = steps[i]
    event = step.event
    info.progress((i + 1) / len(steps), text=f"Step {i + 1} of {len(steps)} · iteration {event.iteration}")
    # titles, notation and explanations are our own (gear.viz.lesson, gear.viz.notation): trusted HTML; the
    # explanation is escaped all the same, as it carries the run's numbers and triples
    words = st.container()
    if sub_step.has_algorithm(step):  # Algorithm 1 beside the words, wide enough that no line wraps at 1280 px
        words, listing = st.columns([1, 1])
        sub_step.algorithm(step, listing)
    words.markdown(f"<div class='teach-title'>{esc_md(step.title)}</div><div class='teach-notation'>{step.notation}"
                   f"</div><div class='teach-text'>{esc_md(step.explanation)}</div>", unsafe_allow_html=True)
    st.markdown(f"<div class='teach-query'>q<sup>({event.iteration:d})</sup> = {esc_md(step_query(trace, step))}</div>",
                unsafe_allow_html=True)
    if step.missing:
        st.caption(":material/info: " + esc_md(step.missing))
    if step.phase == "repeat":
        st.info(esc_md(step.explanation), icon=":material/repeat:")
    elif step.phase:
        sub_step.draw(trace, step, key=f"{key}-sub-{i}")
        if isinstance(event, ev.BeamsSearched) and sub_step.has_algorithm(step):
            home = home_of(trace)
            if home is not None and demo_build(home) is None and (home / "manifest.json").is_file():
                beam_knobs.prepare(engine_for(home), home, trace, event)
            beam_knobs.panel(trace, event, home, _engine)
    else:
        view = TraceView(graph_height=620, key=f"{key}-view")
        view.events = trace.events[: position(trace, step) + 1]
        start = trace.first(ev.RunStarted)
        view.gold_known = bool(start and start.gold_passage_ids)
        view.draw(event)
        if isinstance(event, ev.GistUpdated):
            gist_read = next((x for x in trace.of(ev.ProximalTriples, event.iteration) if x.role == "gist"), None)
            if gist_read is not None:
                st.caption("read from: " + esc_md(gist_read.source))
    share, download = st.columns([2, 1])
    with share:
        links.copy_link(links.keep_address(i + 1, beam_knobs.address(trace, event)))
    with download:
        chosen = st.slider("Steps to print", 1, len(steps), (1, len(steps)), key=f"{key}_print_range",
                           disabled=len(steps) < 2) if len(steps) > 1 else (1, 1)
        first, last = (int(chosen[0]), int(chosen[1]))
        st.download_button("Download the lesson", lambda: handout.lesson_html(trace, steps=(first, last)),
                           file_name=handout.file_name(trace), mime="text/html", key=f"{key}_handout",
                           on_click="ignore", icon=":material/download:",
                           help="The steps chosen in one HTML file — pictures, tables, notation, and the run's "
                                "teaching point last — that opens offline and prints one step a page (A4 or "
                                "Letter).")


__all__ = ["STEPS", "lesson_ended", "teach", "teaching_steps"]
