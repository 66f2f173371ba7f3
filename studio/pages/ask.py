"""The Ask page is the demo's front door: one question, asked live or replayed from a saved run, then kept so it can
be taught, downloaded or saved. Its pieces live here so the page file reads as the page's layout only."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from gear import methods
from gear.config import Settings
from gear.events import RunStarted
from gear.trace import Trace, TraceError
from gear.trace.difference import RunDifference
from studio.core import demos, paths
from studio.core.example_marks import ExampleMarks, chosen_question, example_marks, marks_note
from studio.core.index_questions import index_questions
from studio.core.keys import EXAMPLE, INDEX_SELECTED, QUESTION, TEACH_STEP, TEACHING, TRACE, TRACE_SOURCE
from studio.core.resources import engine_for, ensure_index
from studio.core.safe import esc_md, one_line
from studio.core.saves import open_trace, save_name
from studio.core.session import box_drawn, follow_index, remember, show
from studio.core.sidebar import show_answer_origins
from studio.views.trace import StatusLine, TraceView

if TYPE_CHECKING:  # the recordings' module loads the evaluation (seconds): imported when a run asks again
    from gear.agent.recorded import AskAgain
    from gear.data.questions import Question

EXAMPLE_NONE = "(type your own question)"
LIVE_EVENTS = "live_events"  # session state: the events of this session's live run while it runs
CANCELLED = "ask_cancelled"  # session state: its Cancel button was pressed
STOPPED_NOTE = "ask_stopped_note"  # session state: what to say above a run that was stopped mid-way
ASK_AGAIN = "ask_again"  # session state: "Ask the model again" was pressed: the next run asks the model afresh
AGAIN_NOTE = "ask_again_note"  # session state: (the fresh run's trace, how it differs from the recorded run)


def bundled_traces() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, tag in ((paths.BUNDLED_TRACES, "example"), (paths.traces_dir(), "saved")):
        if folder.is_dir():
            for p in sorted(folder.glob("*.json")):
                if not p.name.endswith(".tags.json"):
                    found[f"{tag}: {p.stem}"] = p
    return found


def load_trace(path: Path, label: str) -> None:
    show_file(open_trace(path), path, label)


def show_file(trace: Trace, path: Path, label: str = "") -> None:
    """Make a trace read from `path` the session's trace; its lesson's steps get links (studio.core.links)."""
    example = path.stem if path.parent == paths.BUNDLED_TRACES and path.stem in demos.EXAMPLES else None
    show(trace, label or f"{'example' if path.parent == paths.BUNDLED_TRACES else 'saved'}: {path.stem} "
         "(a recorded run)", file=path, example=example, ask_it=True)


def select_home(trace: Trace) -> None:
    """The sidebar picks the demo index a bundled run was made on (the replay needs none; its beam-search knobs and
    asking it again do, and a demo not built yet starts building, its progress shown)."""
    start = trace.events[0] if trace.events else None
    home = demos.demo_of_question(getattr(start, "question_id", ""))
    if home is not None:
        st.session_state[INDEX_SELECTED] = f"{home.name} (demo)"


def show_lesson_file(trace: Trace, path: Path) -> None:
    """A link's run (studio.core.links): shown, and a bundled one on its demo index."""
    show_file(trace, path)
    if path.parent == paths.BUNDLED_TRACES:
        select_home(trace)


def load_example(stem: str) -> None:
    """Replay a bundled example: its question goes into the box, and the sidebar picks the demo index it was run
    on (the replay itself needs no index; asking the question again does)."""
    example = demos.EXAMPLES[stem]
    try:
        load_trace(example.path, f"example: {stem} (a recorded run)")
    except (TraceError, OSError) as exc:
        st.session_state[STOPPED_NOTE] = f"Cannot replay {example.path.name}: {one_line(exc)}"
        return
    select_home(st.session_state[TRACE])


