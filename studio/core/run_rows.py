"""A run summarised as one row of a table (the Traces page, the Evaluate page's diagnosis), for every page that lists
runs; opening one on the Ask page is studio.core.session.open_in_ask."""

from __future__ import annotations

import streamlit as st

from gear.events import Answered, FinalRanking, RunFinished, RunStarted
from gear.trace import Trace
from studio.core.run_gold import final_ids, run_key, shown_keys
from studio.core.saves import open_trace


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
