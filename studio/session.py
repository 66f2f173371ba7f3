"""What a person did in this browser session must survive moving between pages. Streamlit forgets a widget's value as
soon as a page without that widget runs (the typed question was gone after a visit to Compare, its Ask button
disabled) unless the widget is made with `persist_state="session"`, as every choice of the app is; and a finished run
was lost unless saved by hand, so the session keeps a history of them here, which the Traces page lists.

The session keys several pages share live here too, with their values' types (a person's gold marks on a run, kept
per run key), so that no page's module has to import another page's to read them."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from gear.trace import FinalRanking, RunStarted, Trace

HISTORY = "run_history"  # session state: this session's finished runs, newest last
TRACE = "trace"  # session state: the run shown (Ask, teaching mode), set by every page that opens one
TRACE_SOURCE = "trace_source"  # session state: where the run shown came from, in words
QUESTION = "question"  # session state (and the Ask page's question box): the question asked next
INDEX_SELECTED = "index_selected"  # session state (and the sidebar's index picker): the index chosen
TEACH_STEP = "teach_step"  # session state: the step teaching mode shows (from 0)
EXAMPLE = "trace_example"  # session state: the bundled example shown (its stem), if the trace is one
RAN_HERE = "trace_ran_here"  # session state: the session's trace is a run made in this session (not a loaded file)
MARKS = "gold_marks"  # session state: run key -> Marks
ALIASES = "|"         # what separates an answer's aliases in the answer box
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


# -- a question box belongs to the index it was asked on -------------------------------------------------------------
def follow_index(box: str, index: Path) -> None:
    """Keep a question box with the index chosen: the question in it was typed or picked for the index it was last
    drawn with (box_drawn). When another index is chosen, the box shows what it last held there (empty the first
    time) and keeps the question it leaves for its own index, so choosing that index again brings it back. A box
    set together with the index (a run opened on the index it was made on) is left as it was set. Call before the
    box is drawn."""
    drawn = st.session_state.get(f"{box}_drawn")  # (index, question) when the box was last drawn
    here = str(index)
    if drawn is None or drawn[0] == here:
        return
    kept: dict[str, str] = st.session_state.setdefault(f"{box}_by_index", {})
    kept[drawn[0]] = drawn[1]
    if st.session_state.get(box, "") == drawn[1]:  # not set anew with the index
        st.session_state[box] = kept.get(here, "")


def put_question(box: str, question: str) -> None:
    """Set a question box for the index chosen with it (a run opened on its own index): follow_index leaves it."""
    st.session_state[box] = question
    st.session_state.pop(f"{box}_drawn", None)


def box_drawn(box: str, index: Path) -> None:
    """Remember which index the question box was drawn with, and what it held (follow_index reads it)."""
    st.session_state[f"{box}_drawn"] = (str(index), st.session_state.get(box, ""))


# -- a person's gold marks on a run, kept per run (studio.diagnosis_marks draws the panel) ----------------------------
@dataclass
class Marks:
    """The person's marks on one run: the gold passages (ids, in the order marked) and the right answer's words."""

    ids: list[int] = field(default_factory=list)
    answer: str = ""
    touched: bool = False  # the person changed something (else the run's own gold stands)

    @property
    def answers(self) -> list[str]:
        return [a.strip() for a in self.answer.split(ALIASES) if a.strip()]


def run_key(trace: Trace) -> str:
    """One run, whatever object holds it (a replay reloads it): its question, size and final ranking."""
    final = trace.first(FinalRanking)
    start = trace.first(RunStarted)
    parts = (trace.question, len(trace.events), [p.id for p in final.passages] if final else [],
             sorted((start.settings or {}).items()) if start else [])
    return hashlib.sha1(repr(parts).encode("utf-8")).hexdigest()[:16]
