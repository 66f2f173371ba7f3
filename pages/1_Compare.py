"""Compare: one question, several methods side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from gear import viz
from gear.trace import FinalRanking, RunStarted, Trace
from studio.common import (
    METHODS,
    choose_index,
    engine_for,
    ensure_index,
    esc_md,
    guarded,
    method_settings,
    one_line,
    qa_for_index,
    setup,
    sidebar_settings,
)
from studio.render import table

DEFAULT_METHODS = ["BM25", "Hybrid", "Hybrid + NaiveGE", "Hybrid + SyncGE", "GeAR (hybrid)"]


@guarded
def page() -> None:
    setup("Compare methods", "⚖️")
    index = choose_index()
    base = sidebar_settings(show_method=False)
    if index is None:
        return
    questions = qa_for_index(index)
    by_text = {q.question: q for q in questions}
    if questions:
        st.selectbox("Question from the QA set", list(by_text), key="cmp_example",
                     on_change=lambda: st.session_state.update(cmp_question=st.session_state["cmp_example"]))
    if "cmp_question" not in st.session_state and questions:
        st.session_state["cmp_question"] = questions[0].question
    question = st.text_input("Question", key="cmp_question").strip()
    methods = st.multiselect("Methods", list(METHODS), default=DEFAULT_METHODS, key="cmp_methods")
    k = st.slider("k (passages shown and used for single-step methods)", 5, 20, 10, key="cmp_k")
    if st.button("Compare", type="primary", key="cmp_run", disabled=not question or not methods):
        ready = ensure_index(index)
        if ready is None:
            return
        engine = engine_for(ready)
        qa = by_text.get(question)
        gold = engine.gold_ids(qa.gold) if qa is not None else []
        results: dict[str, Trace | str] = {}
        bar = st.progress(0, text="running")
        for n, label in enumerate(methods, 1):
            settings = method_settings(base, label)
            try:
                run = engine.retrieve(question, k=k, settings=settings, gold=gold, question_id=getattr(qa, "id", ""),
                                      answers=list(getattr(qa, "answers", ())))
                results[label] = run.trace
            except Exception as exc:
                results[label] = f"{type(exc).__name__}: {one_line(exc)}"
            bar.progress(n / len(methods), text=f"{label} done")
        st.session_state["cmp_results"] = (question, k, results)
    saved = st.session_state.get("cmp_results")
    if not saved:
        st.info("Pick a question and methods, then press Compare.")
        return
    question, k, results = saved
    st.markdown(f"**Question:** {esc_md(question)}")
    rankings: dict[str, list] = {}
    gold_titles: dict[int, str] = {}
    recall_rows = []
    for label, result in results.items():
        if isinstance(result, str):
            continue
        final = result.first(FinalRanking)
        start = result.first(RunStarted)
        rankings[label] = final.passages if final else []
        for p in rankings[label]:
            if p.gold:
                gold_titles.setdefault(p.id, p.title)
        gold = start.gold_passage_ids if start else []
        for pid in gold:
            gold_titles.setdefault(pid, f"passage #{pid}")
        row = {"method": label}
        for kk in (5, 10, 15):
            r = viz.recall_at(rankings[label], gold, kk)
            row[f"R@{kk}"] = None if r is None else round(100 * r)
        row["iterations"] = len(result.iterations())
        prompt, completion = result.tokens()
        row["LLM tokens"] = prompt + completion
        recall_rows.append(row)
    cols = st.columns(max(1, len(results)))
    for col, (label, result) in zip(cols, results.items(), strict=True):
        with col:
            st.markdown(f"**{esc_md(label)}**")
            if isinstance(result, str):
                st.error(result)
                continue
            rows = [{"rank": n, "gold": "★" if p.gold else "", "title": p.title}
                    for n, p in enumerate(rankings[label][:k], 1)]
            table(rows, height=38 + 35 * max(1, len(rows)))
    st.subheader("Recall per method")
    if recall_rows:
        st.dataframe(pd.DataFrame(recall_rows), hide_index=True, width="stretch")
    if gold_titles:
        st.subheader("Where each gold passage entered (rank per method; empty = not retrieved)")
        st.dataframe(pd.DataFrame(viz.gold_entry(rankings, gold_titles)), hide_index=True, width="stretch")
    else:
        st.caption("Gold passages unknown for this question (free text), so recall is not shown.")


page()
