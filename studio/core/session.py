"""What a person did in this browser session must survive moving between pages. Streamlit forgets a widget's value as
soon as a page without that widget runs (the typed question was gone after a visit to Compare, its Ask button
disabled) unless the widget is made with `persist_state="session"`, as every choice of the app is; and a finished run
was lost unless saved by hand, so the session keeps a history of them here, which the Traces page lists.

The run a page shows is set in one place, `show` (and `open_in_ask`, which shows it on the Ask page from another
page); the session keys are named in studio.core.keys, a person's gold marks on a run in studio.core.run_gold."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from gear.trace import Trace
from studio.core.keys import EXAMPLE, HISTORY, INDEX_SELECTED, LINK, QUESTION, RAN_HERE, TEACH_STEP, TRACE, TRACE_SOURCE
from studio.core.links import link_for
from studio.core.resources import index_label_of

HISTORY_LIMIT = 50  # runs kept; the oldest go first


def show(trace: Trace, source: str, *, file: Path | None = None, ran_here: bool = False, example: str | None = None,
         ask_it: bool = False) -> None:
    """Make `trace` the run the session shows (the Ask page, teaching mode), from its first step: `source` says where
    it came from, in words; a run read from `file` gets links to its lesson's steps (studio.core.links); `ran_here`:
    made in this session, not loaded; `example`: the bundled example it is (its stem); `ask_it` puts its question in
    the Ask page's box, to be asked again."""
    st.session_state[TRACE] = trace
    st.session_state[TRACE_SOURCE] = source
    st.session_state[TEACH_STEP] = 0
    st.session_state[RAN_HERE] = ran_here
    st.session_state[EXAMPLE] = example
    st.session_state[LINK] = link_for(file) if file is not None else None
    if ask_it:
        put_question(QUESTION, trace.question)


def open_in_ask(trace: Trace, where: str | Path, ran_here: bool = False) -> None:
    """Show `trace` on the Ask page, on the index it was made on when one is here (its passages can be marked as gold
    there: studio.gold.marks); `where` says where it came from (a trace file's path, or words)."""
    file = where if isinstance(where, Path) else None
    show(trace, f"trace file {where.name}" if isinstance(where, Path) else where, file=file, ran_here=ran_here,
         ask_it=True)
    home = index_label_of(trace, st.session_state.get(INDEX_SELECTED))
    if home is not None:  # its passages are marked and searched on the index it was made on
        st.session_state[INDEX_SELECTED] = home
    st.switch_page("app_pages/ask.py")


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
