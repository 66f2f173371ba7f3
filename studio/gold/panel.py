"""Where was the gold lost? — one run at a time: the "Gold passages" panel under an Ask result and the
stage tables of a comparison side by side. The diagnosis itself is gear.diagnosis (a pure function of the trace, or
of the trace and the index the run was made on when that index is open: the probe); this module picks the gold
passages' texts, draws the table with the lost stage highlighted, and writes the proposed category with its
confidence and its evidence, each line pointing to the steps it rests on (on Ask, a pointer opens the lesson at that
step). Everything a passage or the LLM wrote is escaped before it becomes markdown."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from gear import events as ev
from gear.diagnosis import CATEGORY_LABELS, DEFAULT_K, RUN_LEVEL, Diagnosis, Probe, Ref, diagnose
from gear.diagnosis.claims import where
from gear.diagnosis.gold_texts import gold_texts
from gear.events import RunStarted
from gear.trace import Trace
from gear.viz.diagnosis import (
    DROPPED_CELL,
    FOUND_CELL,
    LOST_CELL,
    LOST_COLUMN,
    OPEN_CELL,
    OUTCOME_LEGEND,
    PASSAGE_COLUMN,
    StageTable,
    side_by_side_rows,
    stage_table,
)
from gear.viz.lesson import LessonStep, lesson_steps
from studio.core import demos, paths
from studio.core.keys import TEACH_STEP, TEACHING
from studio.core.resources import engine_for, qa_for_index
from studio.core.run_gold import redraw_if_changed
from studio.core.safe import esc_md, one_line
from studio.gold.marks import mark_panel

LOST_WIDTH = 150  # px: "✗ base → final@15", "open (passageLink)" whole
CELL_STYLES = {LOST_CELL: "background-color: #ffc9c9; font-weight: 600",
               DROPPED_CELL: "background-color: #ffe8cc",
               OPEN_CELL: "background-color: #fff3bf",
               FOUND_CELL: "background-color: #d3f9d8; font-weight: 600"}
LEGEND = ("✓3 rank 3 · ✓h2 a beam reached one of its triples at hop 2 · ✓ reached · ✗ missed · · did not run. "
          "Red: lost at (the first stage it never reached); orange: where it left the run for good; yellow: not "
          "reached yet when the run was cut short; green: found.")


# -- which gold passages, with which texts -----------------------------------------------------------------------------
def nothing_to_diagnose(trace: Trace) -> str:
    """Why a run cannot be diagnosed ("" when it can): no start event, or no gold passages known."""
    start = trace.first(RunStarted)
    if start is None:
        return "Nothing to diagnose: this trace has no start event (no gold passages or answers recorded)."
    if not start.gold_passage_ids:
        return ("Nothing to diagnose yet: this run does not know its gold passages (a question typed freely, not "
                "picked from the index's QA set) — mark the ones that hold the answer above.")
    return ""


class QATexts:
    """The QA records of the QA sets the app knows (each index's, each demo's), found by a run's question id and
    text: they hold the gold passages' titles and texts, which a trace names by id only when no stage reached them."""

    def __init__(self, questions: Iterable[Any]) -> None:
        self.by_key = {(q.id, q.question): q for q in questions}
        asked = Counter(question for _, question in self.by_key)
        # a run asked without its record's id (typed, or from an older trace): its question text, when only one
        # record asks it
        self.by_text = {key[1]: q for key, q in self.by_key.items() if asked[key[1]] == 1}

    @classmethod
    def for_index(cls, index: Path | None) -> QATexts:
        if index is None:
            return cls([])
        from gear.data.qa_set import load_own_qa

        found: list[Any] = []
        for read in (lambda: [q.as_question() for q in load_own_qa(index)], lambda: qa_for_index(index)):
            try:
                found += read()
            except Exception:  # an unreadable QA set: the traces still show most of their gold passages
                continue
        return cls(found)

    @classmethod
    def known(cls) -> QATexts:
        folders = {paths.index_dir(name) for name in demos.DEMOS}
        if paths.indexes_dir().is_dir():
            folders |= {p for p in paths.indexes_dir().iterdir() if p.is_dir()}
        return cls(q for folder in sorted(folders) for q in cls.for_index(folder).by_key.values())

    def record(self, trace: Trace) -> Any | None:
        start = trace.first(RunStarted)
        if start is None:
            return None
        if start.question_id:
            return self.by_key.get((start.question_id, start.question))
        return self.by_text.get(start.question)

    def for_trace(self, trace: Trace) -> dict[int, tuple[str, str]]:
        start, question = trace.first(RunStarted), self.record(trace)
        if start is None or question is None:
            return {}
        return gold_texts(question, list(dict.fromkeys(start.gold_passage_ids)))

    def hop_for(self, trace: Trace) -> str | None:
        """The question's type as its record names it (2Wiki's comparison, …; the trace's id says only MuSiQue's)."""
        question = self.record(trace)
        return question.hop_type if question is not None else None

    def fingerprint(self) -> str:
        return hashlib.sha1(repr(sorted(self.by_key)).encode()).hexdigest()[:12]


