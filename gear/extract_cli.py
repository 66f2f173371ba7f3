"""Placeholder bridge to LLM triple extraction for `gear index` without --openie."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gear.corpus import Document, InputError


def extract_for_index(docs: list[Document], settings: Any, out_dir: Path, console: Any) -> tuple[list, dict]:
    raise InputError("triple extraction from raw text is not available yet: pass --openie OPENIE_JSON")
