"""The gold passages of a run as they stand now: a run's recall, EM and diagnosis follow the person's
marks, not the gold the run happened to know when it ran. The Ask page's figures, the Traces list and the Traces
page's diagnosis read them here, so marking, saving, changing or removing gold moves every count at once.

Where the gold comes from, first found first: the marks made on the run in this session (studio.gold.marks; an
empty set of marks means "no gold": removed), the gold the run was asked with (a QA set's question), and the same
question saved in an index's own QA set (gear.data.qa_set). A saved gold passage is matched to the run by its title
and text among the passages the run showed; one the run never showed has no id in the run's numbering (the index would
be needed to find it), so it gets a placeholder id below zero: it counts in recall's denominator and is "lost at the
first stage" in the diagnosis, which is where it was — no list of the run held it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import streamlit as st

from gear.data.qa_set import OwnQuestion, load_own_qa, question_key
from gear.diagnosis.gold_marks import run_passages
from gear.events import FinalRanking, RunStarted
from gear.measures import exact_match, recall_at
from gear.trace import Trace
from studio.core import demos, paths
from studio.core.keys import MARKS

MARKED, RUN, SAVED, NONE = "marked", "run", "saved", ""  # where a run's gold comes from now
ALIASES = "|"  # what separates an answer's aliases in the answer box


# -- a person's gold marks on a run, kept per run (studio.gold.marks draws the panel) ----------------------------
@dataclass
class Marks:
    """The person's marks on one run: the gold passages (ids, in the order marked) and the right answer's words."""

    ids: list[int] = field(default_factory=list)
    answer: str = ""
    touched: bool = False  # the person changed something (else the run's own gold stands)

    @property
    def answers(self) -> list[str]:
        return [a.strip() for a in self.answer.split(ALIASES) if a.strip()]


def run_key(trace: Trace) -> str:
    """One run, whatever object holds it (a replay reloads it): its question, size and final ranking."""
    final = trace.first(FinalRanking)
    start = trace.first(RunStarted)
    parts = (trace.question, len(trace.events), [p.id for p in final.passages] if final else [],
             sorted((start.settings or {}).items()) if start else [])
    return hashlib.sha1(repr(parts).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class RunGold:
    """A run's gold passages now: ids in the run's numbering (below zero: a saved one the run never showed), the right
    answers, where they come from, and the (title, text) of the placeholders."""

    ids: tuple[int, ...] = ()
    answers: tuple[str, ...] = ()
    source: str = NONE
    unseen: Mapping[int, tuple[str, str]] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        return bool(self.ids)

    def recall(self, ranked: Sequence[int], k: int) -> float | None:
        """R@k of the run's final ranking against this gold; None when no gold passage is known."""
        return recall_at(ranked, list(self.ids), k) if self.ids else None

    def em(self, answer: str | None) -> float | None:
        return exact_match(answer, list(self.answers)) if answer is not None and self.answers else None

    def signature(self) -> tuple:
        return self.ids, self.answers


def saved_questions() -> dict[str, list[OwnQuestion]]:
    """Every index's own saved questions (the demos' and the built ones'), by question_key; an unreadable file is
    skipped (the Ask and Evaluate pages say why)."""
    folders = {paths.index_dir(name) for name in demos.DEMOS}
    if paths.indexes_dir().is_dir():
        folders |= {p for p in paths.indexes_dir().iterdir() if p.is_dir()}
    found: dict[str, list[OwnQuestion]] = {}
    for folder in sorted(folders):
        try:
            for q in load_own_qa(folder):
                found.setdefault(question_key(q.question), []).append(q)
        except (ValueError, OSError):
            continue
    return found


def passage_key(title: str, text: str) -> str:
    return hashlib.sha1(f"{title}\0{text}".encode()).hexdigest()[:16]


def shown_keys(trace: Trace) -> dict[str, int]:
    """(title, text) key → id of every passage the run showed (what a saved gold passage is matched by)."""
    return {passage_key(v.title, v.text): v.id for v in run_passages(trace)}


def from_saved(candidates: Iterable[OwnQuestion], shown: Mapping[str, int]) -> RunGold:
    """The saved question whose gold passages the run showed most of, in the run's ids (placeholders for the rest)."""
    best: RunGold | None = None
    for q in candidates:
        ids: list[int] = []
        unseen: dict[int, tuple[str, str]] = {}
        for g in q.gold:
            pid = shown.get(passage_key(g.title, g.text))
            if pid is None:
                pid = -1 - len(unseen)
                unseen[pid] = (g.title, g.text)
            ids.append(pid)
        gold = RunGold(tuple(dict.fromkeys(ids)), tuple(q.answers), SAVED, unseen)
        if best is None or len(best.unseen) > len(unseen):
            best = gold
    return best or RunGold()


def gold_now(trace: Trace, saved: Mapping[str, list[OwnQuestion]] | None = None) -> RunGold:
    """The run's gold passages now (see the module's docstring for the order)."""
    start = trace.first(RunStarted)
    return gold_of(run_key(trace), trace.question, start.gold_passage_ids if start else [],
                   start.answers if start else [], lambda: shown_keys(trace), saved)


def gold_of(key: str, question: str, run_gold: Sequence[int], run_answers: Sequence[str],
            shown: Callable[[], Mapping[str, int]], saved: Mapping[str, list[OwnQuestion]] | None = None) -> RunGold:
    """gold_now from what a listed run keeps of its trace: its run_key, question, own gold and answers, and (when
    needed) its passages' keys; `saved`: saved_questions(), read once for many runs."""
    marks: Marks | None = st.session_state.get(MARKS, {}).get(key)
    if marks is not None:
        return RunGold(tuple(marks.ids), tuple(marks.answers), MARKED)
    if run_gold:
        return RunGold(tuple(dict.fromkeys(run_gold)), tuple(run_answers), RUN)
    candidates = (saved if saved is not None else saved_questions()).get(question_key(question), [])
    return from_saved(candidates, shown()) if candidates else RunGold()


def final_ids(trace: Trace) -> list[int]:
    final = trace.first(FinalRanking)
    return [p.id for p in final.passages] if final is not None else []


def recall_now(trace: Trace, gold: RunGold, ks: Iterable[str] = ("5", "10", "15")) -> dict[str, float]:
    """R@k of the run against its gold now ({} when none is known): what the Ask page and the Traces list show."""
    ranked = final_ids(trace)
    if not gold.known or trace.first(FinalRanking) is None:
        return {}
    return {k: value for k in ks if (value := gold.recall(ranked, int(k))) is not None}


# -- the Ask page: figures above the gold panel follow its marks -----------------------------------------------------
DRAWN = "gold_drawn"      # session state: run key -> the gold the run's figures were last drawn with
REDRAWN = "gold_redrawn"  # session state: (run key, gold) the page was last redrawn for


def drew(trace: Trace, gold: RunGold) -> None:
    st.session_state.setdefault(DRAWN, {})[run_key(trace)] = gold.signature()


def redraw_if_changed(trace: Trace) -> None:
    """Called by the gold panel (a fragment, which redraws only itself): when the marks differ from the gold the run's
    figures above were drawn with, the whole page is drawn again, once per change (no loop when the figures are not
    drawn, as in a lesson)."""
    key = run_key(trace)
    drawn = st.session_state.get(DRAWN, {}).get(key)
    now = gold_now(trace).signature()
    if drawn is None or drawn == now or st.session_state.get(REDRAWN) == (key, now):
        return
    st.session_state[REDRAWN] = (key, now)
    st.rerun(scope="app")
