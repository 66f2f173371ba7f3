"""The Ask page is the demo's front door: one question, asked live or replayed from a saved run, then kept so it can
be taught, downloaded or saved. Its pieces live here so the page file reads as the page's layout only."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path
from typing import Any

import streamlit as st

from gear.config import Settings
from gear.trace import Trace, TraceError
from studio import demo
from studio.resources import engine_for, ensure_index, qa_for_index
from studio.safe import esc_md, one_line
from studio.sidebar import show_answer_origins
from studio.trace_view import TraceView

EXAMPLE_NONE = "(type your own question)"
LIVE_EVENTS = "live_events"  # session state: the events of this session's live run while it runs
CANCELLED = "ask_cancelled"  # session state: its Cancel button was pressed
STOPPED_NOTE = "ask_stopped_note"  # session state: what to say above a run that was stopped mid-way


def bundled_traces() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, tag in ((demo.BUNDLED_TRACES, "example"), (demo.traces_dir(), "saved")):
        if folder.is_dir():
            for p in sorted(folder.glob("*.json")):
                if not p.name.endswith(".tags.json"):
                    found[f"{tag}: {p.stem}"] = p
    return found


def load_trace(path: Path, label: str) -> None:
    st.session_state["trace"] = Trace.load(path)
    st.session_state["trace_source"] = label
    st.session_state["teach_step"] = 0


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:48].lower() or "run"


def first_visit() -> None:
    """The demo opens with the paper's walk-through question ready (and its recorded run, when bundled)."""
    if st.session_state.get("ask_ready"):
        return
    st.session_state["ask_ready"] = True
    st.session_state.setdefault("question", demo.WALKTHROUGH_QUESTION)
    examples = [demo.BUNDLED_TRACES / "walkthrough.json", *sorted(demo.BUNDLED_TRACES.glob("walkthrough_*.json"))]
    for example in examples:
        if "trace" in st.session_state or not example.is_file():
            continue
        try:
            load_trace(example, f"example: {example.stem} (a recorded run of the paper's walk-through question)")
        except TraceError:
            continue


def replay_panel() -> None:
    with st.expander("Replay a saved trace — no LLM or index needed"):
        upload = st.file_uploader("Upload a trace (.json)", type=["json"], key="trace_upload")
        if upload is not None and st.button("Replay uploaded trace", key="replay_upload"):
            try:
                st.session_state["trace"] = Trace.from_json(upload.getvalue().decode("utf-8", "replace"),
                                                            upload.name)
                st.session_state["trace_source"] = f"uploaded: {upload.name}"
                st.session_state["teach_step"] = 0
            except TraceError as exc:
                st.error(one_line(exc))
        options = bundled_traces()
        if options:
            pick = st.selectbox("Bundled examples and saved runs", list(options), key="trace_pick")
            if st.button("Replay", key="replay_pick"):
                load_trace(options[pick], pick)
        else:
            st.caption("No saved traces yet: run a question and press “Save”.")


def question_box(index: Path | None) -> tuple[str, Any | None]:
    questions = qa_for_index(index) if index is not None else []
    by_text = {q.question: q for q in questions}
    if questions:
        labels = [EXAMPLE_NONE, *by_text]

        def use_example() -> None:
            chosen = st.session_state.get("example")
            if chosen and chosen != EXAMPLE_NONE:
                st.session_state["question"] = chosen

        st.selectbox(f"Example questions from the QA set ({len(questions)})", labels, key="example",
                     on_change=use_example)
    question = st.text_input("Question", key="question", placeholder="Ask a multi-hop question…")
    return question.strip(), by_text.get(question.strip())


def _cancel() -> None:
    st.session_state[CANCELLED] = True


