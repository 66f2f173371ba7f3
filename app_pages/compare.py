"""Compare: one question, several methods side by side."""

from __future__ import annotations

import streamlit as st

from gear import methods
from studio.core.example_marks import chosen_question, marks_note
from studio.core.resources import (
    engine_for,
    ensure_index,
    ppr_graph_note,
    qa_for_index,
    wait_for_ppr_graph,
    warm_engine,
)
from studio.core.safe import esc_md, guarded, setup
from studio.core.session import start
from studio.core.sidebar import PRESETS, choose_index, sidebar_settings
from studio.core.widgets import FreshSlots
from studio.gold.panel import compare_stages
from studio.pages.compare import (
    DEFAULT_METHODS,
    compare_live,
    follow_pick,
    question_marks,
    settle_stopped,
    show_comparison,
)


@guarded
def page() -> None:
    setup("Compare methods", ":material/compare_arrows:")
    index = choose_index()
    base = sidebar_settings(show_method=False, k_label="k of GeAR and IRCoT (passages per retrieval)")
    if index is None:
        return
    warm_engine(index)  # the index, the embedder and PPR's entity graph, made ready in the background
    questions = qa_for_index(index)
    by_text = {q.question: q for q in questions}
    pick = st.container()
    start("cmp_methods", DEFAULT_METHODS)
    chosen = [label for label in st.session_state.get("cmp_methods", []) if label in PRESETS]
    if questions:
        # marked as on the Ask page: replayed at once when every chosen method that asks the LLM was recorded on it
        found = question_marks(index, tuple(by_text), base, chosen)
        shown = pick.selectbox("Question from the QA set", list(by_text), key="cmp_example",
                               format_func=lambda q: f"{found.marks[q]} · {q}" if q in found.marks else q)
        follow_pick(index, chosen_question(str(shown), by_text) if shown is not None else None)
        if found.marks:
            pick.caption(marks_note(found.marks, found.model))
        elif found.problem:
            pick.caption(f"Cannot tell which questions are recorded: {esc_md(found.problem)}")
    question = st.text_input("Question", key="cmp_question", persist_state="session").strip()
    chosen = st.multiselect("Methods", list(PRESETS), key="cmp_methods", persist_state="session")
    start("cmp_k", 10)
    k = st.slider("k of the single-step methods (and the passages shown)", 5, 20, key="cmp_k", persist_state="session")
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
            compare_live(engine_for(ready), question, by_text.get(question), chosen, base, k)
        stopped = settle_stopped()
        saved = st.session_state.get("cmp_results")
        if not saved:
            st.info("Pick a question and methods, then press Compare.")
            return
        if stopped:
            st.warning(stopped)
        show_comparison(*saved)
        compare_stages(saved[2], saved[1], index)  # which method lost which gold passage where


page()
