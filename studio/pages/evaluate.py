"""An evaluation is a long batch run whose results outlive the session: the form that starts one, the reports saved
under data/evals/, and the charts that compare them live here, apart from the page's layout."""

from __future__ import annotations

import re
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from gear import methods, viz
from gear.config import Settings
from gear.eval.protocol import ONE_RUN, PAPER, per_cutoff, report_ks, source_note, traced_k
from gear.eval.report import cost_cells
from gear.files import atomic_write_json
from gear.llm.queue import listening
from studio.core import paths
from studio.core.index_questions import own_questions
from studio.core.keys import EVAL_SELECTED, EVAL_SHOW
from studio.core.report_names import NO_ANSWER, answer_cells, counted, report_titles, slug
from studio.core.resources import engine_for, ensure_index, qa_for_index
from studio.core.safe import esc_md, one_line
from studio.core.saves import open_report, saved_reports
from studio.core.session import start
from studio.core.sidebar import PRESETS, method_settings

if TYPE_CHECKING:  # the engine loads torch: imported where one is made
    from gear.agent.engine import Engine


def questions_from_upload(upload: Any) -> list:
    from gear.data.questions import load_qa

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / re.sub(r"[^A-Za-z0-9_.-]", "_", upload.name)
        path.write_bytes(upload.getvalue())
        questions, _ = load_qa(path)
    return questions


PROTOCOL_CHOICES = {ONE_RUN: "one run per question (every R@k from it)",
                    PAPER: "the paper's: one run per cut-off (Table 1)"}


def runs_label(report: dict[str, Any]) -> str:
    """The table's "runs" cell: which run a report's figures come from (gear.eval.protocol)."""
    if per_cutoff(report) and len(report_ks(report)) > 1:
        return f"one per cut-off (answers: k={traced_k(report_ks(report))})"
    return "one per question"


def depth_note(ks: list[int], protocol: str) -> str:
    """Where this evaluation's single-step runs retrieve another depth than every other page's (gear.methods.DEPTH),
    so that a question's R@5 here can differ from the one Ask and Compare show; "" where it is the same."""
    if not ks:
        return ""
    top = max(ks)
    if protocol == PAPER and len(ks) > 1:
        return (f"The paper's protocol runs a single-step method once per cut-off: its R@{min(ks)} comes from a "
                f"{min(ks)}-passage run, while Ask and Compare retrieve {methods.DEPTH} — a question's R@{min(ks)} "
                "can differ from theirs (GeAR and IRCoT are the same either way).")
    if top != methods.DEPTH:
        return (f"Single-step methods retrieve {top} passages here (the largest cut-off), {methods.DEPTH} on the Ask "
                f"and Compare pages: a question's R@k can differ from theirs (a fused list depends on how deep each "
                f"list is read); with {methods.DEPTH} as the largest cut-off they are the same.")
    return ""


CANCELLED = "eval_cancelled"  # session state: the Cancel button of a running evaluation was pressed


def _cancelled() -> None:
    st.session_state[CANCELLED] = True


OWN, BENCHMARK, UPLOAD = "own", "benchmark", "upload"  # where an evaluation's questions come from


def qa_sources(index: Path) -> dict[str, tuple[str, list]]:
    """The QA sets an evaluation of this index can use: its own questions (saved with their gold passages on the Ask
    page or with `gear qa add`), the QA set it came with (a demo's, or one uploaded when it was built), an upload."""
    found: dict[str, tuple[str, list]] = {}
    own = own_questions(index)
    if own:
        found[OWN] = (f"your own questions ({len(own)}, saved with their gold passages)", own)
    bench = qa_for_index(index)
    if bench:
        found[BENCHMARK] = (f"the index's QA set ({len(bench)})", bench)
    found[UPLOAD] = ("upload a QA file", [])
    return found


def choose_questions(index: Path) -> list:
    sources = qa_sources(index)
    if len(sources) > 1:
        source = st.radio("QA set", list(sources), format_func=lambda s: sources[s][0], key=f"eval_qa_{index.name}",
                          horizontal=True, help="Your own questions are kept beside the index (own_qa.json): "
                                                "“Save as a test question” on the Ask page, or `gear qa add`.")
    else:
        source = UPLOAD
    if source != UPLOAD:
        return sources[source][1]
    upload = st.file_uploader("QA set (JSON: MuSiQue, HippoRAG or HotpotQA/2Wiki schema)", type=["json"],
                              key="eval_upload")
    if upload is None:
        st.info("No QA set for this index yet: upload one, or save questions with their gold passages on the Ask "
                "page (“Save as a test question”).")
        return []
    try:
        return questions_from_upload(upload)
    except ValueError as exc:  # gear.data.corpus.InputError: the file, record and field, in one line
        st.error(esc_md(one_line(exc)))
        return []