def gold_texts_for(trace: Trace, index: Path | None) -> dict[int, tuple[str, str]]:
    """(title, text) of the run's gold passages for the diagnosis, beyond what the trace's own events show (a gold
    passage no stage reached has only its id there): from the index's backend when the index is open and the run was
    made on it (its QA record's gold passages map to the run's gold ids), else from the QA record of the run's
    question in any QA set the app knows."""
    start = trace.first(RunStarted)
    if start is None:
        return {}
    gold = list(dict.fromkeys(start.gold_passage_ids))
    selected = QATexts.for_index(index)
    record = selected.record(trace)
    if record is not None and index is not None and (index / "manifest.json").is_file():
        try:
            engine = engine_for(index)
            if list(dict.fromkeys(engine.gold_ids(record.gold))) == gold:
                return {p.id: (p.title, p.text) for p in engine.backend.passages(gold)}
        except Exception:  # an index that cannot be opened now: the QA records below
            pass
    return selected.for_trace(trace) or QATexts.known().for_trace(trace)


def probe_for(index: Path | None) -> Probe | None:
    """The open index as the diagnosis's probe (its triples, the beams re-run; gear.diagnosis.probe), when it is
    built; the diagnosis itself checks that the run was made on it."""
    if index is None or not (index / "manifest.json").is_file():
        return None
    try:
        return engine_for(index)
    except Exception:  # an index that cannot be opened now: the trace alone
        return None


def diagnosis_of(trace: Trace, index: Path | None, k: int = DEFAULT_K) -> Diagnosis:
    return diagnose(trace, k, gold_texts_for(trace, index), probe=probe_for(index))


# -- where an evidence line points: the lesson's steps -----------------------------------------------------------------
#: the events a ref's step is drawn as, in the lesson (gear.viz.lesson.lesson_steps)
STEP_EVENTS: dict[str, tuple[type[ev.Event], ...]] = {
    "base": (ev.BaseRetrieved,), "retrieval": (ev.PassagesAdded, ev.BaseRetrieved), "read": (ev.ProximalTriples,),
    "link": (ev.TriplesLinked,), "beam": (ev.BeamsSearched,), "expanded": (ev.BeamsSearched,),
    "fused": (ev.PassagesFused,), "gist": (ev.GistUpdated,), "reasoner": (ev.Reasoned,),
    "rewriter": (ev.QueryRewritten,), "passagelink": (ev.PassagesLinked,), "ranking": (ev.PassagesLinked, ev.Answered),
    "thought": (ev.ThoughtWritten,), "seed": (ev.PPRSeeded,), "walk": (ev.PPRRanked,), "answer": (ev.Answered,)}


