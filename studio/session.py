"""What a person did in this browser session must survive moving between pages. Streamlit forgets a widget's value as
soon as a page without that widget runs (the typed question was gone after a visit to Compare, its Ask button
disabled) unless the widget is made with `persist_state="session"`, as every choice of the app is; and a finished run
was lost unless saved by hand, so the session keeps a history of them here, which the Traces page lists."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import streamlit as st

from gear.trace import Trace

HISTORY = "run_history"  # session state: this session's finished runs, newest last
HISTORY_LIMIT = 50  # runs kept; the oldest go first


def start(key: str, value: Any) -> None:
    """A widget's first value, set through session state only: a widget given both a default and a value set through
    session state logs a warning with a stack on every run (the server's log filled with them under load)."""
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
