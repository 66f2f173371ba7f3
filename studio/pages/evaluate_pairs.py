"""Two runs, question by question: the Evaluate page's tab of two evaluations lined up — the paired numbers,
the flows of gold passages and of proposed categories from A to B (each band picked beside its figure: Streamlit's
selection events do not fire on Sankey links, streamlit/streamlit#8933), the table with its filters, and a question's
two runs side by side at the first stage where they part. The pairing is gear.eval.pairing's, the same `gear compare`
prints; this module only picks the reports and draws. Questions, titles and answers are escaped before they become
Markdown."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from gear.diagnosis import Diagnosis
from gear.eval.pairing import (
    ANSWERS,
    KINDS,
    NO_CATEGORY,
    PASSAGES,
    Band,
    Pairing,
    PairingError,
    QuestionPair,
    diagnoses_from_traces,
    pair_reports,
    partings,
)
from gear.eval.report_file import earlier_rules_note, kept_diagnosis, trace_path
from gear.events import RunStarted
from gear.trace import TraceError
from gear.viz.diagnosis import stage_table
from gear.viz.pairing import band_choices, category_words, end_words, flow_figure
from studio.core.keys import EVAL_SELECTED
from studio.core.paths import BUNDLED_EVALS
from studio.core.report_names import NO_ANSWER, report_titles
from studio.core.safe import esc_md, one_line
from studio.core.saves import open_report, open_trace, saved_reports
from studio.core.sidebar import PRESETS
from studio.views.trace import TraceView

BUNDLED = BUNDLED_EVALS
EVERY_BAND = "every question"
STAGE_EVENTS = {"base": "base_retrieved", "read": "proximal_triples", "link": "triples_linked",
                "initial": "initial_nodes", "beam": "beams_searched", "expanded": "passages_expanded",
                "fused": "passages_fused", "gist": "gist_updated", "linked": "passages_linked", "seed": "ppr_seeded",
                "ranked": "ppr_ranked", "retrieval": "passages_added", "final": "final_ranking"}


def report_files() -> dict[str, Path]:
    """The reports a person can line up: their own (data/evals/), newest first, then the project's bundled ones."""
    found = dict(saved_reports())
    if BUNDLED.is_dir():
        for path in sorted(BUNDLED.glob("*.json")):
            found.setdefault(f"bundled: {path.stem}", path)
    return found


@st.cache_data(show_spinner=False, max_entries=64)
def _read(path: str, mtime: float) -> dict[str, Any]:
    return open_report(Path(path))


def _or_dash(value: float | str | None) -> str:
    """A cell of the questions table: "—" where a run gave no answer (a method without an LLM), never "None"."""
    if value is None or value == "":
        return NO_ANSWER
    return value if isinstance(value, str) else f"{value:.0f}"


def read_report(path: Path) -> dict[str, Any]:
    return _read(str(path), path.stat().st_mtime)