def run_form(index: Path, base: Settings) -> None:
    questions = choose_questions(index)
    if not questions:
        return
    n = (st.slider("Questions", 1, len(questions), min(10, len(questions)), key="eval_n") if len(questions) > 1
         else 1)
    start("eval_methods", ["BM25", "Hybrid"])
    labels = st.multiselect("Methods", list(PRESETS), key="eval_methods", persist_state="session",
                            help="SyncGE, GeAR and IRCoT ask the LLM chosen in the sidebar; the base retrievers, "
                                 "NaiveGE and PPR ask none (unless PPR's recognition filter is on). Multi-step "
                                 "methods (GeAR, IRCoT) retrieve the sidebar's k passages at each step.")
    start("eval_ks", [5, 10, 15])
    ks = st.multiselect("Recall cut-offs k", [1, 2, 5, 10, 15, 20], key="eval_ks", persist_state="session")
    start("eval_protocol", ONE_RUN)
    protocol = st.radio("Protocol", list(PROTOCOL_CHOICES), key="eval_protocol", persist_state="session",
                        format_func=PROTOCOL_CHOICES.get, horizontal=True,
                        help="One run: each question runs once, at the largest k, and every R@k, the answer and "
                             "the diagnosis read that one ranked list (R@k never falls as k grows). The paper's "
                             "Table 1 protocol runs a single-step method once per cut-off with k passages, so "
                             "R@15 can fall below R@10 (SyncGE's reader sees other passages at each k); the "
                             "answers and the diagnosis then read the largest k's run. GeAR and IRCoT run once "
                             "per question either way.")
    if note := depth_note(ks, protocol):
        st.caption(note)
    start("eval_traces", True)
    save_traces = st.checkbox("Save a trace per question (for error analysis on the Traces page)", key="eval_traces",
                              persist_state="session")
    if st.session_state.pop(CANCELLED, False):
        st.warning("Evaluation cancelled: the method that was running was not saved (those finished before are).")
    if not st.button("Run evaluation", type="primary", key="eval_run", disabled=not labels or not ks):
        return
    ready = ensure_index(index)
    if ready is None:
        return
    run_evaluations(engine_for(ready), index, base, questions[:n], labels, ks, save_traces, protocol)


def run_evaluations(engine: Engine, index: Path, base: Settings, questions: list, labels: list[str], ks: list[int],
                    save_traces: bool, protocol: str = ONE_RUN) -> None:
    """Each chosen method over the questions, one status box each, with a Cancel button; the reports are saved under
    data/evals/ and selected for the Results tab."""
    # time and a random suffix: two sessions evaluating the same index and method in the same second get their own
    # report and traces folder (data/evals/ is shared)
    stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"
    done = []
    cancel = st.empty()
    cancel.button("Cancel", key="eval_cancel", on_click=_cancelled, help="Stop the evaluation (and leave the model's "
                  "queue); the methods already finished stay saved.")
    for label in labels:
        name = f"{stamp}_{index.name}_{slug(label)}"  # studio.core.report_names reads it back
        if evaluate_method(engine, index, method_settings(base, label), label, questions, ks, name, save_traces,
                           protocol):
            done.append(name)
    cancel.empty()
    if done:
        st.session_state[EVAL_SELECTED] = done
        st.session_state[EVAL_SHOW] = done  # the Results tab below, drawn after this, shows them
        st.success(f"Saved {counted(len(done), 'report')} to {paths.shown(paths.evals_dir())}/ — see the Results tab.")


def evaluate_method(engine: Engine, index: Path, settings: Settings, label: str, questions: list, ks: list[int],
                    name: str, save_traces: bool, protocol: str = ONE_RUN) -> bool:
    """One method's evaluation in a status box, its report saved as data/evals/<name>.json; False when it failed."""
    with st.status(f"Evaluating {label} on {counted(len(questions), 'question')}…", expanded=True) as box:
        bar = st.progress(0, text="starting")
        waiting = st.empty()

        def progress(i: int, total: int, qid: str) -> None:
            bar.progress(min(100, int(100 * i / max(total, 1))), text=f"{i} / {total}  ({esc_md(qid)})")

        def on_wait(ahead: int) -> None:
            # drawn on every poll of the model's queue: that is where Streamlit can stop a cancelled run
            if ahead:
                waiting.caption(f":material/hourglass_top: waiting for the model: {ahead} ahead")
            else:
                waiting.empty()

        trace_dir = paths.evals_dir() / name / "traces" if save_traces else None
        try:
            from gear.eval.report import evaluate, gold_note

            with listening(on_wait):
                report = evaluate(engine, questions, settings, ks, progress=progress, trace_dir=trace_dir,
                                  protocol=protocol)
            viz_report = report.to_dict()
            viz_report["label"] = label
            viz_report["index"] = index.name
            path = paths.evals_dir() / f"{name}.json"
            atomic_write_json(path, viz_report)
            box.update(label=f"{label}: R@{ks[-1]} = {viz_report['recall'][str(sorted(ks)[-1])]:.1f}%  "
                             f"(saved {esc_md(path.name)})", state="complete", expanded=False)
            if note := gold_note(viz_report, name=esc_md):
                st.warning(esc_md(note))
            return True
        except Exception as exc:
            box.update(label=f"{label} failed", state="error")
            st.error(f"{type(exc).__name__}: {esc_md(one_line(exc))}")
            return False




