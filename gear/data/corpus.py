"""Corpora as the paper's datasets ship them, with errors that name file and record: a HippoRAG corpus (a list of
{title, text}) or a HotpotQA one ({title: [sentences]}), read into `Document`s (`load_corpus`), exact duplicates
dropped (`unique_documents`); `LoadReport` carries what a load skipped or warned about, for every loader of the
package (questions: QA sets; openie: triples; text_files: .txt/.md files and folders).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gear.data.reading import (
    CORPUS_FORMATS,
    InputError,
    file_label,
    read_json,
    shape,
)


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
    """A corpus record before indexing; `source`: the file it was read from, when its title was made from the file's
    name (a .txt/.md file): the index's manifest keeps it (`source_files`)."""

    title: str
    text: str
    source: str = ""


def _wrapped(data: dict[str, Any]) -> str:
    """The key under which an object holds records (a list of objects, or an object), as an export that wraps its
    corpus does ({"data": [...], "version": "1.0"}); "" when none does."""
    return next((str(k) for k, v in data.items()
                 if isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, dict) for x in v))), "")


def _looks_like(data: Any) -> str:
    """Which other input a JSON value looks like, when it is not a corpus (a common mix-up between the uploads)."""
    records = data if isinstance(data, list) else []
    first = next((r for r in records if isinstance(r, dict)), None)
    if first is not None and "question" in first:
        return " It looks like a QA set (its records have a 'question'): upload it as the QA set."
    if isinstance(data, dict) and "docs" in data:
        return " It looks like an OpenIE file (it has a 'docs' list): upload it as the OpenIE triples."
    if isinstance(data, dict) and _wrapped(data):
        key = _wrapped(data)
        return f" Its {key!r} holds {shape(data[key])}: if those are the passages, upload that list alone."
    return ""


def text_field(record: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = record.get(name)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(s, str) for s in value):
            return "".join(value)
    return None


def load_corpus(path: str | Path, name: str | None = None) -> tuple[list[Document], LoadReport]:
    """Read a HippoRAG-style list of {title, text} or a HotpotQA-style {title: [sentences]} dict. `name` is what
    messages call the file (default: its path)."""
    label = file_label(path, name)
    data = read_json(path, name, CORPUS_FORMATS)
    report = LoadReport(label)
    docs: list[Document] = []
    if data in ([], {}):
        raise InputError(f"{label}: no passage with text, so nothing to index — it holds no records",
                         CORPUS_FORMATS)
    if isinstance(data, dict) and any(_sentences(v) is not None for v in data.values()) and not _wrapped(data):
        for n, (title, sentences) in enumerate(data.items()):
            text = _sentences(sentences)
            if text is None:
                report.warn(f"record {n} ({title!r}): expected a list of sentences, got {shape(sentences)}; "
                            "skipped")
                continue
            if not text.strip():
                report.warn(f"record {n} ({title!r}): no text, skipped")
                continue
            docs.append(Document(str(title), text))
    elif isinstance(data, list) and any(isinstance(r, dict) for r in data) and not _looks_like(data):
        for n, record in enumerate(data):
            if not isinstance(record, dict):
                report.warn(f"record {n}: expected an object with 'title' and 'text', got {shape(record)}")
                continue
            text = text_field(record, "text", "paragraph_text", "contents")
            title = record.get("title", "")
            if not isinstance(title, str):
                report.warn(f"record {n}: field 'title' is not a string, skipped")
                continue
            if text is None or not text.strip():
                what = "missing" if not any(k in record for k in ("text", "paragraph_text", "contents")) else \
                    "empty" if text is not None else f"not a string ({shape(record.get('text'))})"
                report.warn(f"record {n} ({title!r}): field 'text' {what}, skipped")
                continue
            docs.append(Document(title, text))
    else:
        raise InputError(f"{label}: JSON of another shape ({shape(data)}); a corpus is a list of {{title, text}} "
                         f"records or a {{title: [sentences]}} object.{_looks_like(data)}", CORPUS_FORMATS)
    if not docs:
        why = "; ".join(w.removeprefix(f"{label}: ") for w in report.warnings[:3]) or "it holds no records"
        more = f" (and {len(report.warnings) - 3:,} more)" if len(report.warnings) > 3 else ""
        raise InputError(f"{label}: no passage with text, so nothing to index — {why}{more}", CORPUS_FORMATS)
    _warn_shared_titles(docs, report)
    return docs, report


def _sentences(value: Any) -> str | None:
    """A HotpotQA corpus value as text: a string, or a list of sentence strings joined; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return "".join(value)
    return None


def _warn_shared_titles(docs: Sequence[Document], report: LoadReport) -> None:
    """One warning when different passages share a title: a QA set that names its gold passages by title alone
    (HotpotQA, 2Wiki) cannot tell them apart (an exact duplicate is dropped by unique_documents instead)."""
    texts: dict[str, set[str]] = {}
    for d in docs:
        texts.setdefault(d.title, set()).add(d.text)
    shared = sorted(((len(v), t) for t, v in texts.items() if len(v) > 1), reverse=True)
    if shared:
        n, title = shared[0]
        report.warn(f"{len(shared):,} title{'s are' if len(shared) > 1 else ' is'} shared by different passages "
                    f"(e.g. {title!r} ×{n}): gold passages named by title alone (HotpotQA, 2Wiki QA sets) cannot be "
                    "told apart; QA sets that give the text (MuSiQue, HippoRAG) can")


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
