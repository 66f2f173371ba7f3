"""Error analysis works on many saved runs at once (saved from Ask, bundled, or written by evaluations): finding
them, summarising each in one row, filtering, and tagging failures with the paper's error categories (saved as
TRACE.tags.json in the user's data folder, studio.core.paths.tags_path) belong together, apart from the page's
layout."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pandas as pd
import streamlit as st

from gear import viz
from gear.diagnosis import CATEGORY_LABELS
from gear.diagnosis.model import NONE
from gear.files import atomic_write_json
from gear.saved import SavedFileError
from studio.core import paths
from studio.core.paths import tags_path
from studio.core.report_names import NO_ANSWER
from studio.core.run_gold import RUN, gold_of, saved_questions
from studio.core.run_rows import summarise, summary
from studio.core.safe import esc_md, one_line
from studio.core.saves import read_tags, save_name
from studio.core.session import HISTORY_LIMIT, HistoryRun, history

#: the tag names: the diagnosis's error categories in the paper's words (and the protocol's three), "no error" aside
CATEGORIES = [label for name, label in CATEGORY_LABELS.items() if name != NONE]


def trace_files() -> list[tuple[str, Path]]:
    found = []
    for folder, where in ((paths.traces_dir(), "saved"), (paths.BUNDLED_TRACES, "bundled")):
        if folder.is_dir():
            found += [(where, p) for p in sorted(folder.glob("*.json")) if not p.name.endswith(".tags.json")]
    evals = paths.evals_dir()
    if evals.is_dir():
        for p in sorted(evals.glob("*/traces/*.json")):
            if not p.name.endswith(".tags.json"):
                found.append((f"eval {p.parent.parent.name}", p))
    return found


def follow_gold(row: dict, saved: dict[str, list]) -> dict:
    """The row's recall and EM against the run's gold now (studio.core.run_gold): the marks made in this session, the
    gold it ran with, or its question saved in an index's own QA set — so a run whose gold is saved, changed or removed
    shows it here at once (the file is not rewritten)."""
    gold = gold_of(row["_key"], row["question"], row["_gold"], row["_answers"], lambda: row["_shown"], saved)
    if gold.source == RUN:
        return row  # the gold it ran with, as it scored it
    recall = {k: gold.recall(row["_final"], int(k)) if row["_finished"] else None for k in ("5", "10")}
    return {**row, "R@5": _pct(recall["5"]), "R@10": _pct(recall["10"]), "EM": gold.em(row["_answer"])}


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value)


SESSION = "this session"  # the `where` of a run kept in the session's history (studio.core.session), not in a file


def trace_table(files: list[tuple[str, Path]], runs: list[HistoryRun] | None = None) -> pd.DataFrame:
    """One row per run of this session (newest first) and per trace file that opens, with its tags; a file that does
    not open (a link out of the data folder, a field of the wrong type, broken JSON) spoils only itself: it is named
    with its reason under the table. Key columns first: question, recall, answer, EM, tokens, tags."""
    rows: list[dict] = []
    broken: list[tuple[Path, str]] = []
    saved = saved_questions()
    for n, run in reversed(list(enumerate(runs or []))):
        s = follow_gold(summarise(run.trace), saved)
        rows.append({**s, "tags": "", "where": SESSION, "file": run.name, "path": f"session:{n}"})
    for where, p in files:
        try:
            s = follow_gold(summary(str(p), p.stat().st_mtime), saved)
        except (SavedFileError, OSError) as exc:
            broken.append((p, one_line(exc)))
            continue
        tags = read_tags(p)
        rows.append({**s, "tags": ", ".join(tags.get("categories", [])), "where": where, "file": p.name,
                     "path": str(p)})
    if broken:
        unopened(broken)
    columns = ["question", "R@5", "R@10", "answer", "EM", "tokens", "tags", "where", "method", "iterations", "file",
               "path"]
    return pd.DataFrame(rows, columns=columns)


def unopened(broken: list[tuple[Path, str]]) -> None:
    """The trace files left out of the table, each with the reason it did not open (one line each)."""
    with st.expander(f"{len(broken)} trace file(s) not listed: they do not open", icon=":material/warning:"):
        for path, why in broken:
            st.caption(f"{esc_md(path.name)}: {esc_md(why.removeprefix(f'{path}: '))}")


def filtered(df: pd.DataFrame) -> pd.DataFrame:
    """The rows the sidebar's filters keep (recall, answer, iterations, tagged)."""
    with st.sidebar:
        st.subheader("Filter")
        r_range = st.slider("R@10 (%)", 0, 100, (0, 100), key="tr_recall", persist_state="session")
        answered = st.selectbox("Answer", ["any", "correct (EM 1)", "wrong (EM 0)", "no answer"], key="tr_answered",
                                persist_state="session")
        max_it = int(df["iterations"].max()) if len(df) else 1
        its = st.slider("Iterations", 0, max(1, max_it), (0, max(1, max_it)), key="tr_its")
        only_tagged = st.checkbox("Only tagged", key="tr_tagged", persist_state="session")
    view = df.copy()
    r10 = view["R@10"].fillna(-1)
    keep = ((r10 >= r_range[0]) & (r10 <= r_range[1])) | view["R@10"].isna()
    if answered == "correct (EM 1)":
        keep &= view["EM"] == 1
    elif answered == "wrong (EM 0)":
        keep &= view["EM"] == 0
    elif answered == "no answer":
        keep &= view["EM"].isna()
    keep &= (view["iterations"] >= its[0]) & (view["iterations"] <= its[1])
    if only_tagged:
        keep &= view["tags"] != ""
    return view[keep]


