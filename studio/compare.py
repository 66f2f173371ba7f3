"""Whether graph expansion helps shows best on one question, method against method: this runs one question with
several methods — the base retrievers, NaiveGE, SyncGE and GeAR, and the peers PPR and IRCoT — and lays the
rankings, recall, where each gold passage entered and what each run cost (LLM calls, tokens, time) side by side."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from gear import viz
from gear.config import Settings
from gear.trace import Event, FinalRanking, LLMCalled, LLMText, LLMWaiting, RunFinished, RunStarted, Trace
from studio.safe import esc_md, one_line
from studio.sidebar import method_settings
from studio.trace_view import show_wait
from studio.widgets import table

DEFAULT_METHODS = ["Hybrid", "Hybrid + NaiveGE", "PPR (HippoRAG 2)", "IRCoT (hybrid)", "GeAR (hybrid)"]
RUNNING = "cmp_running"  # session state: a comparison of this session is running
CANCELLED = "cmp_cancelled"  # session state: its Cancel button was pressed


def model_status(box: Any) -> Callable[[Event], None]:
    """A run's listener showing in `box` what the model does for it: its place in the queue, or a line while it
    writes (a few times a second). Each draw is a point where Streamlit can stop the script when its user cancels."""
    drawn = {"at": 0.0}

    def listen(event: Event) -> None:
        if isinstance(event, LLMWaiting):
            show_wait(box, event)
        elif isinstance(event, LLMText) and time.perf_counter() - drawn["at"] >= 0.25:
            drawn["at"] = time.perf_counter()
            box.caption(f"✍️ {esc_md(event.step)} — the model is writing…")

    return listen


def run_methods(engine: Any, question: str, qa: Any | None, methods: list[str], base: Settings,
                k: int, results: dict[str, Trace | str] | None = None) -> dict[str, Trace | str]:
    """Each method's trace (or its error, as one line), with a progress bar; `results` fills as each method ends."""
    gold = engine.gold_ids(qa.gold) if qa is not None else []
    results = {} if results is None else results
    bar = st.progress(0, text="running")
    status = st.empty()
    for n, label in enumerate(methods, 1):
        settings = method_settings(base, label)
        trace = Trace()
        trace.subscribe(model_status(status))
        try:
            run = engine.retrieve(question, k=k, settings=settings, gold=gold, question_id=getattr(qa, "id", ""),
                                  answers=list(getattr(qa, "answers", ())), trace=trace)
            results[label] = run.trace
        except Exception as exc:  # Streamlit's stop on Cancel is a BaseException: it passes through
            results[label] = f"{type(exc).__name__}: {one_line(exc)}"
        status.empty()
        bar.progress(n / len(methods), text=f"{label} done")
    return results


def _cancel() -> None:
    st.session_state[CANCELLED] = True


def compare_live(engine: Any, question: str, qa: Any | None, methods: list[str], base: Settings, k: int) -> None:
    """Run the comparison with a Cancel button. The session keeps the results as each method ends, so a comparison
    stopped mid-way (settle_stopped) still shows the methods done."""
    results: dict[str, Trace | str] = {}
    st.session_state["cmp_results"] = (question, k, results)
    st.session_state[RUNNING] = True
    cancel = st.empty()
    cancel.button("Cancel", key="cmp_cancel", on_click=_cancel,
                  help="Stop the comparison (and leave the model's queue); the methods done stay.")
    run_methods(engine, question, qa, methods, base, k, results)
    cancel.empty()
    st.session_state.pop(RUNNING, None)


def settle_stopped() -> str:
    """After a comparison stopped mid-way (Cancel, or another click): a copy of what it finished (its thread may
    still be ending) and what to say about it; "" when none was stopped."""
    cancelled = bool(st.session_state.pop(CANCELLED, False))
    if not st.session_state.pop(RUNNING, False) or "cmp_results" not in st.session_state:
        return ""
    question, k, results = st.session_state["cmp_results"]
    st.session_state["cmp_results"] = (question, k, dict(results))
    why = "Cancelled" if cancelled else "The comparison was interrupted by another click"
    return f"{why} — the methods finished so far are shown below."


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
