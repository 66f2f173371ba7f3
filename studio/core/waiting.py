"""A question asked while its index is still being built must not be lost: it waits in line, the page says so under
the build's progress, and it runs as soon as the index is ready (the progress reruns the page then). While the index
is built, a result that belongs to another index gives way to the progress: the page shows what is true of the index
chosen."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from gear.events import RunStarted
from gear.index.home import home_index
from gear.trace import Trace
from studio.core import demos, paths
from studio.core.safe import esc_md

WAITING = "ask_waiting"  # session state: (index directory, question) asked before the index was ready
HOME = "ask_trace_home"  # session state: (trace, index directory) of the last live run of this session


def wait_for_index(index: Path, question: str) -> None:
    """Keep `question` to be asked on `index` once it is built (a later question replaces it)."""
    st.session_state[WAITING] = (str(index), question)


def waiting_question(index: Path) -> str:
    """The question waiting for `index`, or ""."""
    kept = st.session_state.get(WAITING)
    return kept[1] if kept and kept[0] == str(index) else ""


def take_waiting(index: Path) -> str:
    """The question waiting for `index`, taken out of line (to be run now), or ""."""
    question = waiting_question(index)
    if question:
        st.session_state.pop(WAITING, None)
    return question


def drop_waiting() -> None:
    st.session_state.pop(WAITING, None)


def waiting_note(question: str) -> None:
    """Say under the build's progress that the question waits, and offer not to wait."""
    left, right = st.columns([6, 1], vertical_alignment="center")
    left.markdown(f":material/hourglass_top: **Your question waits in line:** it runs as soon as the index is built "
                  f"— “{esc_md(question)}”")
    right.button("Don't wait", key="ask_drop_waiting", on_click=drop_waiting,
                 help="Take the question out of line (the index goes on building).")


def note_home(trace: Trace | None, index: Path) -> None:
    """Remember the index a run of this session was made on (a trace does not say)."""
    if trace is not None:
        st.session_state[HOME] = (trace, str(index))


def home_of(trace: Trace) -> Path | None:
    """The index a trace belongs to, when known: the one this session ran it on, else the demo whose QA set holds its
    question (a bundled example, built or not), else an index of the data folder whose QA set holds it
    (gear.index.home, as `gear replay-beams` finds it); None for a trace from elsewhere (a question no QA set
    holds, uploaded or saved by someone)."""
    kept = st.session_state.get(HOME)
    if kept and kept[0] is trace:
        return Path(kept[1])
    start = trace.first(RunStarted)
    found = demos.demo_of_question(start.question_id) if start else None
    if found is not None:
        return paths.index_dir(found.name)
    return home_index(start.question_id, paths.indexes_dir()) if start else None


def home_elsewhere(trace: Trace, index: Path) -> Path | None:
    """The index the trace is known to have been made on, when that is another index than `index`."""
    home = home_of(trace)
    return home if home is not None and home.resolve() != index.resolve() else None


def belongs_elsewhere(trace: Trace, index: Path) -> bool:
    """Whether the trace is known to be a run on another index than `index`."""
    return home_elsewhere(trace, index) is not None


def elsewhere_note(trace: Trace, index: Path) -> None:
    """A run shown under another index than the one it was made on says so (a replay needs no index, so it stays on
    screen): the question box asks the index chosen, not the run's."""
    home = home_elsewhere(trace, index)
    if home is not None:
        st.caption(f":material/swap_horiz: This run was made on the **{esc_md(home.name)}** index; a question asked "
                   f"now goes to **{esc_md(index.name)}**, the index chosen in the sidebar.")
