"""The questions an index offers a person, alike on every page that lists them (Ask's examples, Compare's list): their
own first — saved with their gold passages under an Ask result or with `gear qa add` (gear.data.qa_set) — then the
QA set the index came with (a demo's, or one uploaded with it). A question of either kind knows its gold passages,
so recall and the diagnosis follow it wherever it is asked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from gear.data.qa_set import load_own_qa, question_key
from studio.core.resources import qa_for_index
from studio.core.safe import esc_md, one_line


def own_questions(index: Path | None) -> list[Any]:
    """The index's own test questions (saved from the Ask page or `gear qa add`) as QA records; a file that does not
    parse is said in one line (and left as it is)."""
    if index is None:
        return []
    try:
        return [q.as_question() for q in load_own_qa(index)]
    except ValueError as exc:  # gear.data.reading.InputError: names the file, record and field
        st.warning(f"Your saved questions cannot be read: {esc_md(one_line(exc))}")
        return []


@dataclass(frozen=True)
class IndexQuestions:
    own: list[Any]  # the person's questions (QA records: gear.data.questions.Question)
    bundled: list[Any]  # the QA set the index came with

    @property
    def by_text(self) -> dict[str, Any]:
        """Question text → its record, the person's first: a question saved from the QA set is theirs now."""
        found = {q.question: q for q in self.own}
        found.update({q.question: q for q in self.bundled if q.question not in found})
        return found

    def find(self, text: str) -> Any | None:
        """The record of a question typed into a box: the same words, whatever their case and spacing and a final
        "?" (gear.data.qa_set.question_key); None for a question of neither set."""
        key = question_key(text)
        return next((q for q in self.by_text.values() if question_key(q.question) == key), None) if key else None

    @property
    def yours(self) -> set[str]:
        return {q.question for q in self.own}

    def counts(self) -> str:
        """"2 of yours, 20 from the QA set"."""
        return ", ".join(part for part in (f"{len(self.own)} of yours" if self.own else "",
                                           f"{len(self.bundled)} from the QA set" if self.bundled else "") if part)


def index_questions(index: Path | None) -> IndexQuestions:
    if index is None:
        return IndexQuestions([], [])
    return IndexQuestions(own_questions(index), qa_for_index(index))
