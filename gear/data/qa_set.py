"""An index's own QA set: questions a person asked of their own corpus, kept with the passages they marked as the
right ones and the answer they typed. `gear eval INDEX`, `gear qa`, `gear diagnose --qa INDEX` and the app
read and write the same file, `own_qa.json` in the index folder.

The file is a QA set in the MuSiQue schema (every paragraph a gold one, `is_supporting: true`), so `load_qa` and any
tool that reads MuSiQue read it as it is. A gold passage is kept by (title, text), which survives rebuilding or
updating the index (ids are row numbers: removing passages renumbers them); `passage_id` is the id it had when saved,
a hint for people, never used to match. A question is one record however often it is saved: saving it again (the same
words, case and spacing aside) updates it.

Writes are atomic (gear.files) and read-modify-write under the index folder's lock (gear.files.directory_lock), so two
browser sessions or processes saving at once both land, and rebuilding the index carries the file over
(gear.index.build keeps it). A file that does not parse is never overwritten: every change refuses with one line
naming the file, the record and the field, and what was saved before stays as it was.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gear.data.questions import Question
from gear.data.reading import InputError, read_json
from gear.files import LockTimeout, atomic_write_json, directory_lock
from gear.saved import MAX_ITEMS, MAX_NAME, MAX_TEXT, MAX_WORD, SAFE_INT

QA_FILE = "own_qa.json"
ID_PREFIX = "own__"
KNOWN_FIELDS = ("id", "question", "answer", "answer_aliases", "paragraphs", "saved", "updated", "source")
MAX_BYTES = 64_000_000  # a file of thousands of questions, each with its gold passages' texts


class QASetError(InputError):
    """A bad own QA set, question or index folder: one line naming the file, the record and the field."""


@dataclass(frozen=True)
class GoldRef:
    """A gold passage as the QA set keeps it: its title and text identify it; `passage_id` is its id when saved."""

    title: str
    text: str
    passage_id: int | None = None


@dataclass(frozen=True)
class OwnQuestion:
    """One question of the own QA set: its gold passages (at least one) and the right answer with aliases (optional)."""

    id: str
    question: str
    gold: tuple[GoldRef, ...]
    answers: tuple[str, ...] = ()
    saved: str = ""    # when it was first saved
    updated: str = ""  # when it was last saved
    source: str = ""   # where the passages were marked: "ask", "traces", "cli"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # fields this version does not know: kept

    def as_question(self) -> Question:
        """The QA record every evaluation and the diagnosis read (gold by (title, text))."""
        return Question(self.id, self.question, self.answers, tuple((g.title, g.text) for g in self.gold))

    def to_record(self) -> dict[str, Any]:
        paragraphs = [{"idx": n, "title": g.title, "paragraph_text": g.text, "is_supporting": True,
                       **({"passage_id": g.passage_id} if g.passage_id is not None else {})}
                      for n, g in enumerate(self.gold)]
        return {**self.extra, "id": self.id, "question": self.question,
                "answer": self.answers[0] if self.answers else "", "answer_aliases": list(self.answers[1:]),
                "paragraphs": paragraphs, "saved": self.saved, "updated": self.updated, "source": self.source}


def qa_path(index: Path) -> Path:
    return Path(index) / QA_FILE


def question_key(text: str) -> str:
    """What makes two questions the same one: the words, whatever their case and spacing, and a final "?" or not."""
    return " ".join(text.casefold().split()).rstrip(" ?")


def question_id(text: str) -> str:
    return ID_PREFIX + hashlib.sha1(question_key(text).encode("utf-8")).hexdigest()[:10]


def new_question(question: str, gold: Iterable[GoldRef], answers: Sequence[str] = (), source: str = ""
                 ) -> OwnQuestion:
    """A question to save, checked: words in it, at least one gold passage with a title or text, answers that are
    not empty (duplicates and blanks dropped)."""
    text = " ".join(question.split()) if isinstance(question, str) else ""
    if not text:
        raise QASetError("the question is empty: type the question the gold passages answer")
    refs = tuple(dict.fromkeys(gold))
    if not refs:
        raise QASetError(f"{text[:60]!r}: no gold passage marked: mark the passage(s) that hold the answer")
    for n, ref in enumerate(refs):
        if not ref.text.strip() and not ref.title.strip():
            raise QASetError(f"{text[:60]!r}: gold passage {n + 1} has neither a title nor a text")
    kept = tuple(dict.fromkeys(a.strip() for a in answers if isinstance(a, str) and a.strip()))
    return OwnQuestion(question_id(text), text, refs, kept, source=source)


# -- reading ----------------------------------------------------------------------------------------------------------
def require_index(index: Path) -> Path:
    """The index folder, or one line saying why it is not one."""
    index = Path(index)
    if not index.exists():
        raise QASetError(f"{index}: no such index folder")
    if not (index / "manifest.json").is_file():
        raise QASetError(f"{index}: not an index folder (no manifest.json); build one with `gear index`")
    return index


def load_own_qa(index: Path) -> list[OwnQuestion]:
    """The index's own questions, in the order they were first saved; [] when none was saved yet."""
    path = qa_path(index)
    if not path.exists():
        return []
    if path.is_file() and path.stat().st_size > MAX_BYTES:
        raise QASetError(f"{path}: {path.stat().st_size / 1e6:.0f} MB, more than the {MAX_BYTES / 1e6:.0f} MB an own "
                         "QA set may have")
    return _parse(path, read_json(path))


def _parse(path: Path, data: Any) -> list[OwnQuestion]:
    if not isinstance(data, list):
        raise QASetError(f"{path}: expected a list of questions, found {type(data).__name__}")
    if len(data) > MAX_ITEMS:
        raise QASetError(f"{path}: {len(data):,} questions, more than the {MAX_ITEMS:,} a QA set may hold")
    questions = []
    for n, record in enumerate(data):
        questions.append(_record(path, n, record))
    return questions


