"""A person's files in the data folder, named and read in one place for every page: a saved trace's file name, the
tags a person gave a trace (TRACE.tags.json, never beside a bundled trace in assets/), and the saved evaluation
reports. A saved trace or report is untrusted (gear.saved): every page opens one through `open_trace` and
`open_report`, which refuse a file outside the data folder and the bundled files (links resolved) and check every
field before a page draws it."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

from gear.eval.report_file import ReportError, read_report
from gear.files import slug
from gear.saved import MAX_NAME, MAX_TEXT, inside
from gear.trace import Trace, TraceError
from studio.core import paths

WHERE = "the data folder and the bundled files"


def save_name(trace: Trace) -> str:
    """A file name for a saved trace: time, question, and a short random suffix, so two sessions saving the same
    question in the same second never overwrite each other (data/traces is shared by every session)."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}_{slug(trace.question)}_{uuid.uuid4().hex[:6]}.json"


def read_tags(trace: Path) -> dict:
    """A trace's tags ({} when none, or when the file is not what the tag form writes: categories a list of names,
    a note a string)."""
    p = paths.tags_path(trace)
    try:
        tags = json.loads(p.read_text(encoding="utf-8")) if p.is_file() and p.stat().st_size < 1_000_000 else {}
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(tags, dict):
        return {}
    categories, note = tags.get("categories", []), tags.get("note", "")
    if not (isinstance(categories, list) and all(isinstance(c, str) and len(c) <= MAX_NAME for c in categories)
            and isinstance(note, str) and len(note) <= MAX_TEXT):
        return {}
    return tags


def open_trace(path: str | Path) -> Trace:
    """A saved trace, opened only inside the data folder and the bundled files (links resolved) and checked field by
    field (gear.trace.schema); TraceError in one line otherwise."""
    return Trace.load(inside(Path(path), paths.homes(), WHERE, error=TraceError))


def open_report(path: Path) -> dict[str, Any]:
    """A saved evaluation report, opened only inside the data folder and the bundled files and checked field by field
    (gear.eval.report_file); ReportError in one line otherwise."""
    return read_report(inside(path, paths.homes(), WHERE, error=ReportError))


def saved_reports() -> dict[str, Path]:
    d = paths.evals_dir()
    return {p.stem: p for p in sorted(d.glob("*.json"), reverse=True)} if d.is_dir() else {}
