"""Reading a file someone brought, with a reason a person can act on when it cannot be read.

Every loader (corpus, QA set, OpenIE triples, marks) reads through `read_text` / `read_json`, so a missing, empty,
binary, UTF-16 or broken-JSON file is refused in the same words everywhere, naming the file and where it breaks; an
`InputError` carries the formats the file could have been in (with examples) for whoever shows the refusal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gear.saved import MAX_DEPTH, too_deep


@dataclass(frozen=True, slots=True)
class Format:
    """An input format a person may bring, with a two-line example (shown beside a refusal, so the fix is in view)."""

    name: str
    example: str


CORPUS_FORMATS = (
    Format("HippoRAG corpus (.json): a list of {title, text} records",
           '[{"title": "Sicily", "text": "Sicily is the largest island in the Mediterranean Sea."},\n'
           ' {"title": "Mount Etna", "text": "Mount Etna is an active volcano on Sicily."}]'),
    Format("HotpotQA corpus (.json): an object of title → list of sentences",
           '{"Sicily": ["Sicily is the largest island ", "in the Mediterranean Sea."],\n'
           ' "Mount Etna": ["Mount Etna is an active volcano on Sicily."]}'),
    Format("plain text (.txt, .md; UTF-8): the file's name is the title; the text is cut into passages of about "
           "120 words",
           "Sicily is the largest island in the Mediterranean Sea.\n"
           "Mount Etna, an active volcano, rises over its east coast."),
)
QA_FORMATS = (
    Format("MuSiQue / HippoRAG QA (.json): gold passages are the paragraphs marked is_supporting",
           '[{"id": "q1", "question": "Which sea is Sicily in?", "answer": "Mediterranean Sea",\n'
           '  "paragraphs": [{"title": "Sicily", "paragraph_text": "…", "is_supporting": true}]}]'),
    Format("HotpotQA / 2Wiki QA (.json): gold passages are the titles of supporting_facts",
           '[{"_id": "q1", "question": "Which sea is Sicily in?", "answer": "Mediterranean Sea",\n'
           '  "supporting_facts": [["Sicily", 0]], "context": [["Sicily", ["Sicily is …"]]]}]'),
)
OPENIE_FORMATS = (
    Format("HippoRAG OpenIE (.json): the triples of each passage, matched to the corpus by title and text",
           '{"docs": [{"title": "Sicily", "text": "Sicily is an island in the Mediterranean Sea.",\n'
           '           "extracted_triples": [["Sicily", "island in", "Mediterranean Sea"]]}]}'),
)


class InputError(ValueError):
    """A bad input file: the message names the file, the record and the field, and is shown to users as is.
    `formats` are the formats the file could have been in (with examples), for whoever shows the message."""

    def __init__(self, message: str, formats: Sequence[Format] = ()) -> None:
        super().__init__(message)
        self.formats = tuple(formats)


class EmptyFile(InputError):
    """A file with nothing in it (or only whitespace)."""


# what the json module says, in words a person can act on (its own words follow in brackets)
_JSON_REASONS = {
    "Expecting value": "a value is missing or is not JSON (a trailing comma, a single-quoted string or an unquoted "
                       "word?)",
    "Unterminated string starting at": "a string that starts here is never closed (a missing \")",
    "Expecting ',' delimiter": "a comma is missing between two items",
    "Expecting ':' delimiter": "a colon is missing after a key",
    "Expecting property name enclosed in double quotes": "a key is not in double quotes, or a comma is left "
                                                         "before a closing }",
    "Extra data": "more text follows the end of the JSON value (two documents in one file? JSON Lines is not read)",
    "Invalid control character at": "a string runs on past the end of its line (a missing \"?) or holds a raw "
                                    "control character (write a line break as \\n)",
    "Invalid \\escape": "a backslash starts an escape JSON does not know (write \\\\ for a backslash)",
}


def file_label(path: str | Path, name: str | None) -> str:
    return name or str(path)


def _near(text: str, lineno: int, colno: int) -> str:
    """The text around a position (one line, at most ≈60 characters), to show where a file breaks."""
    lines = text.splitlines()
    if not 0 < lineno <= len(lines):
        return ""
    line = lines[lineno - 1]
    start = max(0, colno - 31)
    piece = line[start:start + 60].strip()
    return f" near “{'…' if start else ''}{piece}{'…' if start + 60 < len(line) else ''}”" if piece else ""


def read_text(path: str | Path, name: str | None = None, formats: Sequence[Format] = ()) -> str:
    """A text file's content, or an InputError that says in plain words why it cannot be read: missing, a folder,
    empty, binary, UTF-16, or not UTF-8 (with the byte and line). A UTF-8 byte-order mark is accepted."""
    p = Path(path)
    label = file_label(p, name)
    if not p.exists():
        raise InputError(f"{label}: file not found")
    if p.is_dir():
        raise InputError(f"{label}: is a directory, expected a file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{label}: cannot read ({exc.strerror})") from None
    if not raw.strip():
        raise EmptyFile(f"{label}: the file is empty" + (" (only whitespace)" if raw else ""), formats)
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError(f"{label}: is UTF-16 text; save it as UTF-8 and upload it again", formats)
    nul = raw.find(b"\x00", 0, 8192)
    if nul >= 0:
        raise InputError(f"{label}: not a text file (binary data: a NUL byte at byte {nul:,}); expected UTF-8 "
                         "text", formats)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{label}: not UTF-8 text: byte 0x{raw[exc.start]:02x} at byte {exc.start:,} (line "
                         f"{line}) is not UTF-8 ({exc.reason}); save the file as UTF-8 and upload it again",
                         formats) from None


def read_json(path: str | Path, name: str | None = None, formats: Sequence[Format] = ()) -> Any:
    """A JSON file's value; `name` is what messages call the file (an upload's own name rather than the temporary
    copy's path), `formats` what it was expected to hold (kept on the error for whoever shows it)."""
    label = file_label(path, name)
    text = read_text(path, name, formats)
    if too_deep(text):
        raise InputError(f"{label}: nested more than {MAX_DEPTH} levels deep: not a file this reads", formats)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        if not isinstance(exc, json.JSONDecodeError):  # an integer of thousands of digits
            raise InputError(f"{label}: invalid JSON: {' '.join(str(exc).split())[:200]}", formats) from None
        words = _JSON_REASONS.get(exc.msg)
        reason = f"{words} (the parser says: {exc.msg})" if words else exc.msg
        raise InputError(f"{label}: invalid JSON at line {exc.lineno}, column {exc.colno}"
                         f"{_near(text, exc.lineno, exc.colno)}: {reason}", formats) from None


def shape(value: Any) -> str:
    """What a JSON value is, in words ("a list of 3 strings", "an object with keys 'data', 'version'")."""
    if isinstance(value, list):
        kinds = sorted({_kind(v) for v in value})
        if not value:
            return "an empty list"
        plural = "" if len(value) == 1 else "s"
        return f"a list of {len(value):,} " + (f"{kinds[0]}{plural}" if len(kinds) == 1 else "mixed values")
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in list(value)[:4]) + (", …" if len(value) > 4 else "")
        return f"an object with keys {keys}" if value else "an empty object"
    return f"a {_kind(value)}"


def _kind(value: Any) -> str:
    return {dict: "object", list: "list", str: "string", bool: "true/false", type(None): "null"}.get(
        type(value), "number")