def run_pairs() -> None:
    """The Evaluate page's third tab: pick A and B, then everything lined up."""
    files = report_files()
    if len(files) < 2:
        st.info("Line up two evaluations here once two are saved (run two methods above on the same questions).")
        return
    names = list(files)
    recent = [n for n in st.session_state.get(EVAL_SELECTED, []) if n in files]
    first, second = (recent[-2:] if len(recent) >= 2 else names[:2])
    if len(recent) >= 2 and st.session_state.get("pair_recent") != recent:  # two methods just run: line them up
        st.session_state["pair_recent"] = recent
        st.session_state["pair_a"], st.session_state["pair_b"] = first, second
    for key, default in (("pair_a", first), ("pair_b", second)):  # first shown, or a report deleted since picked
        if st.session_state.get(key) not in files:
            st.session_state[key] = default
    titles = report_titles(names, list(PRESETS))  # "movies · GeAR (hybrid) · 2026-12-06 10:12", as elsewhere
    left, right, cut = st.columns([5, 5, 2])
    a = left.selectbox("A (before)", names, key="pair_a", format_func=lambda n: titles.get(n, n))
    b = right.selectbox("B (after)", names, key="pair_b", format_func=lambda n: titles.get(n, n))
    try:
        reports = read_report(files[a]), read_report(files[b])
    except (OSError, ValueError) as exc:
        st.error(f"cannot read a report: {esc_md(one_line(exc))}")
        return
    common = sorted({int(k) for k in reports[0].get("recall", {})} & {int(k) for k in reports[1].get("recall", {})})
    k = cut.selectbox("k", common or [5], index=(common.index(5) if 5 in common else 0), key="pair_k",
                      help="a gold passage within the top k of the final ranking is found")
    (made_a, unused_a), (made_b, unused_b) = (diagnoses_from_traces(reports[0], files[a]),
                                              diagnoses_from_traces(reports[1], files[b]))
    for name, unused, report in (("A", unused_a, reports[0]), ("B", unused_b, reports[1])):
        for line in unused:  # a trace a report points at outside its folder is not opened: said, one line each
            st.caption(f":material/warning: {name}: {esc_md(line)}")
        if note := earlier_rules_note(report):
            st.caption(f":material/history: {name}: {esc_md(note)}.")
    try:
        pairing = pair_reports(reports[0], reports[1], k, names=("A", "B"), diagnoses=(made_a, made_b))
    except PairingError as exc:
        st.error(f"These two cannot be lined up: {esc_md(one_line(exc))}")
        return
    describe_sides(pairing)
    paired_numbers(pairing)
    band = flows(pairing)
    chosen = questions_table(pairing, band)
    if chosen is not None:
        down_to_the_stage(pairing, chosen, reports, (files[a], files[b]))


def describe_sides(p: Pairing) -> None:
    lines = []
    for side in (p.a, p.b):
        lines.append(f"**{side.name}** {esc_md(side.label)} ({side.questions} questions, protocol {side.protocol}): "
                     + "; ".join(esc_md(s) for s in side.sources))
    both = f"{len(p.questions)} questions in both"
    if p.only_a or p.only_b:
        both += (f"; left out: {len(p.only_a)} only in A, {len(p.only_b)} only in B (e.g. "
                 f"{esc_md((p.only_a or p.only_b)[0])})")
    lines.append(both)
    lines += [f"Differs: {esc_md(line)}" for line in p.differences]
    lines += [f":orange[{esc_md(note)}]" for note in p.notes]
    st.markdown("\n".join(f"- {line}" for line in lines))


def paired_numbers(p: Pairing) -> None:
    rows = [{"measure": m.name, "A": round(m.mean_a, 1), "B": round(m.mean_b, 1), "B − A": round(m.difference, 1),
             "better": m.better, "worse": m.worse, "same": m.tied,
             "sign test p": "—" if m.p_sign is None else f"{m.p_sign:.3g}",
             "95 % interval": "—" if m.low is None or m.high is None else f"{m.low:+.1f} to {m.high:+.1f}"}
            for m in p.measures]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="pair_numbers")
    st.caption(" · ".join(esc_md(m.sentence()) for m in p.measures) + ". Better / worse: questions whose value is "
               "higher / lower in B; the sign test is over those; the interval is a paired bootstrap of the mean "
               "difference over questions (fixed seed: `gear compare` gives the same).")


def flows(p: Pairing) -> Band | None:
    """The two Sankeys, each with its band picker; returns the band picked (None: every question)."""
    passages, categories = st.tabs(["Gold passages A → B", "Categories A → B"])
    picked: Band | None = None
    with passages:
        if p.passage_flow:
            picked = _flow(p.passage_flow, "gold passage", False, "pair_band_passages") or picked
        else:
            st.info("Neither report carries a diagnosis or kept traces: where each gold passage ended is unknown "
                    "(R@k and the answers are lined up below).")
    with categories:
        picked = _flow(p.category_flow, "question", True, "pair_band_categories") or picked
    return picked


