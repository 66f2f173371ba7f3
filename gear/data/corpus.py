"""Loaders for the corpus, QA and OpenIE formats the paper's datasets come in, with errors that name file and record.

Formats: HippoRAG corpus (list of {title, text}); HotpotQA corpus ({title: [sentences]}); QA sets in the MuSiQue
schema (paragraphs with is_supporting), the HippoRAG schema, and the raw HotpotQA / 2Wiki schema (supporting_facts
titles); HippoRAG OpenIE output (docs[].extracted_triples); plain .txt/.md files or a folder of them (title = file
name, chunked into passages by gear.data.chunking). Gold passages are identified by (title, text).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class InputError(ValueError):
    """A bad input file: the message names the file, the record and the field, and is shown to users as is."""


@dataclass
class LoadReport:
    """Counted, non-fatal problems found while loading (shown to the user, never silently dropped)."""

    path: str
    warnings: list[str] = field(default_factory=list)

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.path}: {message}")

    def summary(self, limit: int = 5) -> list[str]:
        lines = self.warnings[:limit]
        if len(self.warnings) > limit:
            lines.append(f"{self.path}: … and {len(self.warnings) - limit} more warnings")
        return lines


@dataclass(frozen=True, slots=True)
class Document:
    """A corpus record before indexing."""

    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Question:
    """A QA item; `gold` holds (title, text) keys, or (title, None) when the source only names titles."""

    id: str
    question: str
    answers: tuple[str, ...]
    gold: tuple[tuple[str, str | None], ...]

    @property
    def hop_type(self) -> str:
        """MuSiQue encodes the hop type in the id prefix (2hop, 3hop1, …); other sets have none."""
        prefix = self.id.split("__", 1)[0]
        return prefix if "hop" in prefix else "all"


@dataclass(frozen=True, slots=True)
class OpenIEDoc:
    title: str
    text: str
    triples: tuple[tuple[str, str, str], ...]
    entities: tuple[str, ...] = ()


def read_json(path: str | Path) -> Any:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    if p.is_dir():
        raise InputError(f"{p}: is a directory, expected a JSON file")
    try:
        with p.open(encoding="utf-8") as fh:
            return json.load(fh)
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


def _text_field(record: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = record.get(name)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(s, str) for s in value):
            return "".join(value)
    return None


def load_corpus(path: str | Path) -> tuple[list[Document], LoadReport]:
    """Read a HippoRAG-style list of {title, text} or a HotpotQA-style {title: [sentences]} dict."""
    data = read_json(path)
    report = LoadReport(str(path))
    docs: list[Document] = []
    if isinstance(data, dict):
        for n, (title, sentences) in enumerate(data.items()):
            text = sentences if isinstance(sentences, str) else None
            if isinstance(sentences, list) and all(isinstance(s, str) for s in sentences):
                text = "".join(sentences)
            if not text or not text.strip():
                report.warn(f"record {n} ({title!r}): no text, skipped")
                continue
            docs.append(Document(str(title), text))
    elif isinstance(data, list):
        for n, record in enumerate(data):
            if not isinstance(record, dict):
                report.warn(f"record {n}: expected an object with 'title' and 'text', got {type(record).__name__}")
                continue
            text = _text_field(record, "text", "paragraph_text", "contents")
            title = record.get("title", "")
            if not isinstance(title, str):
                report.warn(f"record {n}: field 'title' is not a string, skipped")
                continue
            if text is None or not text.strip():
                report.warn(f"record {n} ({title!r}): field 'text' missing or empty, skipped")
                continue
            docs.append(Document(title, text))
    else:
        raise InputError(f"{path}: expected a list of {{title, text}} or a {{title: [sentences]}} object")
    if not docs:
        raise InputError(f"{path}: no passages with text found")
    return docs, report


def _answers(record: dict[str, Any]) -> tuple[str, ...]:
    answer = record.get("answer", [])
    answers = [answer] if isinstance(answer, str) else [a for a in answer if isinstance(a, str)]
    answers += [a for a in record.get("answer_aliases", []) or [] if isinstance(a, str)]
    return tuple(dict.fromkeys(a for a in answers if a))


def _gold_from_paragraphs(paragraphs: list[Any]) -> list[tuple[str, str | None]]:
    gold: list[tuple[str, str | None]] = []
    for p in paragraphs:
        if isinstance(p, dict) and p.get("is_supporting", False):
            text = _text_field(p, "paragraph_text", "text")
            gold.append((str(p.get("title", "")), text))
    return gold


def _gold_from_supporting_facts(record: dict[str, Any]) -> list[tuple[str, str | None]]:
    titles = list(dict.fromkeys(str(f[0]) for f in record.get("supporting_facts", []) if f))
    context = {str(c[0]): "".join(c[1]) for c in record.get("context", []) if isinstance(c, list) and len(c) == 2}
    return [(t, context.get(t)) for t in titles]


def load_qa(path: str | Path) -> tuple[list[Question], LoadReport]:
    """Read a QA set in the MuSiQue, HippoRAG or raw HotpotQA / 2Wiki schema."""
    data = read_json(path)
    report = LoadReport(str(path))
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a list of questions")
    questions: list[Question] = []
    for n, record in enumerate(data):
        if not isinstance(record, dict):
            report.warn(f"record {n}: not an object, skipped")
            continue
        qid = str(record.get("id", record.get("_id", n)))
        text = record.get("question")
        if not isinstance(text, str) or not text.strip():
            report.warn(f"record {n} (id {qid}): field 'question' missing or empty, skipped")
            continue
        if "paragraphs" in record:
            gold = _gold_from_paragraphs(record["paragraphs"])
        elif "supporting_facts" in record:
            gold = _gold_from_supporting_facts(record)
        else:
            report.warn(f"record {n} (id {qid}): no 'paragraphs' or 'supporting_facts'; no gold passages")
            gold = []
        if not gold:
            report.warn(f"record {n} (id {qid}): no gold passages")
        questions.append(Question(qid, text.strip(), _answers(record), tuple(gold)))
    if not questions:
        raise InputError(f"{path}: no questions found")
    return questions, report


def _clean_triple(raw: Any) -> tuple[str, str, str] | None:
    if not isinstance(raw, (list, tuple)) or len(raw) != 3:
        return None
    parts = [str(x).strip() if isinstance(x, (str, int, float)) and not isinstance(x, bool) else None for x in raw]
    subject, predicate, obj = parts
    return (subject, predicate, obj) if subject and predicate and obj else None


def load_openie(path: str | Path) -> tuple[list[OpenIEDoc], LoadReport]:
    """Read HippoRAG's OpenIE output; triples that are not three non-empty strings are dropped and counted."""
    data = read_json(path)
    report = LoadReport(str(path))
    docs_raw = data.get("docs") if isinstance(data, dict) else data
    if not isinstance(docs_raw, list):
        raise InputError(f"{path}: expected an object with a 'docs' list (HippoRAG OpenIE format)")
    docs: list[OpenIEDoc] = []
    dropped = 0
    for n, record in enumerate(docs_raw):
        if not isinstance(record, dict):
            report.warn(f"docs[{n}]: not an object, skipped")
            continue
        title = record.get("title")
        text = record.get("text")
        if (not isinstance(title, str) or not isinstance(text, str)) and isinstance(record.get("passage"), str):
            title, _, text = record["passage"].partition("\n")
        if not isinstance(text, str) or not text.strip():
            report.warn(f"docs[{n}]: field 'text' missing or empty, skipped")
            continue
        raw_triples = record.get("extracted_triples", [])
        if not isinstance(raw_triples, list):
            report.warn(f"docs[{n}] ({title!r}): field 'extracted_triples' is not a list, skipped")
            continue
        triples: list[tuple[str, str, str]] = []
        for m, raw in enumerate(raw_triples):
            clean = _clean_triple(raw)
            if clean is None:
                dropped += 1
                if dropped <= 20:
                    report.warn(f"docs[{n}].extracted_triples[{m}]: not 3 non-empty strings: {str(raw)[:80]}")
                continue
            triples.append(clean)
        entities = tuple(e for e in record.get("extracted_entities", []) or [] if isinstance(e, str))
        docs.append(OpenIEDoc(str(title or ""), text, tuple(dict.fromkeys(triples)), entities))
    if dropped > 20:
        report.warn(f"{dropped} malformed triples dropped in all")
    return docs, report


