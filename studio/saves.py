"""A person's files in the data folder, named and read in one place for every page: a saved trace's file name, the
tags a person gave a trace (TRACE.tags.json, never beside a bundled trace in assets/), and the saved evaluation
reports."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from gear.files import slug
from gear.trace import Trace
from studio import demo


def save_name(trace: Trace) -> str:
    """A file name for a saved trace: time, question, and a short random suffix, so two sessions saving the same
    question in the same second never overwrite each other (data/traces is shared by every session)."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}_{slug(trace.question)}_{uuid.uuid4().hex[:6]}.json"


def tags_path(trace: Path) -> Path:
    return demo.tags_path(trace)  # in the user's data folder, never beside a bundled trace in assets/


def read_tags(trace: Path) -> dict:
    p = tags_path(trace)
    try:
        return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}
    except (OSError, ValueError):
        return {}


def saved_reports() -> dict[str, Path]:
    d = demo.evals_dir()
    return {p.stem: p for p in sorted(d.glob("*.json"), reverse=True)} if d.is_dir() else {}
