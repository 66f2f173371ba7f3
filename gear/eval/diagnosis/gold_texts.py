"""Gold passage texts for a diagnosis from the QA set a run was evaluated on (no index needed): the trace's gold ids
are the QA record's gold passages as the index found them, in the record's order (gear.agent.Engine.gold_ids), so
the two line up whenever the index held every one of them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gear.data.corpus import Question
from gear.trace import RunStarted, Trace


def gold_texts(question: Question, gold_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """(title, text) of each gold id; empty when the counts differ (a gold passage was missing from the index) —
    then which id is which cannot be told from the QA record alone."""
    if len(question.gold) != len(gold_ids):
        return {}
    return {pid: (title, text or "") for pid, (title, text) in zip(gold_ids, question.gold, strict=True)}


class QATexts:
    """Gold passage texts for traces of one QA set, found by question id."""

    def __init__(self, questions: Iterable[Question]) -> None:
        self.by_id = {q.id: q for q in questions}

    def for_trace(self, trace: Trace) -> dict[int, tuple[str, str]]:
        start = trace.first(RunStarted)
        question = self.by_id.get(start.question_id) if start else None
        if start is None or question is None:
            return {}
        return gold_texts(question, list(dict.fromkeys(start.gold_passage_ids)))