def _record(path: Path, n: int, record: Any) -> OwnQuestion:
    where = f"{path}: record {n}"
    if not isinstance(record, dict):
        raise QASetError(f"{where}: expected an object, found {type(record).__name__}")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise QASetError(f"{where}: field 'question' missing or not text")
    _bounded(where, "question", question, MAX_TEXT)
    where = f"{where} ({question[:50]!r})"
    raw_answer = record.get("answer", "")
    answers = [raw_answer] if isinstance(raw_answer, str) else raw_answer
    aliases = record.get("answer_aliases", []) or []
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise QASetError(f"{where}: field 'answer' must be text or a list of texts")
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise QASetError(f"{where}: field 'answer_aliases' must be a list of texts")
    for name, values in (("answer", answers), ("answer_aliases", aliases)):
        _bounded(where, name, values, MAX_ITEMS)
        for value in values:
            _bounded(where, name, value, MAX_NAME)
    paragraphs = record.get("paragraphs")
    if not isinstance(paragraphs, list) or not paragraphs:
        raise QASetError(f"{where}: field 'paragraphs' must be a non-empty list of gold passages")
    _bounded(where, "paragraphs", paragraphs, MAX_ITEMS)
    gold = []
    for m, p in enumerate(paragraphs):
        if not isinstance(p, dict):
            raise QASetError(f"{where}: paragraphs[{m}] is not an object")
        title, text, pid = p.get("title", ""), p.get("paragraph_text", p.get("text", "")), p.get("passage_id")
        if not isinstance(title, str) or not isinstance(text, str):
            raise QASetError(f"{where}: paragraphs[{m}]: 'title' and 'paragraph_text' must be text")
        if pid is not None and (not isinstance(pid, int) or isinstance(pid, bool) or not 0 <= pid <= SAFE_INT):
            raise QASetError(f"{where}: paragraphs[{m}]: 'passage_id' must be a whole number from 0")
        _bounded(where, f"paragraphs[{m}].title", title, MAX_NAME)
        _bounded(where, f"paragraphs[{m}].paragraph_text", text, MAX_TEXT)
        if p.get("is_supporting", True):
            gold.append(GoldRef(title, text, pid))
    if not gold:
        raise QASetError(f"{where}: no paragraph is marked is_supporting")
    answers_all = tuple(dict.fromkeys(a.strip() for a in [*answers, *aliases] if a.strip()))
    texts = {name: record.get(name, "") for name in ("saved", "updated", "source")}
    for name, value in texts.items():
        if not isinstance(value, str):
            raise QASetError(f"{where}: field '{name}' must be text")
        _bounded(where, name, value, MAX_WORD)
    qid = record.get("id")
    if qid is not None and not isinstance(qid, str):
        raise QASetError(f"{where}: field 'id' must be text")
    if qid is not None:
        _bounded(where, "id", qid, MAX_WORD)
    extra = {k: v for k, v in record.items() if k not in KNOWN_FIELDS}
    return OwnQuestion(qid or question_id(question), " ".join(question.split()), tuple(gold), answers_all,
                       texts["saved"], texts["updated"], texts["source"], extra)


def _bounded(where: str, name: str, value: str | list[Any], most: int) -> None:
    if len(value) > most:
        unit = "characters" if isinstance(value, str) else "items"
        raise QASetError(f"{where}: field '{name}' has {len(value):,} {unit}, more than the {most:,} it may have")


# -- writing ----------------------------------------------------------------------------------------------------------
def save_question(index: Path, question: OwnQuestion) -> tuple[OwnQuestion, bool]:
    """Add the question to the index's own QA set, or update it when it is there already (same words): its gold
    passages and answers become these, its id and first-saved time stay. Returns what was stored and whether it is
    new."""
    index = require_index(index)
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    with _locked(index):
        questions = _current(index)
        key = question_key(question.question)
        at = next((n for n, q in enumerate(questions) if question_key(q.question) == key), None)
        if at is None:
            stored = replace(question, saved=question.saved or now, updated=now)
            questions.append(stored)
        else:
            old = questions[at]
            stored = replace(question, id=old.id, saved=old.saved or now, updated=now, extra=old.extra)
            questions[at] = stored
        atomic_write_json(qa_path(index), [q.to_record() for q in questions])
    return stored, at is None


def remove_question(index: Path, which: str) -> OwnQuestion:
    """Remove one question, named by its id or its words; one line when there is no such question."""
    index = require_index(index)
    with _locked(index):
        questions = _current(index)
        key = question_key(which)
        at = next((n for n, q in enumerate(questions) if q.id == which.strip() or question_key(q.question) == key),
                  None)
        if at is None:
            raise QASetError(f"{qa_path(index)}: no question with the id or words {which.strip()[:60]!r}")
        removed = questions.pop(at)
        atomic_write_json(qa_path(index), [q.to_record() for q in questions])
    return removed


def _current(index: Path) -> list[OwnQuestion]:
    """The questions saved so far, read under the lock; a file that does not parse stops the change (never
    overwritten: what it holds would be lost)."""
    try:
        return load_own_qa(index)
    except InputError as exc:
        raise QASetError(f"{exc}; nothing was changed (fix the file or move it away)") from None


@contextmanager
def _locked(index: Path) -> Iterator[None]:
    """The index folder's lock (gear.files.directory_lock), with one line when another save holds it too long."""
    try:
        with directory_lock(index):
            yield
    except LockTimeout:
        raise QASetError(f"{qa_path(index)}: another save has held the index folder's lock for a minute; try again") \
            from None
