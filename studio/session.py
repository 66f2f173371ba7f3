"""What a person did in this browser session must survive moving between pages: Streamlit forgets a widget's value as
soon as a page without that widget runs (the typed question was gone after a visit to Compare, its Ask button
disabled), and a finished run was lost unless saved by hand. This module keeps both: the choices, written back on
every page, and the session's history of finished runs, which the Traces page lists."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import streamlit as st

from gear.trace import Trace

#: widget keys whose values outlive a page change: the sidebar's method, LLM and knobs, and each page's own choices
#: (free text, toggles, and lists whose options never change; a selectbox over a changing list is left out, since a
#: kept value that is no longer an option would be an error)
KEPT = ("retriever", "expand", "llm_kind", "llm_base_url", "llm_model", "prompts", "k", "beam_width", "beam_length",
        "gamma", "neighbours", "max_iterations", "ppr_damping", "ppr_filter", "ircot_max_steps", "ircot_retriever",
        "question", "teaching", "cmp_question", "cmp_methods", "cmp_k", "eval_methods", "eval_ks", "eval_traces",
        "tr_recall", "tr_answered", "tr_tagged")

HISTORY = "run_history"  # session state: this session's finished runs, newest last
HISTORY_LIMIT = 50  # runs kept; the oldest go first


def keep_choices() -> None:
    """Write every kept choice back into session state: a widget's key written this way stays when the next page
    does not draw that widget, and the widget takes it again when its page is back."""
    for key in KEPT:
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def start(key: str, value: Any) -> None:
    """A widget's first value, set through session state only: a widget given both a default and a kept value logs a
    warning with a stack on every run (the server's log filled with them under load)."""
    if key not in st.session_state:
        st.session_state[key] = value


@dataclass(frozen=True)
class HistoryRun:
    """One finished run of this session: where it came from (Ask, Compare), when it ended, and its trace."""

    page: str
    finished: float
    trace: Trace

    @property
    def name(self) -> str:
        return f"{time.strftime('%H:%M:%S', time.localtime(self.finished))} {self.page}"


def remember(trace: Trace, page: str) -> None:
    """Add a finished run to the session's history (the oldest dropped beyond HISTORY_LIMIT)."""
    runs: list[HistoryRun] = st.session_state.setdefault(HISTORY, [])
    runs.append(HistoryRun(page, time.time(), trace))
    del runs[:-HISTORY_LIMIT]


def history() -> list[HistoryRun]:
    return list(st.session_state.get(HISTORY, []))
