"""GeAR Studio — the Ask page (a live walk-through of one question) and the app's navigation.

Run with `make run` or `python -m streamlit run app.py` (settings in .streamlit/config.toml keep it offline).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import streamlit as st

from gear.trace import Trace, TraceError
from studio import demo
from studio.common import (
    choose_index,
    engine_for,
    ensure_index,
    esc_md,
    guarded,
    one_line,
    qa_for_index,
    setup,
    sidebar_settings,
    start_demo_builds,
    traces_dir,
    warm_engine,
)
from studio.render import TraceView, teach

EXAMPLE_NONE = "(type your own question)"


def bundled_traces() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, tag in ((demo.BUNDLED_TRACES, "example"), (traces_dir(), "saved")):
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


def question_box(index: Path | None) -> tuple[str, object | None]:
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


def run_live(index: Path, question: str, qa: object | None, settings) -> None:
    ready = ensure_index(index)
    if ready is None:
        return
    engine = engine_for(ready)
    gold = engine.gold_ids(qa.gold) if qa is not None else []
    trace = Trace()
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
    except Exception as exc:
        if type(exc).__name__ in ("RerunException", "StopException"):
            raise
        view.close()
        st.error(f"The run stopped: {one_line(exc)}")
    else:
        view.close()
    st.session_state["trace"] = Trace(list(trace.events))
    st.session_state["teach_step"] = 0
    if "first_graph_s" in timing:
        st.caption(f"first graph drawn {timing['first_graph_s']:.1f} s after Ask")


def save_panel(trace: Trace) -> None:
    name = f"{time.strftime('%Y%m%d-%H%M%S')}_{slug(trace.question)}.json"
    left, right, _ = st.columns([1, 1, 3])
    left.download_button("⬇️ Download trace", trace.to_json(), file_name=name, mime="application/json",
                         key="download_trace")
    if right.button("💾 Save to data/traces", key="save_trace"):
        path = traces_dir() / name
        trace.save(path)
        st.toast(f"saved {path.name}")
        st.session_state["saved_trace"] = str(path)
    if st.session_state.get("saved_trace"):
        st.caption(f"saved as {esc_md(Path(st.session_state['saved_trace']).name)}")


@guarded
def ask_page() -> None:
    setup("GeAR Studio — Ask", "💬")
    first_visit()
    start_demo_builds()
    index = choose_index()
    settings = sidebar_settings()
    warm_engine(index)
    teaching = bool(st.session_state.get("teaching"))
    if not teaching:
        st.markdown(
            "Type a multi-hop question and watch each GeAR iteration: base passages, proximal triples, the linked "
            "initial nodes, the expanded beams as a graph, the fused list, the gist memory, the reasoner's verdict "
            "and the rewritten query.")
        replay_panel()
    # teaching mode keeps the screen for the lesson: the question box folds away (its widgets stay alive)
    box = st.expander("Question", expanded=False) if teaching else st.container()
    with box:
        question, qa = question_box(index)
        c1, c2, c3 = st.columns([1, 2, 3])
        ask = c1.button("Ask", type="primary", key="ask", disabled=index is None or not question, width="stretch")
        if qa is not None:
            c3.caption("From the QA set: gold passages (★) and answers are known.")
    toggle_at = c2 if not teaching else st
    teaching = toggle_at.toggle("Teaching mode (one module at a time)", key="teaching")
    if ask and index is not None:
        run_live(index, question, qa, settings)
        trace = st.session_state.get("trace")
        if trace is not None:
            save_panel(trace)
        return
    trace = st.session_state.get("trace")
    if trace is None:
        st.info("Ask a question, or replay a saved trace.")
        return
    st.caption("Showing: " + esc_md(st.session_state.get("trace_source", "trace")))
    if teaching:
        teach(trace)
    else:
        TraceView(key="replay").replay(trace)
    save_panel(trace)


def main() -> None:
    st.set_page_config(page_title="GeAR Studio", page_icon="🔎", layout="wide")
    pages = [
        st.Page(ask_page, title="Ask", icon="💬", default=True),
        st.Page("pages/1_Compare.py", title="Compare", icon="⚖️"),
        st.Page("pages/2_Evaluate.py", title="Evaluate", icon="📊"),
        st.Page("pages/3_Traces.py", title="Traces", icon="🗂️"),
        st.Page("pages/4_Index.py", title="Index", icon="🧱"),
    ]
    st.session_state["_ask_page"] = pages[0]
    st.navigation(pages).run()


main()