def lesson_step(steps: list[LessonStep], r: Ref) -> int | None:
    """The lesson step (from 1) a ref points to: the first step drawing its step's event in its iteration."""
    kinds = STEP_EVENTS.get(r.step, ())
    for n, step in enumerate(steps, 1):
        e = step.event
        if isinstance(e, kinds) and (r.iteration == RUN_LEVEL or e.iteration == r.iteration):
            return n
    return None


def pointers(refs: Iterable[Ref]) -> list[Ref]:
    """The refs of a line worth pointing to, one per place, in the run's order (a re-run points to no step)."""
    seen: dict[str, Ref] = {}
    for r in sorted(refs, key=lambda r: (r.iteration == RUN_LEVEL, r.iteration)):
        seen.setdefault(where(r), r)
    return list(seen.values())


# -- drawing one diagnosis ---------------------------------------------------------------------------------------------
def _styles(table: StageTable) -> pd.DataFrame:
    frame = pd.DataFrame("", index=range(len(table.rows)), columns=table.columns)
    for n, marks in enumerate(table.marks):
        for column, kind in marks.items():
            if column in frame.columns:
                frame.loc[n, column] = CELL_STYLES[kind]
    return frame


BEST = "best of all"


@st.fragment
def show_stage_table(d: Diagnosis, key: str) -> None:
    """The gold passage × stage table, the lost stage of each passage highlighted; for a run of several iterations,
    a choice between the best any iteration achieved and one iteration at a time (a fragment: choosing redraws the
    table, not the whole run above it)."""
    iteration = None
    if len(d.iterations) > 1:
        options = [BEST, *(str(i) for i in d.iterations)]
        chosen = st.radio("Iteration", options, horizontal=True, key=f"{key}_iteration",
                          help="The stages GeAR runs once per iteration: the best any iteration achieved (the rank "
                               "of the best list), or one iteration's own result. passageLink and the final ranking "
                               "run once.")
        iteration = None if chosen == BEST else int(chosen)
    table = stage_table(d, iteration)
    frame = pd.DataFrame(table.rows, columns=table.columns)
    styled = frame.style.apply(lambda _: _styles(table), axis=None)
    # the verdict beside the passage's name, whole ("base → final@5" was cut to "base → final@" at 1280 px, after a
    # dozen stage columns): both pinned, on the left, the stages scrolling beside them
    config: dict[str, Any] = {PASSAGE_COLUMN: st.column_config.TextColumn(PASSAGE_COLUMN, pinned=True, width=200),
                              LOST_COLUMN: st.column_config.TextColumn(LOST_COLUMN, pinned=True, width=LOST_WIDTH)}
    st.dataframe(styled, hide_index=True, width="stretch", key=key, column_config=config,
                 height=38 + 35 * max(1, len(frame)))
    st.caption(LEGEND)


def category_line(d: Diagnosis) -> str:
    if d.category is None:
        return ("**Proposed category:** none — mark the passages that hold the answer first" if not d.passages else
                "**Proposed category:** none yet (nothing to judge against)")
    if d.undetermined:
        line = ("**Proposed category:** undetermined between "
                + " and ".join(esc_md(CATEGORY_LABELS.get(c, c)) for c in d.undetermined))
    else:
        line = f"**Proposed category:** {esc_md(CATEGORY_LABELS.get(d.category, d.category))}"
        if d.second:
            line += f" — second: {esc_md(CATEGORY_LABELS.get(d.second, d.second))}"
    if d.confidence:
        line += f" · confidence **{esc_md(d.confidence)}**"
    if d.answer_form_only:
        line += " · the answer is right in substance"
    if not d.complete:
        line += " *(provisional: the run was cut short)*"
    return line


