"""Ask: a live walk-through of one question (or a replayed run), with a teaching mode."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from gear.config import Settings
from gear.data.questions import Question
from studio.core.index_questions import index_questions
from studio.core.keys import RAN_HERE, TEACHING, TRACE, TRACE_SOURCE
from studio.core.links import apply_link, clear_address, link_note
from studio.core.resources import build_progress, demo_build, start_demo_builds, warm_engine
from studio.core.safe import esc_md, guarded, setup
from studio.core.sidebar import choose_index, sidebar_settings
from studio.core.waiting import (
    belongs_elsewhere,
    elsewhere_note,
    note_home,
    take_waiting,
    wait_for_index,
    waiting_note,
    waiting_question,
)
from studio.core.widgets import FreshSlots
from studio.gold.panel import apply_pending_step, gold_panel
from studio.pages.ask import (
    ASK_AGAIN,
    again_panel,
    example_note,
    first_visit,
    lesson_picker,
    question_box,
    replay_panel,
    run_live,
    save_panel,
    settle_stopped_run,
    show_lesson_file,
    stopped_note,
)
from studio.views.teaching import lesson_ended, teach, teaching_steps
from studio.views.trace import TraceView

OUTCOME_SHOWN = "teach_outcome_shown"  # session state: the trace whose outcome was asked for before the last step


@guarded
def page() -> None:
    setup("GeAR Studio — Ask", ":material/chat:")
    # a link to a lesson's step (?trace=walkthrough&step=7) opens that run in teaching mode, before the defaults
    apply_link(show_lesson_file, lambda trace: len(teaching_steps(trace)))
    apply_pending_step()  # an evidence line's pointer asked for a step of the lesson
    first_visit()
    settle_stopped_run()
    start_demo_builds()
    index = choose_index()
    settings = sidebar_settings()
    warm_engine(index)
    teaching = bool(st.session_state.get(TEACHING))
    # the same number of top-level elements above the result in every script run: the result's place (FreshSlots)
    # is found by position
    with st.container():
        if not teaching:
            st.markdown(
                "Type a multi-hop question and watch each GeAR iteration: base passages, proximal triples, the linked "
                "initial nodes, the expanded beams as a graph, the fused list, the gist memory, the reasoner's "
                "verdict and the rewritten query. With PPR or IRCoT as the method, their own steps show instead: "
                "PPR's seeds, its entity graph and ranking; IRCoT's thoughts and the passages each retrieval added.")
            lesson_picker()
            replay_panel()
    # teaching mode keeps the screen for the lesson: the question box folds away (its widgets stay alive)
    with st.container():
        if teaching:
            with st.expander("Other lessons", icon=":material/school:"):
                lesson_picker("lessons_teaching")
        box = st.expander("Question", expanded=False) if teaching else st.container()
        with box:
            question, qa = question_box(index, settings)
            c1, c2, c3 = st.columns([1, 2, 3])
            ask = c1.button("Ask", type="primary", key="ask", disabled=index is None or not question,
                            width="stretch")
            if qa is not None:
                c3.caption("From the QA set: gold passages (★) and answers are known.")
        toggle_at = c2 if not teaching else st
        teaching = toggle_at.toggle("Teaching mode", key=TEACHING, persist_state="session",
                                    help="One module at a time, large, with the paper's notation and a plain "
                                         "explanation (Next and Back step through the run).")
    result = FreshSlots("ask_result_slot")
    building = demo_build(index, start=ask) if index is not None else None
    if building is not None and index is not None:
        while_building(result, building.name, index, question, ask, teaching)
        return
    waited = take_waiting(index) if index is not None and not ask else ""
    if waited and index is not None:  # the index is built now: the question that waited for it runs
        question, qa = waited, index_questions(index).find(waited)
    again = bool(st.session_state.pop(ASK_AGAIN, False)) and index is not None and TRACE in st.session_state
    if again:  # the question of the run on screen, asked afresh
        question = st.session_state[TRACE].question
        qa = qa if qa is not None and qa.question == question else None
    if (ask or waited or again) and index is not None:
        asked(result, index, question, qa, settings, again)
        return
    shown(result, index, settings, teaching)


def while_building(result: FreshSlots, name: str, index: Path, question: str, ask: bool, teaching: bool) -> None:
    """A demo index still being built: its progress takes the result's place at once, and a question asked meanwhile
    waits in line (studio/core/waiting.py) until the build reruns the page. A recorded run needs no index: it shows
    meanwhile, as a lesson in teaching mode (its address kept in step)."""
    if ask:
        wait_for_index(index, question)
    with result.fresh() if ask else result.same():
        link_note()  # what was wrong with the link just opened: said while the demo builds too
        build_progress(name)
        if waiting_question(index):
            waiting_note(waiting_question(index))
        trace = st.session_state.get(TRACE)
        if trace is not None and not belongs_elsewhere(trace, index):  # e.g. a replay needs no index
            link_note()
            st.caption("Showing: " + esc_md(st.session_state.get(TRACE_SOURCE, "trace")))
            if teaching:
                teach(trace)
                return
            clear_address()
            example_note()
            TraceView(key="replay", ran_here=bool(st.session_state.get(RAN_HERE))).replay(trace)
            gold_panel(trace, None)  # its gold passages can be marked among its own (no index yet)
        else:
            clear_address()


def asked(result: FreshSlots, index: Path, question: str, qa: Question | None, settings: Settings,
          again: bool) -> None:
    """A question asked now (or waiting for the index that is built now, or asked again): the live run, then what
    follows it."""
    with result.fresh():
        run_live(index, question, qa, settings, fresh=again)
        trace = st.session_state.get(TRACE)
        note_home(trace, index)
        if trace is not None:
            again_panel(trace, settings)
            gold_panel(trace, index)  # where each gold passage was lost (studio/gold/panel.py)
            save_panel(trace)


def shown(result: FreshSlots, index: Path | None, settings: Settings, teaching: bool) -> None:
    """The run on screen (a replay, a saved trace, the last run), as the trace view or as a lesson."""
    with result.same():
        stopped_note()
        link_note()
        trace = st.session_state.get(TRACE)
        if trace is None:
            clear_address()
            st.info("Ask a question, or replay a saved trace.")
            return
        # a lesson keeps its ending for its last step (or a click): the example's caption tells the answer, the
        # gold panel where each gold passage was lost
        ending = not teaching or lesson_ended(trace) or st.session_state.get(OUTCOME_SHOWN) is trace
        if ending:
            example_note()
        st.caption("Showing: " + esc_md(st.session_state.get(TRACE_SOURCE, "trace")))
        if index is not None:
            elsewhere_note(trace, index)
        if teaching:
            teach(trace)
        else:
            clear_address()  # the address names a lesson's step only while the lesson is on screen
            TraceView(key="replay", ran_here=bool(st.session_state.get(RAN_HERE))).replay(trace)
        if ending:
            again_panel(trace, settings)
            gold_panel(trace, index)  # where each gold passage was lost (studio/gold/panel.py)
        else:
            st.button("Show the outcome now", key="teach_outcome", icon=":material/flag:",
                      on_click=lambda: st.session_state.update({OUTCOME_SHOWN: trace}),
                      help="Where each gold passage was lost and whether the answer is right; it also shows at the "
                           "last step.")
        save_panel(trace)


page()
