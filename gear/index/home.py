"""The index a recorded run was made on, found as the app finds a bundled example's: the index in the data folder
whose QA set holds the run's question id — the QA file its manifest names (a demo's), a `qa.json` beside it, or its
own QA set (gear/data/qa_set.py). A trace does not name its index (a run replays without one); what needs the index
again (searching the beams again with other knobs) looks it up here, or is told where it is.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from gear.data.qa_set import QA_FILE
from gear.files import PROJECT_ROOT, data_dir
from gear.index.manifest import MANIFEST


@functools.lru_cache(maxsize=32)
def _ids(path: str, mtime: float) -> frozenset[str]:
    try:
        records = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    if not isinstance(records, list):
        return frozenset()
    return frozenset(str(r.get("id", r.get("_id", ""))) for r in records if isinstance(r, dict))


def question_ids(path: Path) -> frozenset[str]:
    """The question ids of a QA file (MuSiQue / HotpotQA / 2Wiki schemas: "id" or "_id"); none for a file that is
    missing or does not parse."""
    try:
        return _ids(str(path), path.stat().st_mtime)
    except OSError:
        return frozenset()


def qa_files(index: Path) -> list[Path]:
    """The QA files an index carries or its manifest names (relative to the project when not absolute)."""
    found = [index / "qa.json", index / QA_FILE]
    try:
        manifest = json.loads((index / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    named = manifest.get("source", {}).get("qa") if isinstance(manifest, dict) and isinstance(
        manifest.get("source"), dict) else None
    if isinstance(named, str) and named:
        path = Path(named)
        found.append(path if path.is_absolute() else PROJECT_ROOT / path)
    return [p for p in found if p.is_file()]


def home_index(question_id: str, indexes: Path | None = None) -> Path | None:
    """The index under `indexes` (default: the data folder's indexes/) whose QA set holds `question_id`; None when
    none does (or the id is empty)."""
    root = indexes if indexes is not None else data_dir() / "indexes"
    if not question_id or not root.is_dir():
        return None
    for index in sorted(p for p in root.iterdir() if (p / MANIFEST).is_file()):
        if any(question_id in question_ids(f) for f in qa_files(index)):
            return index
    return None
