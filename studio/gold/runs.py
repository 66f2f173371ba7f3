"""Where was the gold lost? — over many runs: an evaluation's questions on the Evaluate page, a folder of
saved traces on the Traces page. The funnel of gold passages through the stages, the counts per proposed category
and per hop type, and a table of questions to filter by the stage a passage was lost at and by category; a row shows
its run's stage table, opens its trace on the Ask page, and takes the person's verdict on the proposed category
(kept as the run's tags: studio.gold.review)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from gear import viz
from gear.diagnosis import CATEGORY_LABELS, DEFAULT_K, Diagnosis, diagnose, stage_label, summarise
from gear.diagnosis.model import FOUND_STATUS, LOST_STATUS, NONE, OPEN_STATUS
from gear.eval.protocol import diagnosis_k, per_cutoff, report_ks, traced_k
from gear.eval.report_file import earlier_rules_note, kept_diagnosis, trace_path
from gear.trace import TraceError
from gear.viz.diagnosis import diagnosis_category_figure, funnel_figure, lost_at_figure
from studio.core import paths
from studio.core.keys import EVAL_SHOW
from studio.core.report_names import NO_ANSWER, counted, report_title
from studio.core.run_gold import RUN, gold_of, saved_questions
from studio.core.run_rows import summary
from studio.core.safe import esc_md, one_line
from studio.core.saves import open_report, open_trace, saved_reports
from studio.core.session import open_in_ask
from studio.core.sidebar import PRESETS
from studio.gold.panel import LOST_WIDTH, QATexts, nothing_to_diagnose, show_diagnosis
from studio.gold.review import review_of, save_review

EVERY_FOLDER = "every trace listed above"
SHORT_LABELS = {"base_retriever": "base retriever", "extraction": "extraction", "graph": "graph", "reader": "reader",
                "reasoner": "reasoner", "dataset": "dataset", "answer": "answer step", "rewriter": "rewriter",
                "ranking": "final ranking", "none": "no error"}  # where ten long names crowd


@dataclass(frozen=True)
class DiagnosedRun:
    """One run's diagnosis, the group it is counted in (an evaluation report, or the method's run name), and its
    saved trace when there is one (to open it and keep the person's verdict beside it)."""

    group: str
    diagnosis: Diagnosis
    trace: Path | None


# -- where diagnoses come from: evaluation reports ---------------------------------------------------------------------
def report_trace(report_path: Path, entry: dict[str, Any]) -> Path | None:
    """The saved trace of one question of a report (gear.eval.report_file.trace_path: the path it recorded, or the
    same file name in the report's own traces folder, data/evals/<report>/traces/); None, said in one line, when the
    report points outside its folder and the data folder."""
    try:
        return trace_path(report_path, entry)
    except ValueError as exc:
        st.caption(esc_md(one_line(exc)))
        return None


def _report_k(report: dict[str, Any]) -> int:
    """The cut-off a report's diagnosis counts at (gear.eval.protocol.diagnosis_k), for one diagnosed from its traces:
    the traces are the largest cut-off's runs; a report made before reports said their protocol counted at the
    smallest cut-off."""
    ks = report_ks(report)
    if not ks:
        return DEFAULT_K
    return diagnosis_k(ks, per_cutoff(report) and "protocol" in report)


def recall_agreement(name: str, report: dict[str, Any], runs: Sequence[DiagnosedRun]) -> str:
    """One line under the funnel: the gold passages the diagnosis found within each cut-off, from the same runs as
    the R@k in the table above (R@k averages them per question), and, for a report run once per cut-off, which run
    the diagnosis reads."""
    ks = report_ks(report)
    diagnoses = [r.diagnosis for r in runs]
    if not ks or not diagnoses:
        return ""
    gold = sum(len(d.passages) for d in diagnoses)
    if per_cutoff(report) and len(ks) > 1:
        top = traced_k(ks)
        k = diagnoses[0].k
        return (f"{name}: its diagnosis reads the k={top} run of each question (one run per cut-off, the paper's "
                f"protocol): {sum(d.found_within(k) for d in diagnoses)} of {gold} gold passages within {k}"
                + (f", the run R@{top} above counts." if k == top else f"; R@{k} above comes from a run of its own."))
    found = " / ".join(str(sum(d.found_within(k) for d in diagnoses)) for k in ks)
    return (f"{name}: gold passages found within {' / '.join(map(str, ks))}: {found} of {gold}, in the same run of "
            "each question as its R@k above (R@k is their share per question, averaged over the questions).")


def from_report(name: str, path: Path, report: dict[str, Any], group: str) -> tuple[list[DiagnosedRun], int]:
    """The diagnoses a report carries (per_question[].diagnosis); a report saved before it carried them is diagnosed
    from its saved traces. Returns the runs and how many questions had neither."""
    runs, missing = [], 0
    k = _report_k(report)
    texts = QATexts.for_index(paths.index_dir(str(report["index"]))) if report.get("index") else QATexts([])
    for entry in report.get("per_question", []):
        trace = report_trace(path, entry)
        d = None
        if entry.get("diagnosis"):
            d = kept_diagnosis(entry["diagnosis"])
        if d is None and trace is not None:
            d = diagnosed_file(trace, k, texts)
        if d is None:
            missing += 1
            continue
        runs.append(DiagnosedRun(group, d, trace))
    return runs, missing


def evaluation_diagnosis() -> None:
    """The Evaluate page's Results tab, under its charts: the diagnosis of the evaluations chosen there."""
    reports = saved_reports()
    chosen = [n for n in st.session_state.get(EVAL_SHOW) or [] if n in reports]
    if not chosen:
        return
    st.header("Where was the gold lost?")
    runs: list[DiagnosedRun] = []
    groups: set[str] = set()
    agreement: list[str] = []
    for name in chosen:
        try:
            report = open_report(reports[name])
        except (OSError, ValueError):
            continue  # the results above say it cannot be read
        group = report.get("label") or viz.report_label(report)
        if per_cutoff(report) and len(report_ks(report)) > 1:  # its funnel is one cut-off's run: said in its name
            group = f"{group} (k={traced_k(report_ks(report))} run)"
        if group in groups:
            group = f"{group} · {report_title(name, list(PRESETS))}"
        groups.add(group)
        found, missing = from_report(name, reports[name], report, group)
        runs += found
        if line := recall_agreement(group, report, found):
            agreement.append(line)
        if note := earlier_rules_note(report):
            st.caption(f"{esc_md(report_title(name, list(PRESETS)))}: {esc_md(note)}.")
        if missing:
            st.caption(f"{esc_md(report_title(name, list(PRESETS)))}: {counted(missing, 'question')} without a "
                       "diagnosis or a saved trace (an evaluation "
                       "saved before reports carried the diagnosis, without traces).")
    if not runs:
        st.info("These evaluations carry no diagnosis and saved no traces to diagnose.")
        return
    for line in agreement:
        st.caption(esc_md(line))
    runs_view(runs, key="eval_diag")


# -- where diagnoses come from: a folder of traces ---------------------------------------------------------------------
@st.cache_data(show_spinner=False, max_entries=5000)
def _diagnosed(path: str, mtime: float, k: int, texts_key: str, _texts: QATexts) -> dict[str, Any] | None:
    trace = open_trace(path)
    if nothing_to_diagnose(trace):
        return None
    return diagnose(trace, k, _texts.for_trace(trace), hop=_texts.hop_for(trace)).to_dict()


def diagnosed_file(path: Path, k: int, texts: QATexts) -> Diagnosis | None:
    """The diagnosis of a saved trace (remembered per file version); None when it has no gold passages or cannot be
    read."""
    try:
        data = _diagnosed(str(path), path.stat().st_mtime, k, texts.fingerprint(), texts)
    except (TraceError, OSError, ValueError):
        return None
    return None if data is None else Diagnosis.from_dict(data)


def diagnosed_now(path: Path, texts: QATexts, saved: dict[str, list[Any]]) -> Diagnosis | None:
    """A saved trace's diagnosis against its gold now (studio.core.run_gold): the gold it ran with (remembered per file
    version), or the marks made on it in this session, or its question saved in an index's own QA set; None when no
    gold passage is known or it cannot be read."""

    try:
        row = summary(str(path), path.stat().st_mtime)
    except (TraceError, OSError, ValueError):
        return None
    gold = gold_of(row["_key"], row["question"], row["_gold"], row["_answers"], lambda: row["_shown"], saved)
    if gold.source == RUN:
        return diagnosed_file(path, DEFAULT_K, texts)
    if not gold.known:
        return None
    from gear.diagnosis.gold_marks import diagnose_marked

    trace = open_trace(path)
    return diagnose_marked(trace, list(gold.ids), list(gold.answers) or None,
                           passages={**texts.for_trace(trace), **gold.unseen}, k=DEFAULT_K)


def traces_diagnosis(listed: pd.DataFrame) -> None:
    """The Traces page: the diagnosis over a folder of the traces its filters keep."""
    st.header("Where was the gold lost? — over a folder of traces")
    if listed.empty or "path" not in listed.columns:
        st.info("No traces to diagnose.")
        return
    folders = [EVERY_FOLDER, *dict.fromkeys(listed["where"])]
    folder = st.selectbox("Folder", folders, key="tr_diag_folder",
                          help="saved: runs saved from Ask; bundled: the examples; eval …: an evaluation's traces")
    rows = listed if folder == EVERY_FOLDER else listed[listed["where"] == folder]
    texts = QATexts.known()
    saved = saved_questions()
    runs, skipped = [], 0
    for path in rows["path"]:
        d = diagnosed_now(Path(path), texts, saved)
        if d is None:
            skipped += 1
            continue
        runs.append(DiagnosedRun(d.run, d, Path(path)))
    if skipped:
        st.caption(f"{counted(skipped, 'trace')} without gold passages (questions typed freely) "
                   f"{'is' if skipped == 1 else 'are'} not diagnosed.")
    if not runs:
        st.info("None of these traces knows its gold passages: nothing to diagnose.")
        return
    runs_view(runs, key="tr_diag")


# -- the view over many runs -------------------------------------------------------------------------------------------
def figures_input(runs: Sequence[DiagnosedRun]) -> dict[str, dict[str, Any]]:
    """The figures' summaries, one per group (a group holding runs of several methods splits by run)."""
    out: dict[str, dict[str, Any]] = {}
    for group in dict.fromkeys(r.group for r in runs):
        summary = summarise(r.diagnosis for r in runs if r.group == group).to_dict()
        for run, counts in summary.items():
            out[group if len(summary) == 1 or run == group else f"{group} · {run}"] = counts
    return out


def hop_rows(summaries: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per run and hop type: questions, gold passages found of all, and the questions per proposed category (in one
    column, in short words: seven category columns do not fit a laptop's screen)."""
    rows = []
    for run, s in summaries.items():
        for hop, h in s["by_hop"].items():
            counts = " · ".join(f"{SHORT_LABELS.get(c, c)} {n}" for c, n in h["categories"].items() if n)
            rows.append({"run": run, "hop": hop, "questions": h["questions"],
                         "gold found": f"{h['found']} / {h['gold']}", "proposed categories": counts})
    return rows


def _lost_words(d: Diagnosis, attribute: str) -> list[str]:
    out = []
    for p in d.passages:
        stage = getattr(p, attribute)
        if p.status == LOST_STATUS and stage:
            out.append(stage_label(stage, d.k))
        elif p.status == OPEN_STATUS and stage and attribute == "lost_at":
            out.append(f"open ({stage_label(stage, d.k)})")
    return list(dict.fromkeys(out))


def proposed_words(d: Diagnosis) -> str:
    """The proposal in a table cell with its confidence: its category's name ("final ranking · high"), or both when it
    is undetermined between two ("graph or extraction · low")."""
    if d.category is None:
        return "—"
    name = " or ".join(SHORT_LABELS.get(c, c) for c in d.undetermined) if d.undetermined else \
        CATEGORY_LABELS.get(d.category, d.category)
    return f"{name} · {d.confidence}" if d.confidence else name


def question_rows(runs: Sequence[DiagnosedRun]) -> pd.DataFrame:
    rows = []
    for r in runs:
        d = r.diagnosis
        review = review_of(r.trace, d)
        # the columns a person sorts by first, the method among them (they fit 1280 px); the hop type after them
        rows.append({"question": d.question, "method": r.group,
                     "found": f"{sum(p.status == FOUND_STATUS for p in d.passages)}/{len(d.passages)}",
                     "lost at": ", ".join(_lost_words(d, "lost_at")) or "—",
                     "dropped at": ", ".join(_lost_words(d, "dropped_at")) or "—",
                     "proposed": proposed_words(d),
                     "yours": review.words,
                     "EM": NO_ANSWER if d.answer is None or d.answer.em is None else f"{d.answer.em:.0f}",
                     "hop": d.hop,
                     "_category": d.category or "undetermined",
                     "_lost": _lost_words(d, "lost_at"), "_dropped": _lost_words(d, "dropped_at")})
    return pd.DataFrame(rows)


def runs_view(runs: Sequence[DiagnosedRun], key: str) -> None:
    """Funnel, losses, categories and hop types; then the questions, filterable, a row opening its run."""
    summaries = figures_input(runs)
    gold = sum(s["gold"] for s in summaries.values())
    found = sum(s["found"] for s in summaries.values())
    cutoffs = sorted({r.diagnosis.k for r in runs})
    st.caption(f"{counted(len(runs), 'run')}, {counted(gold, 'gold passage')}, {found} found in the final top "
               f"{' or '.join(map(str, cutoffs))}"
               + (" (each run at its own cut-off)" if len(cutoffs) > 1 else "") + ". "
               "Lost at: the first stage a passage never reached; dropped at: where it left the run for good "
               "(the graph reaches passages the base list missed, so the two differ).")
    funnel, lost, categories, hops = st.tabs(["Funnel", "Lost at", "Categories", "Per hop type"])
    with funnel:
        st.plotly_chart(funnel_figure(summaries), width="stretch", key=f"{key}_funnel")
    with lost:
        by = st.radio("Count by", ["lost at", "dropped at"], horizontal=True, key=f"{key}_lost_by")
        st.plotly_chart(lost_at_figure(summaries, "lost_at" if by == "lost at" else "dropped_at"),
                        width="stretch", key=f"{key}_lost")
    with categories:
        st.plotly_chart(diagnosis_category_figure(summaries), width="stretch", key=f"{key}_categories")
    with hops:
        st.dataframe(pd.DataFrame(hop_rows(summaries)), hide_index=True, width="stretch",
                     column_config={"proposed categories": st.column_config.TextColumn(width="large")})
    questions_table(runs, key)


def questions_table(runs: Sequence[DiagnosedRun], key: str) -> None:
    st.subheader("Questions")
    table = question_rows(runs)
    lost_options = sorted({s for v in table["_lost"] for s in v})
    dropped_options = sorted({s for v in table["_dropped"] for s in v})
    category_options = [c for c in (*CATEGORY_LABELS, "undetermined") if c in set(table["_category"])]
    left, middle, right = st.columns(3)
    lost_at = left.multiselect("Lost at", lost_options, key=f"{key}_f_lost",
                               help="questions with a gold passage lost at one of these stages")
    dropped_at = middle.multiselect("Dropped at", dropped_options, key=f"{key}_f_dropped",
                                    help="questions with a gold passage that left the run at one of these stages")
    chosen = right.multiselect("Proposed category", category_options, key=f"{key}_f_category",
                               format_func=lambda c: CATEGORY_LABELS.get(c, c))
    keep = pd.Series(True, index=table.index)
    if lost_at:
        keep &= table["_lost"].map(lambda v: bool(set(v) & set(lost_at)))
    if dropped_at:
        keep &= table["_dropped"].map(lambda v: bool(set(v) & set(dropped_at)))
    if chosen:
        keep &= table["_category"].isin(chosen)
    view = table[keep]
    st.caption(f"{len(view)} of {counted(len(table), 'question')}. Select a row to see its stage table, open its "
               "trace on the "
               "Ask page, or accept or change its category.")
    shown = view[[c for c in view.columns if not c.startswith("_")]]
    # the table's key follows the filters: a selection never points at a row another filter put in its place
    filters = hashlib.sha1(repr((lost_at, dropped_at, chosen)).encode()).hexdigest()[:8]
    event = st.dataframe(shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key=f"{key}_questions_{filters}", height=min(460, 38 + 35 * max(1, len(shown))),
                         column_config={"question": st.column_config.TextColumn("question", width=240, pinned=True),
                                        "method": st.column_config.TextColumn("method", width=130),
                                        "lost at": st.column_config.TextColumn("lost at", width=LOST_WIDTH),
                                        "dropped at": st.column_config.TextColumn("dropped at", width=LOST_WIDTH),
                                        "EM": st.column_config.TextColumn(
                                            "EM", width="small", help="exact match of the run's answer (0 or 100); "
                                            "—: the run gave none (a method that only retrieves)")})
    selected = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    if selected and selected[0] < len(view):
        run_detail(runs[int(view.index[selected[0]])], key)


def run_detail(run: DiagnosedRun, key: str) -> None:
    d = run.diagnosis
    st.markdown(f"**{esc_md(d.question)}** — {esc_md(run.group)} · {esc_md(d.question_id or 'no id')}")
    show_diagnosis(d, key=f"{key}_detail")
    if run.trace is None:
        st.caption("No trace was saved for this question (an evaluation run without “Save a trace per question”): "
                   "it cannot be opened or reviewed.")
        return
    ident = hashlib.sha1(str(run.trace).encode()).hexdigest()[:10]
    review = review_of(run.trace, d)
    proposed = d.category or NONE
    verdict = (f"{esc_md(CATEGORY_LABELS.get(review.chosen, review.chosen))}"
               + (" (the proposal)" if review.accepted else "") if review.chosen else "not given yet")
    st.markdown(f"**Your verdict:** {verdict} · proposed: {esc_md(CATEGORY_LABELS.get(proposed, proposed))}")
    names = list(CATEGORY_LABELS)
    open_col, accept_col, pick_col, save_col = st.columns([2, 2, 3, 1], vertical_alignment="bottom")
    if open_col.button("Open on the Ask page", key=f"{key}_open_{ident}", help="its whole trace, step by step"):
        open_in_ask(open_trace(run.trace), run.trace)
    accept = accept_col.button("Accept the proposal", key=f"{key}_accept_{ident}", type="primary",
                               help="keep the proposed category as this run's tag (Traces page)")
    choice = pick_col.selectbox("Or change it to", names, index=names.index(review.chosen or proposed),
                                format_func=lambda c: CATEGORY_LABELS.get(c, c), key=f"{key}_choice_{ident}")
    change = save_col.button("Save", key=f"{key}_save_{ident}")
    if accept or change:
        try:
            path = save_review(run.trace, d, proposed if accept else choice)
        except (OSError, ValueError) as exc:
            st.error(f"cannot save the verdict: {esc_md(one_line(exc))}")
            return
        st.toast(f"saved {esc_md(path.name)}")
        st.rerun()
