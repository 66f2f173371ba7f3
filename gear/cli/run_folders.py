"""A folder of saved runs as `gear diagnose` reads it: an evaluation's folder (data/evals/) holds each report as
`<name>.json` beside its traces (`<name>/traces/<question>.json`), so the reports are recognised and said once, not
refused one by one as broken traces; and the traces are named by what tells them apart — at 80 columns a full path
("20261128-091247-3d25a7_books_bm25/traces/2hop__1.json") shows only the date every one of them starts with."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from gear.eval.report_file import MAX_BYTES, looks_like_report
from gear.saved import SavedFileError, read

_BREAK = re.compile(r"[-_. ]")  # where a shared head may end: a name is never cut inside a word


def is_report(path: Path) -> bool:
    """Whether a JSON file is an evaluation's report (gear eval --json, the Evaluate page): recall per cut-off and a
    question count, not a trace's events."""
    try:
        data = read(path, max_bytes=MAX_BYTES)
    except SavedFileError:
        return False
    return looks_like_report(data)


def short_names(folder: Path, files: Sequence[Path]) -> list[str]:
    """Each file's path below `folder` without `.json` and without what every one of them shares: a folder level the
    same for all ("traces") is left out, and at a level where they differ the head all of them start with (the
    evaluation's date and index, "20261128-091247-3d25a7_books_") is cut at a word's end. One file keeps its name."""
    parts = [list(f.relative_to(folder).with_suffix("").parts) for f in files]
    if len(parts) < 2:
        return ["/".join(p) for p in parts]
    depth = max(len(p) for p in parts)
    shown: list[list[str]] = [[] for _ in parts]
    for level in range(depth):
        names = [p[level] if level < len(p) else "" for p in parts]
        if len(set(names)) == 1 and level < depth - 1:
            continue  # the same folder for every file
        head = _shared_head([n for n in names if n]) if len(set(names)) > 1 else ""
        for row, name in zip(shown, names, strict=True):
            if name:
                row.append(name[len(head):] or name)
    return ["/".join(row) for row in shown]


def _shared_head(names: Sequence[str]) -> str:
    """The longest head all names share that ends just after a separator ("-", "_", ".", " "); "" when there is none
    or when it would leave a name empty."""
    common = os.path.commonprefix(list(names))  # noqa: RUF071 - names, as meant (characters, not paths)
    cut = max((m.end() for m in _BREAK.finditer(common)), default=0)
    return common[:cut] if all(len(n) > cut for n in names) else ""