def _flow(bands: list[Band], unit: str, categories: bool, key: str) -> Band | None:
    figure, picker = st.columns([3, 1])
    figure.plotly_chart(flow_figure(bands, ("A", "B"), unit=unit, categories=categories), width="stretch",
                        key=f"{key}_figure")
    choices = band_choices(bands, unit, categories=categories)
    chosen = picker.selectbox("Show the questions of a band", [EVERY_BAND, *choices], key=key,
                          help="Green: gold passages B finds and A missed; red: the reverse. The table below keeps "
                               "the questions the band holds.")
    return None if chosen == EVERY_BAND else choices[chosen]


def _ends(q: QuestionPair, which: str) -> str:
    return ", ".join(end_words(getattr(p, f"end_{which}")) for p in q.passages) or "—"


def questions_table(p: Pairing, band: Band | None) -> QuestionPair | None:
    st.subheader("Questions")
    kinds_col, by_col = st.columns([3, 2])
    kinds = kinds_col.multiselect("Keep", list(KINDS), key="pair_kinds",
                                  help="B fixes: B finds a gold passage A missed (or answers right where A was "
                                       "wrong); B breaks: the reverse; both miss: a gold passage neither finds (both "
                                       "answers wrong)")
    # fixed labels: a label that changed with k would make a new widget, which Streamlit shows with nothing chosen
    by = by_col.radio("Judged by", [PASSAGES, ANSWERS], horizontal=True, key="pair_by",
                      format_func=lambda b: "gold passages within k" if b == PASSAGES else "the answer (EM)") \
        or PASSAGES
    stage_col, hop_col, category_col = st.columns(3)
    stages = stage_col.multiselect("Lost at (A or B)", p.stages(), key="pair_stages", format_func=end_words)
    hops = hop_col.multiselect("Hop type", p.hops(), key="pair_hops")
    categories = category_col.multiselect("Proposed category (A or B)", p.categories(), key="pair_categories",
                                          format_func=category_words)
    kept = p.select(kinds, by, stages, hops, categories)
    if band is not None:
        kept = [q for q in kept if q.id in band.questions]
    rows = [{"question": q.question, "hop": q.hop, f"R@{p.k} A": f"{q.found_a}/{q.n_gold}",
             f"R@{p.k} B": f"{q.found_b}/{q.n_gold}", "gained": ", ".join(q.gained), "lost": ", ".join(q.lost),
             "ended in A": _ends(q, "a"), "ended in B": _ends(q, "b"),
             "EM A": _or_dash(q.em_a), "EM B": _or_dash(q.em_b), "answer A": _or_dash(q.answer_a),
             "answer B": _or_dash(q.answer_b),
             "category A": category_words(q.category_a or NO_CATEGORY),
             "category B": category_words(q.category_b or NO_CATEGORY),
             "tokens A": q.tokens_a, "tokens B": q.tokens_b, "s A": q.time_words("a"),
             "s B": q.time_words("b"), "id": q.id} for q in kept]
    counts = p.counts(by)
    st.caption(f"{len(kept)} of {len(p.questions)} question(s)"
               + (f" in the band {esc_md(band.source)} → {esc_md(band.target)}" if band is not None else "")
               + " · " + ", ".join(f"{kind} {n}" for kind, n in counts.items())
               + f" (by {'gold passages' if by == PASSAGES else 'answers'}). Select a row to see its two runs.")
    if not rows:
        return None
    filters = hashlib.sha1(repr((kinds, by, stages, hops, categories, band)).encode()).hexdigest()[:8]
    event = st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key=f"pair_questions_{filters}",
                         height=min(420, 38 + 35 * len(rows)),
                         column_config={"question": st.column_config.TextColumn("question", width=260, pinned=True),
                                        "EM A": st.column_config.NumberColumn("EM A", width="small"),
                                        "EM B": st.column_config.NumberColumn("EM B", width="small")})
    selected = list(getattr(getattr(event, "selection", None), "rows", []) or [])
    return kept[selected[0]] if selected and selected[0] < len(kept) else None