def first_visit() -> None:
    """The demo opens with the paper's walk-through question ready (and its recorded run, when bundled); an app
    started on another index (GEAR_STUDIO_INDEX) opens on an empty question box and that index's own examples, not
    on a question and a run its index does not hold."""
    if st.session_state.get("ask_ready"):
        return
    st.session_state["ask_ready"] = True
    if paths.wanted_index() not in ("", "walkthrough"):
        return
    st.session_state.setdefault(QUESTION, demos.WALKTHROUGH_QUESTION)
    examples = [paths.BUNDLED_TRACES / "walkthrough.json", *sorted(paths.BUNDLED_TRACES.glob("walkthrough_*.json"))]
    for example in examples:
        if TRACE in st.session_state or not example.is_file():
            continue
        try:
            load_trace(example, f"example: {example.stem} (a recorded run of the paper's walk-through question)")
        except TraceError:
            continue


def example_note() -> None:
    """What the bundled example on screen shows (a replay alone does not say that a run failed, nor why that is
    worth seeing), and a button for the other examples."""
    stem = st.session_state.get(EXAMPLE)
    example = demos.EXAMPLES.get(stem or "")
    if example is None:
        return
    st.info(example.caption, icon=":material/school:")
    others = [e for e in demos.EXAMPLES.values() if e.stem != stem and e.path.is_file()]
    for other, col in zip(others, st.columns(max(1, len(others))), strict=False):
        col.button(other.button, key=f"example_{other.stem}", on_click=load_example, args=(other.stem,))


def replay_panel() -> None:
    with st.expander("Replay a saved trace — no LLM or index needed"):
        upload = st.file_uploader("Upload a trace (.json)", type=["json"], key="trace_upload")
        if upload is not None and st.button("Replay uploaded trace", key="replay_upload"):
            try:
                show(Trace.from_json(upload.getvalue().decode("utf-8", "replace"), upload.name),
                     f"uploaded: {upload.name}")
            except TraceError as exc:
                st.error(esc_md(one_line(exc)))
        options = bundled_traces()
        if options:
            pick = st.selectbox("Bundled examples and saved runs", list(options), key="trace_pick")
            st.button("Replay", key="replay_pick", on_click=replay_file, args=(options[pick], pick))
        else:
            st.caption("No saved traces yet: run a question and press “Save”.")


def open_lesson(path: Path, label: str) -> None:
    """A recorded run opened as a lesson: teaching mode at its first step (a button's action, before the page
    draws: the sidebar, the address and the stepper follow it)."""
    before = st.session_state.get(TRACE)
    replay_file(path, label)
    if st.session_state.get(TRACE) is not before:  # it loaded (else the page says why)
        if path.parent == paths.BUNDLED_TRACES:
            select_home(st.session_state[TRACE])
        st.session_state[TEACHING] = True
        st.session_state[TEACH_STEP] = 0


@st.cache_data(max_entries=64, show_spinner=False)
def lesson_size(path: str, mtime: float) -> tuple[int, int]:
    """(iterations, steps) of the lesson on a trace file (gear.viz.lesson); (0, 0) for a file that does not load."""
    from gear.viz.lesson import lesson_steps

    try:
        trace = Trace.load(Path(path))
    except (TraceError, OSError):
        return 0, 0
    return max((e.iteration for e in trace.events), default=0), len(lesson_steps(trace))


def _lesson_label(stem: str, path: Path) -> str:
    """A lesson button's words, short enough for a third of the page at 1280 px: "the walk-through · 14 steps"."""
    iterations, steps = lesson_size(str(path), path.stat().st_mtime)
    what = "the walk-through" if stem == "walkthrough" else (f"a {iterations}-iteration run" if iterations > 1
                                                              else stem.replace("_", " "))
    return f"{what} · {steps} steps" if steps else what


def lesson_picker(key: str = "lessons") -> None:
    """The lessons one click away: the bundled examples (the 14-step walk-through, MuSiQue's 3-iteration run) and any
    recorded run, each opened in teaching mode at its first step."""
    examples = [e for e in demos.EXAMPLES.values() if e.path.is_file()]
    columns = st.columns(len(examples) + 1, vertical_alignment="bottom")
    for example, col in zip(examples, columns, strict=False):
        col.button(f"Teach {_lesson_label(example.stem, example.path)}", key=f"{key}_{example.stem}",
                   on_click=open_lesson, args=(example.path, f"example: {example.stem} (a recorded run)"),
                   icon=":material/school:", width="stretch", help=example.button + ", as a lesson")
    options = bundled_traces()
    if options:
        with columns[-1].popover("Any recorded run…", icon=":material/folder_open:", width="stretch"):
            pick = st.selectbox("Bundled and saved runs", list(options), key=f"{key}_pick")
            st.button("Teach it", key=f"{key}_open", on_click=open_lesson, args=(options[pick], pick),
                      type="primary")