def em_cell(value: float | None) -> str:
    """EM as the table shows it: "1", "0", or "—" for a run that gave no answer (never "None")."""
    return NO_ANSWER if value is None or pd.isna(value) else f"{value:.0f}"


def show_table(view: pd.DataFrame, total: int) -> None:
    st.caption(f"{len(view)} of {total} traces — this session's runs first (kept while the session lasts, the last "
               f"{HISTORY_LIMIT}), then saved, bundled and evaluation traces")
    shown = view.drop(columns=["path"]).assign(EM=view["EM"].map(em_cell))
    st.dataframe(shown, hide_index=True, width="stretch",
                 height=min(420, 38 + 35 * max(1, len(view))),
                 # pixel widths: the key columns, and which method and where, fit a 1280 px window
                 column_config={"question": st.column_config.TextColumn("question", width=220),
                                "R@5": st.column_config.NumberColumn("R@5 %", width=58),
                                "R@10": st.column_config.NumberColumn("R@10 %", width=62),
                                "answer": st.column_config.TextColumn("answer", width=140),
                                "EM": st.column_config.TextColumn("EM", width=40),
                                "tokens": st.column_config.NumberColumn(
                                    "tokens", width=64, help="what the run's LLM answers cost when the model wrote "
                                    "them (recorded answers as they cost when recorded)"),
                                "tags": st.column_config.TextColumn("tags", width=100),
                                "where": st.column_config.TextColumn("where", width=100),
                                "method": st.column_config.TextColumn("method", width=110)})


def pick_trace(view: pd.DataFrame) -> str:
    """The chosen row's key: a file's path, or "session:N" for a run of this session."""
    labels = {f"{r['where']} · {r['file']}" + (f" · {str(r['question'])[:60]}" if r["where"] == SESSION else ""):
              r["path"] for _, r in view.iterrows()}  # a file's name says which run it is; a session run's, when
    choice = st.selectbox("Trace", list(labels), key="tr_choice")
    return str(labels[choice])


def session_run(key: str) -> HistoryRun | None:
    if not key.startswith("session:"):
        return None
    runs = history()
    n = int(key.split(":", 1)[1])
    return runs[n] if 0 <= n < len(runs) else None


def save_session_run(run: HistoryRun) -> None:
    """Save a run of this session into data/traces (shared), where it can be tagged."""
    path = paths.traces_dir() / save_name(run.trace)
    try:
        run.trace.save(path)
    except OSError as exc:
        st.error(f"cannot save: {esc_md(one_line(exc))}")
        return
    st.toast(f"saved {esc_md(path.name)}")


def tag_form(path: Path) -> None:
    tags = read_tags(path)
    with st.form(key=f"tags-{path}"):
        st.markdown("**Tag this trace** (error categories of the paper's analysis, and the answer step, the rewriter "
                    "and the final ranking)")
        cats = st.multiselect("Categories", CATEGORIES, default=[c for c in tags.get("categories", [])
                                                                  if c in CATEGORIES])
        note = st.text_area("Note", value=tags.get("note", ""))
        if st.form_submit_button("Save tags"):
            try:
                # **tags: keep what other views wrote there (the diagnosis review: studio/gold/review.py)
                atomic_write_json(tags_path(path), {**tags, "trace": path.name, "categories": cats, "note": note,
                                                    "updated": time.strftime("%Y-%m-%dT%H:%M:%S")})
                st.success(f"saved {paths.shown(tags_path(path))}")  # where: the data folder, never assets/
            except OSError as exc:
                st.error(f"cannot save tags: {esc_md(one_line(exc))}")


def category_chart(files: list[tuple[str, Path]]) -> None:
    counts = Counter(c for _, p in files for c in read_tags(p).get("categories", []))
    if counts:
        st.plotly_chart(viz.category_figure({c: counts.get(c, 0) for c in CATEGORIES}), width="stretch",
                        key="tr_fig")