def _diagnosis(report: dict[str, Any], path: Path, qid: str) -> tuple[Diagnosis | None, Path | None]:
    entry: dict[str, Any] = next((e for e in report.get("per_question", []) if e.get("id") == qid), {})
    try:
        trace = trace_path(path, entry)
    except ValueError:  # outside the report's folder: not opened (said above the table)
        trace = None
    kept = kept_diagnosis(entry.get("diagnosis"))
    if kept is not None:
        return kept, trace
    return diagnoses_from_traces({**report, "per_question": [entry]}, path)[0].get(qid), trace


def down_to_the_stage(p: Pairing, q: QuestionPair, reports: tuple[dict[str, Any], dict[str, Any]],
                      paths: tuple[Path, Path]) -> None:
    """A question's two runs side by side: where each gold passage's runs part, each side's stage table, and — when
    the reports kept their traces — what each run's step showed at that stage and iteration."""
    st.markdown(f"**{esc_md(q.question)}** · {esc_md(q.id)} · {esc_md(q.hop)}")
    (da, trace_a), (db, trace_b) = (_diagnosis(reports[0], paths[0], q.id), _diagnosis(reports[1], paths[1], q.id))
    parts = partings(da, db, p.k)
    if da is None or db is None:
        st.caption("A report without a diagnosis or a kept trace for this question: its stages are unknown.")
    elif not parts:
        st.caption(f"The two runs treat every gold passage alike, stage by stage, up to the top {p.k}.")
    chosen = None
    if parts:
        # a radio's labels are Markdown: the passage's title is untrusted text
        labels = [f"{esc_md(x.title)}: they part at {esc_md(x.stage)} — A {esc_md(x.a)} · B {esc_md(x.b)}"
                  for x in parts]
        pick = st.radio("Where they part", range(len(parts)), format_func=lambda n: labels[n], key=f"pair_part_{q.id}")
        chosen = parts[int(pick)]
    left, right = st.columns(2)
    for column, name, d, trace, iteration, answer, em in (
            (left, "A", da, trace_a, chosen.iteration_a if chosen else None, q.answer_a, q.em_a),
            (right, "B", db, trace_b, chosen.iteration_b if chosen else None, q.answer_b, q.em_b)):
        with column:
            st.markdown(f"**{name}** — answer {esc_md(answer) if answer else '—'}"
                        + ("" if em is None else f" (EM {em:.0f})"))
            if d is None:
                st.caption("no diagnosis")
                continue
            table = stage_table(d, iteration)
            frame = pd.DataFrame(table.rows, columns=table.columns)
            st.dataframe(frame, hide_index=True, width="stretch", key=f"pair_stage_{name}_{q.id}",
                         height=38 + 35 * max(1, len(frame)))
            if chosen is not None and trace is not None:
                _stage_event(trace, chosen.stage, iteration, f"pair_event_{name}_{q.id}")
            elif chosen is not None:
                st.caption("The report kept no trace of this run: its stage table is what is known.")


def _stage_event(path: Path, stage: str, iteration: int | None, key: str) -> None:
    """What the run's step at `stage` showed (in that iteration), drawn as the Ask page draws it."""
    try:
        trace = open_trace(path)
    except (TraceError, OSError, ValueError) as exc:
        st.caption(f"cannot read its trace: {esc_md(one_line(exc))}")
        return
    kind = STAGE_EVENTS.get("final" if stage.startswith("final") else stage)
    events = [e for e in trace.events if e.kind == kind and (iteration is None or e.iteration == iteration)]
    if not events:
        st.caption(f"its trace has no {esc_md(stage)} step" + (f" in iteration {iteration}" if iteration else ""))
        return
    event = events[0]
    st.caption(f"its {esc_md(stage)} step" + (f", iteration {iteration}" if iteration else "")
               + f" ({esc_md(path.name)})")
    view = TraceView(key=key)
    view.events = trace.events[: trace.events.index(event) + 1]
    start = trace.first(RunStarted)
    view.gold_known = bool(start and start.gold_passage_ids)
    view.draw(event)