def replay_file(path: Path, label: str) -> None:
    """The Replay button's action (before the page draws, so the sidebar and the question box follow it)."""
    if path.parent == paths.BUNDLED_TRACES and path.stem in demos.EXAMPLES:
        load_example(path.stem)
        return
    try:
        load_trace(path, label)
    except (TraceError, OSError) as exc:
        st.session_state[STOPPED_NOTE] = f"Cannot replay {path.name}: {one_line(exc)}"


def question_box(index: Path | None, settings: Settings) -> tuple[str, Any | None]:
    offered = index_questions(index)
    own, questions, by_text, yours = offered.own, offered.bundled, offered.by_text, offered.yours
    if index is not None:
        follow_index(QUESTION, index)  # the box holds the question last asked on this index
    if by_text:
        labels = [EXAMPLE_NONE, *by_text]
        found = example_marks(index, tuple(by_text), settings) if index is not None else ExampleMarks({})
        marks = found.marks

        def use_example() -> None:
            chosen = chosen_question(str(st.session_state.get("example") or ""), by_text)
            if chosen and chosen != EXAMPLE_NONE:
                st.session_state[QUESTION] = chosen

        def label(q: str) -> str:
            parts = ["★ yours" if q in yours else "", marks.get(q, ""), q]
            return " · ".join(part for part in parts if part)

        title = (f"Example questions ({offered.counts()})" if own else
                 f"Example questions from the QA set ({len(questions)})")
        st.selectbox(title, labels, key="example", on_change=use_example,
                     format_func=label,
                     help="★ yours: questions saved with their gold passages (“Save as a test question” below a "
                          "result, or `gear qa add`)." if own else None)
        if marks:
            st.caption(marks_note(marks, found.model, found.speed))
        elif found.problem:  # one line says why, not also that the marks are coming
            st.caption(f"Cannot tell which examples are recorded: {esc_md(found.problem)}")
        elif index is not None and (index / "manifest.json").is_file():
            st.caption("Which examples are recorded (instant) and which run live is shown once the index and "
                       "embedder are loaded.")
    question = st.text_input("Question", key="question", persist_state="session",
                             placeholder="Ask a multi-hop question…")
    if index is not None:
        box_drawn(QUESTION, index)
    return question.strip(), offered.find(question)


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
    show(Trace(list(events)), "live run, " + ("cancelled" if cancelled else "interrupted"), ran_here=True)
    st.session_state[STOPPED_NOTE] = f"{why} — the steps so far are shown below."


def stopped_note() -> None:
    """Say once, above the trace, that the run shown was stopped before its end."""
    note = st.session_state.pop(STOPPED_NOTE, None)
    if note:
        st.warning(esc_md(note))  # may name an uploaded file and its error