def unique_documents(docs: Iterable[Document], report: LoadReport) -> list[Document]:
    """Drop exact duplicate (title, text) records, which would otherwise split gold matches."""
    seen: set[tuple[str, str]] = set()
    out: list[Document] = []
    for d in docs:
        if (d.title, d.text) in seen:
            report.warn(f"duplicate passage {d.title!r} skipped")
            continue
        seen.add((d.title, d.text))
        out.append(d)
    return out


TEXT_SUFFIXES = (".txt", ".md", ".markdown")


def _read_text_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def load_text_documents(path: str | Path, chunk_words: int | None = None) -> tuple[list[Document], LoadReport]:
    """Plain text: one .txt/.md file, or every such file under a folder (sorted, recursive, hidden files skipped).

    Title = the file name without its suffix; the text is cut into passages of about `chunk_words` words
    (gear.data.chunking.DEFAULT_CHUNK_WORDS when None), every chunk keeping the file's title.
    """
    from gear.data.chunking import DEFAULT_CHUNK_WORDS, chunk_text

    p = Path(path)
    report = LoadReport(str(p))
    if not p.exists():
        raise InputError(f"{p}: file or folder not found")
    if p.is_dir():
        files = sorted(
            f for f in p.rglob("*")
            if f.is_file() and f.suffix.lower() in TEXT_SUFFIXES
            and not any(part.startswith(".") for part in f.relative_to(p).parts)
        )
        if not files:
            raise InputError(f"{p}: folder holds no {'/'.join(TEXT_SUFFIXES)} files")
    else:
        files = [p]
    docs: list[Document] = []
    for f in files:
        chunks = chunk_text(_read_text_file(f), chunk_words or DEFAULT_CHUNK_WORDS)
        if not chunks:
            report.warn(f"{f.name}: empty, skipped")
            continue
        docs.extend(Document(f.stem, chunk) for chunk in chunks)
    if not docs:
        raise InputError(f"{p}: no passages with text found")
    return docs, report


