"""Compare: one question, several methods side by side."""

from __future__ import annotations

import streamlit as st

from gear import methods
from studio.core.example_marks import chosen_question, marks_note
from studio.core.index_questions import index_questions
from studio.core.resources import engine_for, ensure_index, ppr_graph_note, wait_for_ppr_graph, warm_engine
from studio.core.safe import esc_md, guarded, setup
from studio.core.session import box_drawn, follow_index, start
from studio.core.sidebar import PRESETS, choose_index, sidebar_settings
from studio.core.widgets import FreshSlots
from studio.gold.panel import compare_stages
from studio.pages.compare import (
    DEFAULT_METHODS,
    EXAMPLE,
    QUESTION,
    RESULTS,
    compare_live,
    depth_note,
    elsewhere_note,
    follow_pick,
    pick_question,
    question_marks,
    settle_stopped,
    show_comparison,
)


@guarded
def page() -> None:
    setup("Compare methods", ":material/compare_arrows:")
    index = choose_index()
    base = sidebar_settings(show_method=False)
    if index is None:
        return
    warm_engine(index)  # the index, the embedder and PPR's entity graph, made ready in the background
    offered = index_questions(index)  # the person's own questions first, then the index's QA set
    by_text = offered.by_text
    follow_index(QUESTION, index)  # the box holds the question last compared on this index
    pick = st.container()
    start("cmp_methods", DEFAULT_METHODS)
    chosen = [label for label in st.session_state.get("cmp_methods", []) if label in PRESETS]
    if by_text:
        # marked as on the Ask page: replayed at once when every chosen method that asks the LLM was recorded on it
        found = question_marks(index, tuple(by_text), base, chosen)

        def label(q: str) -> str:
            parts = ["★ yours" if q in offered.yours else "", found.marks.get(q, ""), q]
            return " · ".join(part for part in parts if part)

        shown = pick.selectbox(f"Question ({offered.counts()})", list(by_text), key=EXAMPLE, format_func=label,
                               on_change=pick_question, args=(list(by_text),),
                               help="★ yours: questions saved with their gold passages (“Save as a test question” "
                                    "under an Ask result, or `gear qa add`); the others are the index's QA set. "
                                    "Both know their gold passages, so recall is shown.")
        follow_pick(chosen_question(str(shown), by_text) if shown is not None else None)
        if found.marks:
            pick.caption(marks_note(found.marks, found.model))
        elif found.problem:
            pick.caption(f"Cannot tell which questions are recorded: {esc_md(found.problem)}")
    question = st.text_input("Question", key=QUESTION, persist_state="session").strip()
    box_drawn(QUESTION, index)
    chosen = st.multiselect("Methods", list(PRESETS), key="cmp_methods", persist_state="session")
    start("cmp_k", 10)
    shown_k = st.slider("Passages shown of each ranking", 5, 20, key="cmp_k", persist_state="session")
    st.caption(depth_note(shown_k))
    note = st.container()  # always drawn: the result's place (FreshSlots) is found by position
    if any(methods.get(PRESETS[label][1]).uses_ppr(base) for label in chosen):
        waiting = ppr_graph_note(index)
        if waiting:
            note.caption(waiting)
    run = st.button("Compare", type="primary", key="cmp_run", disabled=not question or not chosen)
    result = FreshSlots("cmp_result_slot")  # a new comparison never shows the previous one's tables while it runs
    with result.fresh() if run else result.same():
        if run:
            ready = ensure_index(index)
            if ready is None:
                return
            if any(methods.get(PRESETS[label][1]).uses_ppr(base) for label in chosen):
                wait_for_ppr_graph(ready)
            compare_live(engine_for(ready), index, question, offered.find(question), chosen, base, shown_k)
        stopped = settle_stopped()
        saved = st.session_state.get(RESULTS)
        if not saved:
            st.info("Pick a question and methods, then press Compare.")
            return
        if elsewhere := elsewhere_note(saved, index):
            st.info(elsewhere, icon=":material/swap_horiz:")
            return
        if stopped:
            st.warning(stopped)
        show_comparison(saved.question, saved.shown, saved.results, saved.titles)
        compare_stages(saved.results, saved.shown, index)  # which method lost which gold passage where


page()