def run_live(index: Path, question: str, qa: Question | None, settings: Settings, fresh: bool = False) -> None:
    """Run the question live in the current container: a status line at the top beside Cancel says where the run is
    and what it waits for; each iteration draws below it as its events arrive. Recorded answers replay (the same
    run as `gear ask` gives); `fresh` asks the model anew past them, and says how the run differs from the
    recorded one."""
    ready = ensure_index(index)
    if ready is None:
        return
    engine = engine_for(ready)
    gold = engine.gold_ids(qa.gold) if qa is not None else []
    again = None
    if fresh:
        from gear.agent.recorded import ask_again
        from gear.llm import LLMError

        try:
            again = ask_again(engine, question, settings, k=methods.DEPTH, gold=gold,
                              question_id=getattr(qa, "id", ""), answers=list(getattr(qa, "answers", ())))
        except LLMError as exc:
            st.error(esc_md(one_line(exc)))
            return
    trace = Trace()
    # the session's own record of the run in progress (the list the trace appends to): a rerun after Cancel finds
    # the steps so far here (settle_stopped_run)
    st.session_state[LIVE_EVENTS] = trace.events
    st.session_state.pop(STOPPED_NOTE, None)
    top = st.empty()
    left, right = top.container().columns([1, 7], vertical_alignment="center")
    left.button("Cancel", key="ask_cancel", on_click=_cancel, help="Stop this run (and leave the model's queue); "
                "the steps so far stay on the page.")
    status = StatusLine(right.empty(), speed=engine.speed)
    view = TraceView(live=True, key="live", status=status)
    timing: dict[str, float] = {}
    started = time.perf_counter()

    def on_event(event) -> None:
        view(event)
        if event.kind == "beams_searched" and "first_graph_s" not in timing:
            timing["first_graph_s"] = time.perf_counter() - started

    trace.subscribe(on_event)
    st.session_state[TRACE_SOURCE] = "live run"
    failed = ""
    try:
        engine.retrieve(question, k=methods.DEPTH, settings=settings, gold=gold,
                        question_id=getattr(qa, "id", ""), answers=list(getattr(qa, "answers", ())), trace=trace,
                        llm=again.llm if again is not None else None)
    except Exception as exc:  # Streamlit's stop and rerun are BaseExceptions: a Cancel passes through untouched
        failed = one_line(exc)
    view.close()
    top.empty()
    if failed:
        st.error(f"The run stopped: {esc_md(failed)}")
    st.session_state.pop(LIVE_EVENTS, None)
    finished = Trace(list(trace.events))
    show(finished, "live run, the model asked afresh" if fresh else "live run", ran_here=True)
    if not failed:
        remember(finished, "Ask")
    if again is not None:
        st.session_state[AGAIN_NOTE] = (finished, again, again.difference(finished))
    show_answer_origins(finished)
    if "first_graph_s" in timing:
        st.caption(f"first graph drawn {timing['first_graph_s']:.1f} s after Ask")


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
    left.download_button("Download trace", trace.to_json(), file_name=name, mime="application/json",
                         key="download_trace", on_click="ignore", icon=":material/download:")
    if right.button("Save trace", key="save_trace", icon=":material/save:",
                    help=f"Keep it in {paths.shown(paths.traces_dir())}, shared with everyone using this app: the "
                         "Traces page lists it, and there you can tag it."):
        path = paths.traces_dir() / name
        trace.save(path)
        st.toast(f"saved {esc_md(path.name)}")
        st.session_state["saved_trace"] = str(path)
    if st.session_state.get("saved_trace"):
        st.caption(f"saved as {esc_md(Path(st.session_state['saved_trace']).name)}")


def again_lines(again: AskAgain, differs: RunDifference | None) -> list[str]:
    """What a fresh run says of itself beside the recorded one (plain text, escaped where shown)."""
    if differs is None:
        return [f"No recorded run to compare with: {again.why}. This run's answers are recorded now, so the question "
                "replays this run from here on."]
    return differs.lines()


def run_asks_a_model(trace: Trace) -> bool:
    """Whether the run on screen asked a model (its own method and settings, gear.methods): a PPR run asks none, so
    there is nothing to ask again, whatever the sidebar's method is now."""
    start = trace.first(RunStarted)
    if start is None:
        return False
    try:
        return methods.get(start.method).uses_llm(start.settings)
    except methods.UnknownMethod:
        return False


def again_panel(trace: Trace, settings: Settings) -> None:
    """"Ask the model again": the run on screen came from the recordings (or was recorded as it ran); this asks the
    model afresh and says whether and where the new run differs (llama.cpp may write other text at temperature 0
    when part of a prompt comes from its cache: docs/reproducibility.md)."""
    note = st.session_state.get(AGAIN_NOTE)
    if note is not None and note[0] is trace:
        _, again, differs = note
        lines = again_lines(again, differs)
        box = st.success if differs is not None and differs.same else st.warning
        box("**Asked the model again.** " + "  \n".join(esc_md(line) for line in lines),
            icon=":material/compare_arrows:")
    asks = run_asks_a_model(trace) and methods.get(settings.method).uses_llm(settings)
    if not asks or settings.llm == "replay" or not trace.question:
        return
    st.button("Ask the model again", key="ask_again_button", icon=":material/refresh:",
              on_click=lambda: st.session_state.update({ASK_AGAIN: True}),
              help="Ask the model afresh, past the recorded answers, and see whether the run comes out the same. "
                   "The recorded run stays the one that replays here and in `gear ask`.")