def settle_stopped_run() -> None:
    """A live run stops mid-way when its session clicks Cancel (or anything else): Streamlit stops the script at its
    next drawing, which a wait for the model does on every poll and the model's writing a few times a second, and
    the stop takes the run out of the model's queue. The run that follows the click keeps the steps so far as the
    session's trace and says why."""
    events = st.session_state.pop(LIVE_EVENTS, None)
    cancelled = bool(st.session_state.pop(CANCELLED, False))
    if events is None:
        return
    why = "Cancelled" if cancelled else "The live run was interrupted by another click"
    if not events:  # stopped before its first step: the previous trace stays
        st.session_state[STOPPED_NOTE] = f"{why} before its first step."
        return
    st.session_state["trace"] = Trace(list(events))
    st.session_state["trace_source"] = "live run, " + ("cancelled" if cancelled else "interrupted")
    st.session_state["teach_step"] = 0
    st.session_state[STOPPED_NOTE] = f"{why} — the steps so far are shown below."


def stopped_note() -> None:
    """Say once, above the trace, that the run shown was stopped before its end."""
    note = st.session_state.pop(STOPPED_NOTE, None)
    if note:
        st.warning(note)


def run_live(index: Path, question: str, qa: Any | None, settings: Settings) -> None:
    ready = ensure_index(index)
    if ready is None:
        return
    engine = engine_for(ready)
    gold = engine.gold_ids(qa.gold) if qa is not None else []
    trace = Trace()
    # the session's own record of the run in progress (the list the trace appends to): a rerun after Cancel finds
    # the steps so far here (settle_stopped_run)
    st.session_state[LIVE_EVENTS] = trace.events
    st.session_state.pop(STOPPED_NOTE, None)
    cancel = st.empty()
    cancel.button("Cancel", key="ask_cancel", on_click=_cancel, help="Stop this run (and leave the model's queue); "
                  "the steps so far stay on the page.")
    view = TraceView(live=True, key="live")
    timing: dict[str, float] = {}
    started = time.perf_counter()

    def on_event(event) -> None:
        view(event)
        if event.kind == "beams_searched" and "first_graph_s" not in timing:
            timing["first_graph_s"] = time.perf_counter() - started

    trace.subscribe(on_event)
    st.session_state["trace_source"] = "live run"
    try:
        engine.retrieve(question, k=settings.agent_k, settings=settings, gold=gold,
                        question_id=getattr(qa, "id", ""), answers=list(getattr(qa, "answers", ())), trace=trace)
    except Exception as exc:  # Streamlit's stop and rerun are BaseExceptions: a Cancel passes through untouched
        view.close()
        st.error(f"The run stopped: {one_line(exc)}")
    else:
        view.close()
    cancel.empty()
    st.session_state.pop(LIVE_EVENTS, None)
    st.session_state["trace"] = Trace(list(trace.events))
    st.session_state["teach_step"] = 0
    show_answer_origins(st.session_state["trace"])
    if "first_graph_s" in timing:
        st.caption(f"first graph drawn {timing['first_graph_s']:.1f} s after Ask")


def save_name(trace: Trace) -> str:
    """A file name for a saved trace: time, question, and a short random suffix, so two sessions saving the same
    question in the same second never overwrite each other (data/traces is shared by every session)."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}_{slug(trace.question)}_{uuid.uuid4().hex[:6]}.json"


def save_panel(trace: Trace) -> None:
    # One name per trace, kept across reruns, and a download that does not rerun the page: a rerun replaced the file
    # the browser was still fetching (a new name each time), so under load the download was cancelled.
    which = (id(trace), len(trace.events), trace.question)
    kept = st.session_state.get("trace_save_name")
    if not kept or kept[0] != which:
        kept = (which, save_name(trace))
        st.session_state["trace_save_name"] = kept
    name = kept[1]
    left, right, _ = st.columns([1, 1, 3])
    left.download_button("⬇️ Download trace", trace.to_json(), file_name=name, mime="application/json",
                         key="download_trace", on_click="ignore")
    if right.button("💾 Save to data/traces", key="save_trace"):
        path = demo.traces_dir() / name
        trace.save(path)
        st.toast(f"saved {path.name}")
        st.session_state["saved_trace"] = str(path)
    if st.session_state.get("saved_trace"):
        st.caption(f"saved as {esc_md(Path(st.session_state['saved_trace']).name)}")
