"""Whether graph expansion helps shows best on one question, method against method: this runs one question with
several methods — the base retrievers, NaiveGE, SyncGE and GeAR, and the peers PPR and IRCoT — and lays the
rankings, recall, where each gold passage entered and what each run cost (LLM calls, tokens, time) side by side."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from gear import viz
from gear.config import Settings
from gear.trace import FinalRanking, LLMCalled, RunFinished, RunStarted, Trace
from studio.safe import esc_md, one_line
from studio.sidebar import method_settings
from studio.widgets import table

DEFAULT_METHODS = ["Hybrid", "Hybrid + NaiveGE", "PPR (HippoRAG 2)", "IRCoT (hybrid)", "GeAR (hybrid)"]


def run_methods(engine: Any, question: str, qa: Any | None, methods: list[str], base: Settings,
                k: int) -> dict[str, Trace | str]:
    """Each method's trace (or its error, as one line), with a progress bar."""
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
    return results


def show_comparison(question: str, k: int, results: dict[str, Trace | str]) -> None:
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
        row.update(cost_row(result))
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
    st.subheader("Recall and cost per method")
    if recall_rows:
        st.caption("LLM calls and tokens from each run's trace (calls answered by the memo cost nothing); time is "
                   "the whole run, LLM included. GeAR and IRCoT take agent_k passages per retrieval, whatever k says.")
        st.dataframe(pd.DataFrame(recall_rows), hide_index=True, width="stretch")
    if gold_titles:
        st.subheader("Where each gold passage entered (rank per method; empty = not retrieved)")
        st.dataframe(pd.DataFrame(viz.gold_entry(rankings, gold_titles)), hide_index=True, width="stretch")
    else:
        st.caption("Gold passages unknown for this question (free text), so recall is not shown.")


def cost_row(trace: Trace) -> dict[str, Any]:
    """Iterations, LLM calls, tokens (prompt + completion, Trace.tokens) and time (RunFinished) of one run."""
    prompt, completion = trace.tokens()
    finish = trace.first(RunFinished)
    return {"iterations": len(trace.iterations()), "LLM calls": len(trace.of(LLMCalled)),
            "prompt tokens": prompt, "completion tokens": completion, "LLM tokens": prompt + completion,
            "time (s)": round(finish.total_ms / 1000, 2) if finish else None}
