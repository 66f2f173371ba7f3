"""A run opened elsewhere than where it was made — shown on the Ask page on the index it ran on, or summarised as one
row of a table (the Traces page, the Evaluate page's diagnosis) — for every page that lists runs."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from gear.trace import Answered, FinalRanking, RunFinished, RunStarted, Trace
from studio.diagnosis_marks import home_index
from studio.links import LINK, link_for
from studio.run_gold import final_ids, shown_keys
from studio.saves import open_trace
from studio.session import (
    EXAMPLE,
    INDEX_SELECTED,
    QUESTION,
    RAN_HERE,
    TEACH_STEP,
    TRACE,
    TRACE_SOURCE,
    put_question,
    run_key,
)


def open_in_ask(trace: Trace, where: str | Path, ran_here: bool = False) -> None:
    """Show `trace` on the Ask page, on the index it was made on when one is here (its passages can be marked as gold
    there: studio.diagnosis_marks); `where` says where it came from (a trace file's path, or words)."""
    link = link_for(where) if isinstance(where, Path) else None  # a file's lesson has links to its steps
    where = f"trace file {where.name}" if isinstance(where, Path) else where
    st.session_state[TRACE] = trace
    put_question(QUESTION, trace.question)  # Ask asks it again, on the index it was made on
    st.session_state[TRACE_SOURCE] = where
    st.session_state[TEACH_STEP] = 0
    st.session_state[LINK] = link
    st.session_state[RAN_HERE] = ran_here
    st.session_state[EXAMPLE] = None
    home = home_index(trace, st.session_state.get(INDEX_SELECTED))
    if home is not None:  # its passages are marked and searched on the index it was made on
        st.session_state[INDEX_SELECTED] = home
    st.switch_page("app_pages/ask.py")


@st.cache_data(show_spinner=False, max_entries=5000)
def summary(path: str, mtime: float) -> dict:
    return summarise(open_trace(path))


def summarise(trace: Trace) -> dict:
    """One row of the table: the columns that matter first (question, recall, answer, EM), then the rest; recall and
    EM as the run scored them, and (private fields) what follow_gold needs to score them against the gold now."""
    start = trace.first(RunStarted)
    end = trace.first(RunFinished)
    answered = trace.first(Answered)

    def pct(k: str) -> float | None:
        value = end.recall.get(k) if end else None
        return None if value is None else round(100 * value)

    return {"question": trace.question, "R@5": pct("5"), "R@10": pct("10"),
            "answer": answered.answer if answered else "", "EM": answered.em if answered else None,
            "method": f"{start.retriever}/{start.method}" if start else "",
            "iterations": len(trace.iterations()), "tokens": sum(trace.tokens()),
            "_key": run_key(trace), "_final": final_ids(trace), "_shown": shown_keys(trace),
            "_gold": list(dict.fromkeys(start.gold_passage_ids)) if start else [],
            "_answers": list(start.answers) if start else [], "_answer": answered.answer if answered else None,
            "_finished": trace.first(FinalRanking) is not None}