def show_results() -> None:
    reports = saved_reports()
    if not reports:
        st.info(f"No saved evaluations yet ({paths.shown(paths.evals_dir())}/*.json).")
        return
    default: list[str] | None = [n for n in st.session_state.get(EVAL_SELECTED, []) if n in reports] \
        or list(reports)[:3]
    if EVAL_SHOW in st.session_state:  # the picker's own state (an evaluation just run put its reports there)
        st.session_state[EVAL_SHOW] = [n for n in st.session_state[EVAL_SHOW] if n in reports]
        default = None
    titles = report_titles(list(reports), list(PRESETS))
    chosen = st.multiselect("Saved evaluations", list(reports), default=default, key=EVAL_SHOW,
                            format_func=lambda name: titles.get(name, name),
                            help=f"index · method · when it ran; each is saved as {paths.shown(paths.evals_dir())}/"
                                 "<file>.json (the table's last column), the name gear diagnose and scripts use.")
    data, opened = [], []
    for name in chosen:
        try:  # a report that does not open spoils only itself: named with its reason, the others shown
            data.append(open_report(reports[name]))
            opened.append(name)
        except (OSError, ValueError) as exc:
            st.error(f"{esc_md(name)}: cannot read ({esc_md(one_line(exc))})")
    if not data:
        return
    rows: list[dict[str, Any]] = []
    unanswered: dict[str, list[str]] = {}
    for name, r in zip(opened, data, strict=True):
        # what a person compares first, in view at 1280 px: recall, answers and cost; the method's label (in the
        # report's title already) and which runs the figures read after them
        row: dict[str, Any] = {"report": titles.get(name, name), "questions": r.get("n_questions")}
        row.update({f"R@{k}": round(v, 1) for k, v in r.get("recall", {}).items()})
        row["EM"], row["F1"], why = answer_cells(r)
        if why:
            unanswered.setdefault(why, []).append(viz.report_label(r))
        if cells := cost_cells(r):
            row["tokens/q"], row["seconds/q"] = cells
        row.update({"method": viz.report_label(r), "runs": runs_label(r), "file": f"{name}.json"})
        rows.append(row)
    table = pd.DataFrame(rows)
    if "tokens/q" in table:  # a report whose runs asked no LLM has no cost: "—", and the columns keep their place
        table[["tokens/q", "seconds/q"]] = table[["tokens/q", "seconds/q"]].fillna(NO_ANSWER)
        order = [c for c in table.columns if c not in ("tokens/q", "seconds/q")]
        at = order.index("method")
        table = table[[*order[:at], "tokens/q", "seconds/q", *order[at:]]]
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"report": st.column_config.TextColumn("report", pinned=True),
                                **{c: st.column_config.TextColumn(c, width="small") for c in ("EM", "F1")},
                                "runs": st.column_config.TextColumn(
                                    "runs", help="which run each figure comes from: one run per question at the "
                                    "largest k (every R@k from it), or one run per cut-off (the paper's Table 1 "
                                    "protocol)"),
                                "questions": st.column_config.NumberColumn("questions", width=70),
                                "tokens/q": st.column_config.TextColumn(
                                    "tokens/q", width=70, help="the LLM tokens a question's answers cost when the "
                                    "model wrote them (recorded answers as they cost when recorded)"),
                                "seconds/q": st.column_config.TextColumn(
                                    "seconds/q", help="the model's seconds for a question's answers when it wrote "
                                    "them — “recorded” when they were replayed from recordings — and the run's own "
                                    "seconds beside them")})
    if unanswered:
        st.caption("EM / F1 “—”: " + "; ".join(f"{', '.join(dict.fromkeys(names))} — {why}"
                                               for why, names in unanswered.items())
                   + " (the paper's QA step answers after SyncGE, GeAR and IRCoT).")
    for name, r in zip(opened, data, strict=True):
        if note := source_note(r):
            st.caption(f"{esc_md(titles.get(name, name))}: {esc_md(note)}")
    st.plotly_chart(viz.recall_by_method_figure(data), width="stretch", key="fig_recall")
    if any(r.get("recall_per_iteration") for r in data):
        st.plotly_chart(viz.recall_per_iteration_figure(data), width="stretch", key="fig_iter")
    else:
        st.caption("Recall per iteration appears for multi-step runs (GeAR, IRCoT).")
    st.plotly_chart(viz.recall_by_hop_figure(data), width="stretch", key="fig_hop")
    if any(r.get("tokens_per_question") for r in data):
        st.plotly_chart(viz.tokens_per_question_figure(data), width="stretch", key="fig_tokens")