def answer_line(d: Diagnosis) -> str:
    a = d.answer
    if a is None or (a.answer is None and not a.gold):
        return ""
    parts = [f"answer {esc_md(a.answer) if a.answer else '— (none yet)'}",
             f"gold {esc_md(' / '.join(a.gold)) if a.gold else '— (not recorded)'}"]
    if a.em is not None:
        parts.append(f"EM {a.em:.0f} · F1 {a.f1:.2f}" if a.f1 is not None else f"EM {a.em:.0f}")
    if a.in_qa_passages is not None:
        parts.append("a gold answer is in the passages the QA step read" if a.in_qa_passages
                     else "no gold answer in the passages the QA step read")
    return "**Answer check:** " + " · ".join(parts)


def show_verdict(d: Diagnosis, trace: Trace | None = None, go: Callable[[int], None] | None = None,
                 key: str = "diag") -> None:
    """The proposed category with its confidence and the evidence used, each line with the steps it rests on (with
    `trace` and `go`, a choice of those steps opens the lesson there), the answer check, the notes, and each
    passage's path."""
    st.markdown(category_line(d))
    if d.evidence:
        st.markdown("\n".join(f"- {esc_md(line)}" + (f"  \n  ↳ *{esc_md(' · '.join(where(r) for r in refs))}*"
                                                      if refs else "")
                               for line, refs in ((x, pointers(r)) for x, r in d.lines())))
    if trace is not None and go is not None:
        step_choice(d, trace, go, key)
    line = answer_line(d)
    if line:
        st.markdown(line)
    for note in d.notes:
        st.caption(esc_md(note))
    with st.expander("Each gold passage, stage by stage"):
        for p in d.passages:
            st.markdown(f"**{esc_md(p.title)}**")
            st.markdown("\n".join(f"- {esc_md(line)}" for line in p.evidence) or "- (no stage ran)")


def step_choice(d: Diagnosis, trace: Trace, go: Callable[[int], None], key: str) -> None:
    """The steps the evidence rests on, as choices: picking one calls `go` with its lesson step (from 1)."""
    steps = lesson_steps(trace)  # the steps teaching mode walks (studio.views.teaching.teaching_steps)
    options: dict[str, int] = {}
    for _, refs in d.lines():
        for r in pointers(refs):
            n = lesson_step(steps, r) if r.claim != "rerun" else None
            if n is not None:
                options.setdefault(where(r), n)
    if not options:
        return
    chosen = st.pills("Open the step the evidence points to, in the lesson", list(options), key=f"{key}_go",
                      help="Teaching mode opens at that step of this run (Back and Next walk from there).")
    if chosen is not None:
        go(options[chosen])


def show_diagnosis(d: Diagnosis, key: str, trace: Trace | None = None, go: Callable[[int], None] | None = None) -> None:
    show_stage_table(d, key=f"{key}_table")
    show_verdict(d, trace, go, key)


# -- the Ask page: under the result ------------------------------------------------------------------------------------
@st.fragment
def gold_panel(trace: Trace, index: Path | None, k: int = DEFAULT_K) -> None:
    """The "Gold passages" panel: the person marks the passages that hold the answer (studio.gold.marks; a run
    asked from a QA set starts with its record's), and the diagnosis follows them at once — where each went, stage
    by stage, the stage it was lost at, and the proposed error category with its evidence. A run cut short is
    diagnosed as far as it went. A fragment: marking redraws this panel, not the run above it."""
    st.subheader("Gold passages — where was the gold lost?")
    marked = mark_panel(trace, index, key="ask_mark")
    redraw_if_changed(trace)  # the run's recall above follows the marks
    missing = missing_gold(trace, index) if marked is None or not marked.ids else []
    if (marked is None or not marked.ids) and not missing:
        # no verdict without evidence: a typed answer alone proposes no category
        st.caption((nothing_to_diagnose(trace) or "Nothing to diagnose yet: mark the passages that hold the answer.")
                   + " No error category is proposed before a gold passage is known.")
        return
    try:
        from gear.diagnosis.gold_marks import diagnose_marked

        ids, answers, extra = (marked.ids, marked.answers, marked.passages) if marked is not None else ([], None, {})
        d = diagnose_marked(trace, ids, answers, passages={**gold_texts_for(trace, index), **extra}, k=k,
                            missing_gold=missing, probe=probe_for(index))
    except Exception as exc:  # a trace from a format this version cannot follow: one line, never a traceback
        st.caption(f"This run cannot be diagnosed: {esc_md(one_line(exc))}")
        return
    st.caption(f"{d.found} of {len(d.passages)} gold passage(s) found in the final top {d.k} (the passages the QA "
               f"step reads); {esc_md(d.family)} stages.")
    show_diagnosis(d, key="ask_diag", trace=trace, go=open_step)


