"""Gold passages for a diagnosis from the QA set a run was asked from (no index needed): the trace's gold ids are the
QA record's gold passages as the index found them, in the record's order (gear.agent.Engine.gold_ids), so the two
line up whenever the index held every one of them. A run that does not know its gold passages (a question typed
freely, then found in a QA set by its words) gets them from the record: `QATexts.gold_for`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from gear.data.qa_set import question_key
from gear.data.questions import Question
from gear.diagnosis.facts import TraceFacts
from gear.events import RunStarted
from gear.trace import Trace

Find = Callable[[str, str | None], int | None]  # (title, text or None) -> the index's id: SearchBackend.find_passage


def gold_texts(question: Question, gold_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """(title, text) of each gold id; empty when the counts differ (a gold passage was missing from the index) —
    then which id is which cannot be told from the QA record alone."""
    if len(question.gold) != len(gold_ids):
        return {}
    return {pid: (title, text or "") for pid, (title, text) in zip(gold_ids, question.gold, strict=True)}


class QATexts:
    """Gold passages for traces of one QA set, found by question id, else by the question's words (when one record
    asks them)."""

    def __init__(self, questions: Iterable[Question]) -> None:
        self.by_id = {q.id: q for q in questions}
        asked = Counter(question_key(q.question) for q in self.by_id.values())
        self.by_words = {question_key(q.question): q for q in self.by_id.values()
                         if asked[question_key(q.question)] == 1}

    def record(self, trace: Trace) -> Question | None:
        start = trace.first(RunStarted)
        if start is None:
            return None
        if start.question_id and start.question_id in self.by_id:
            return self.by_id[start.question_id]
        return self.by_words.get(question_key(start.question))

    def hop_for(self, trace: Trace) -> str | None:
        """The question's type as its record names it (MuSiQue's hop type, 2Wiki's comparison, …), None when no
        record asks the question."""
        question = self.record(trace)
        return question.hop_type if question is not None else None

    def for_trace(self, trace: Trace) -> dict[int, tuple[str, str]]:
        start = trace.first(RunStarted)
        question = self.record(trace)
        if start is None or question is None:
            return {}
        return gold_texts(question, list(dict.fromkeys(start.gold_passage_ids)))

    def gold_for(self, trace: Trace, find: Find | None = None) -> tuple[list[int], dict[int, tuple[str, str]],
                                                                         list[str]] | None:
        """For a run that does not know its gold passages: its QA record's gold passages as (ids, (title, text) by
        id, answers), None when no record asks the question. A passage the run showed is found among its passages
        by (title, text) — by title when the record names titles only and one passage of the run has it; the others
        by `find` (the index's lookup), or else given an id below zero: no list of the run held them, so they are
        lost at the first stage whatever their id."""
        question = self.record(trace)
        if question is None or not question.gold:
            return None
        shown = TraceFacts.of(trace).texts
        by_key = {(title, text.strip()): pid for pid, (title, text) in shown.items() if text}
        titles = Counter(title for title, _ in shown.values())
        ids: list[int] = []
        texts: dict[int, tuple[str, str]] = {}
        for n, (title, text) in enumerate(question.gold):
            if text is not None:
                pid = by_key.get((title, text.strip()))
            else:
                pid = next((p for p, (t, _) in shown.items() if t == title), None) if titles[title] == 1 else None
            if pid is None and find is not None:
                pid = find(title, text)
            if pid is None:
                pid = -(n + 1)
            ids.append(pid)
            texts[pid] = (title, text if text is not None else shown.get(pid, ("", ""))[1])
        return list(dict.fromkeys(ids)), texts, list(question.answers)