def load_any_corpus(path: str | Path, chunk_words: int | None = None) -> tuple[list[Document], LoadReport]:
    """A corpus in any supported form: a folder or .txt/.md file (chunked), else a JSON corpus (see load_corpus).

    JSON passages are kept as they are unless `chunk_words` is given, in which case longer ones are split too.
    """
    p = Path(path)
    if p.is_dir() or p.suffix.lower() in TEXT_SUFFIXES:
        return load_text_documents(p, chunk_words)
    docs, report = load_corpus(p)
    if chunk_words:
        from gear.data.chunking import chunk_text

        split: list[Document] = []
        for d in docs:
            if len(d.text.split()) <= chunk_words:
                split.append(d)
            else:
                split.extend(Document(d.title, chunk) for chunk in chunk_text(d.text, chunk_words))
        docs = split
    return docs, report


def align_openie(
    docs: Sequence[Document], openie: Sequence[OpenIEDoc], report: LoadReport
) -> list[list[tuple[str, str, str]]]:
    """Triples for each document, matched by (title, text), then by text alone; unmatched docs get none."""
    by_key = {(d.title, d.text): d for d in openie}
    by_text = {d.text.strip(): d for d in openie}
    out: list[list[tuple[str, str, str]]] = []
    missing = 0
    for doc in docs:
        found = by_key.get((doc.title, doc.text)) or by_text.get(doc.text.strip())
        if found is None:
            missing += 1
            out.append([])
        else:
            out.append(list(found.triples))
    if missing:
        report.warn(f"{missing} of {len(docs)} passages have no OpenIE record and get no triples")
    return out
