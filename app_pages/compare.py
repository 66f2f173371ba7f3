"""Compare: one question, several methods side by side."""

from __future__ import annotations

import streamlit as st

from gear import methods
from studio.compare import DEFAULT_METHODS, compare_live, settle_stopped, show_comparison
from studio.diagnosis_view import compare_stages
from studio.resources import engine_for, ensure_index, qa_for_index
from studio.safe import guarded, setup
from studio.session import start
from studio.sidebar import PRESETS, choose_index, sidebar_settings
from studio.widgets import FreshSlots


@guarded
def page() -> None:
    setup("Compare methods", ":material/compare_arrows:")
    index = choose_index()
    base = sidebar_settings(show_method=False, k_label="k of GeAR and IRCoT (passages per retrieval)")
    if index is None:
        return
    questions = qa_for_index(index)
    by_text = {q.question: q for q in questions}
    pick = st.container()
    if questions:
        pick.selectbox("Question from the QA set", list(by_text), key="cmp_example",
                       on_change=lambda: st.session_state.update(cmp_question=st.session_state["cmp_example"]))
    if "cmp_question" not in st.session_state and questions:
        st.session_state["cmp_question"] = questions[0].question
    question = st.text_input("Question", key="cmp_question", persist_state="session").strip()
    start("cmp_methods", DEFAULT_METHODS)
    chosen = st.multiselect("Methods", list(PRESETS), key="cmp_methods", persist_state="session")
    start("cmp_k", 10)
    k = st.slider("k of the single-step methods (and the passages shown)", 5, 20, key="cmp_k", persist_state="session")
    note = st.container()  # always drawn: the result's place (FreshSlots) is found by position
    if any(methods.get(PRESETS[label][1]).uses_ppr(base) for label in chosen):
        note.caption("PPR's first run on an index builds its entity graph (every entity name encoded once, then cached "
                   "in the index's ppr/ folder).")
    run = st.button("Compare", type="primary", key="cmp_run", disabled=not question or not chosen)
    result = FreshSlots("cmp_result_slot")  # a new comparison never shows the previous one's tables while it runs
    with result.fresh() if run else result.same():
        if run:
            ready = ensure_index(index)
            if ready is None:
                return
            compare_live(engine_for(ready), question, by_text.get(question), chosen, base, k)
        stopped = settle_stopped()
        saved = st.session_state.get("cmp_results")
        if not saved:
            st.info("Pick a question and methods, then press Compare.")
            return
        if stopped:
            st.warning(stopped)
        show_comparison(*saved)
        compare_stages(saved[2], saved[1], index)  # issue 19: which method lost which gold passage where


page()
