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


def gold_titles(engine: Any, qa: Any | None) -> dict[int, str]:
    """Passage id → title of the question's gold passages found in the index (also those no method retrieves)."""
    ids = engine.gold_ids(qa.gold) if qa is not None else []
    return {p.id: p.title for p in engine.backend.passages(ids)}


def compare_live(engine: Any, question: str, qa: Any | None, methods: list[str], base: Settings, k: int) -> None:
    """Run the comparison with a Cancel button. The session keeps the results as each method ends, so a comparison
    stopped mid-way (settle_stopped) still shows the methods done."""
    results: dict[str, Trace | str] = {}
    st.session_state["cmp_results"] = (question, k, results, gold_titles(engine, qa))
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
    question, k, results, titles = st.session_state["cmp_results"]
    st.session_state["cmp_results"] = (question, k, dict(results), titles)
    why = "Cancelled" if cancelled else "The comparison was interrupted by another click"
    return f"{why} — the methods finished so far are shown below."


def show_comparison(question: str, k: int, results: dict[str, Trace | str], titles: dict[int, str]) -> None:
    """The rankings side by side (one row per rank, one column per method, gold passages marked and highlighted),
    then recall and cost per method, then the rank at which each gold passage entered each method's list."""
    st.markdown(f"**Question:** {esc_md(question)}")
    rankings: dict[str, list] = {}
    recall_rows = []
    for label, result in results.items():
        if isinstance(result, str):
            st.error(f"{label}: {result}")
            continue
        final = result.first(FinalRanking)
        start = result.first(RunStarted)
        rankings[label] = final.passages if final else []
        gold_ids = start.gold_passage_ids if start else []
        row = {"method": label}
        for kk in (5, 10, 15):
            r = viz.recall_at(rankings[label], gold_ids, kk)
            row[f"R@{kk}"] = None if r is None else round(100 * r)
        row.update(cost_row(result))
        recall_rows.append(row)
    if rankings:
        grid = pd.DataFrame(viz.side_by_side(rankings, k))
        st.dataframe(grid.style.map(lambda v: "background-color: #fff3bf; font-weight: 600"
                                    if isinstance(v, str) and v.startswith(viz.GOLD_MARK) else ""),
                     hide_index=True, width="stretch", height=38 + 35 * k,
                     column_config={"rank": st.column_config.NumberColumn("#", width="small"),
                                    **{label: st.column_config.TextColumn(label, width="medium")
                                       for label in rankings}})
    st.subheader("Recall and cost per method")
    if recall_rows:
        st.caption("LLM calls and tokens from each run's trace (calls answered by the memo cost nothing); time is "
                   "the whole run, LLM included. GeAR and IRCoT take agent_k passages per retrieval, whatever k says.")
        st.dataframe(pd.DataFrame(recall_rows), hide_index=True, width="stretch")
    if titles:
        st.subheader("Where each gold passage entered (rank per method; — = not retrieved)")
        entered = [{key: "—" if value is None else value for key, value in row.items()}
                   for row in viz.gold_entry(rankings, titles)]
        st.dataframe(pd.DataFrame(entered).astype(str), hide_index=True, width="stretch")
    else:
        st.caption("Gold passages unknown for this question (free text), so recall is not shown.")


def cost_row(trace: Trace) -> dict[str, Any]:
    """Iterations, LLM calls, tokens (prompt + completion, Trace.tokens) and time (RunFinished) of one run."""
    prompt, completion = trace.tokens()
    finish = trace.first(RunFinished)
    return {"iterations": len(trace.iterations()), "LLM calls": len(trace.of(LLMCalled)),
            "prompt tokens": prompt, "completion tokens": completion, "LLM tokens": prompt + completion,
            "time (s)": round(finish.total_ms / 1000, 2) if finish else None}