def open_step(step: int) -> None:
    """Teaching mode on this run, at lesson step `step` (from 1): the pointer an evidence line gives. The toggle's
    state is set before the page draws it again, on a full rerun."""
    st.session_state[PENDING_STEP] = step
    st.rerun(scope="app")


PENDING_STEP = "diag_open_step"  # session state: a lesson step an evidence pointer asked for, applied on the next run


def apply_pending_step() -> None:
    """Called by the Ask page before it draws the teaching toggle: open the step an evidence pointer asked for."""
    step = st.session_state.pop(PENDING_STEP, None)
    if step is not None:
        st.session_state[TEACHING] = True
        st.session_state[TEACH_STEP] = step - 1
        st.session_state.pop("ask_diag_go", None)  # the choice is spent: the panel shows none chosen again


def missing_gold(trace: Trace, index: Path | None) -> list[str]:
    """Titles of the gold passages the run's QA record names that the selected index lacks (the run was asked from a
    QA set, none of whose gold passages the index holds): the only ground for "dataset issue: no gold passage in the
    index". [] when the record is unknown or the index cannot be opened (nothing is claimed then)."""
    record = QATexts.for_index(index).record(trace)
    if record is None or index is None or not (index / "manifest.json").is_file() or not record.gold:
        return []
    try:
        engine = engine_for(index)
        return [title for title, text in record.gold if not engine.gold_ids([(title, text)])]
    except Exception:  # an index that cannot be opened now: claim nothing
        return []


# -- the Compare page: the methods side by side ------------------------------------------------------------------------
def compare_stages(results: Mapping[str, Trace | str], k: int, index: Path | None) -> None:
    """Which method lost which gold passage where: one row per gold passage, one column per method, then each
    method's own stage table in a tab."""
    diagnoses: dict[str, Diagnosis] = {}
    for label, result in results.items():
        if isinstance(result, Trace) and not nothing_to_diagnose(result):
            try:
                diagnoses[label] = diagnosis_of(result, index, k)
            except Exception as exc:
                st.caption(f"{esc_md(label)}: cannot be diagnosed ({esc_md(one_line(exc))})")
    st.subheader(f"Where each method lost the gold (found = in its top {k})")
    if not diagnoses:
        st.caption("Nothing to diagnose: these runs do not know their gold passages (a question typed freely).")
        return
    grid = pd.DataFrame(side_by_side_rows(diagnoses))
    styled = grid.style.map(_outcome_style, subset=list(diagnoses))
    st.dataframe(styled, hide_index=True, width="stretch", key="cmp_diag_grid",
                 column_config={PASSAGE_COLUMN: st.column_config.TextColumn(PASSAGE_COLUMN, pinned=True),
                                **{label: st.column_config.TextColumn(label, width=LOST_WIDTH) for label in diagnoses}})
    st.caption(OUTCOME_LEGEND)
    tabs = st.tabs(list(diagnoses))
    for n, (tab, d) in enumerate(zip(tabs, diagnoses.values(), strict=True)):
        with tab:
            show_diagnosis(d, key=f"cmp_diag_{n}")


def _outcome_style(value: object) -> str:
    text = str(value)
    if text.startswith("✓"):
        return CELL_STYLES[FOUND_CELL]
    if text.startswith("✗"):
        return CELL_STYLES[LOST_CELL]
    if text.startswith("…"):
        return CELL_STYLES[OPEN_CELL]
    return ""
