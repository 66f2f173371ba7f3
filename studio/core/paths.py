"""Where the app's files live: the project's assets (bundled traces, recorded LLM answers, the project's own
evaluations) and the user's data folder (indexes, saved traces, evaluations, a person's tags) — the app's one source for
each path, and the rule that a saved file is opened only inside these homes."""

from __future__ import annotations

import os
from pathlib import Path

from gear import files

ROOT = files.PROJECT_ROOT
ASSETS = ROOT / "assets"
LLM_CACHE = ASSETS / "llm_cache"
BUNDLED_TRACES = ASSETS / "traces"
BUNDLED_EVALS = ROOT / "docs" / "evals"  # the project's own recorded evaluations (docs/results.md)


def wanted_index() -> str:
    """The index the app is to open on ($GEAR_STUDIO_INDEX, an index's name); "" when unset: the walk-through demo."""
    return os.environ.get("GEAR_STUDIO_INDEX", "")


def data_dir() -> Path:
    """The user's data folder (gear.files.data_dir: the one the CLI and the library use too, so a question asked in
    the app and in `gear ask` replays the same recorded run)."""
    return files.data_dir()


def shown(path: Path) -> str:
    """A path of the data folder as a person reads it: relative to the project when inside it, with ~ for the home
    folder, else in full."""
    path = path.resolve()
    if path.is_relative_to(ROOT):
        return str(path.relative_to(ROOT))
    home = Path.home().resolve()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def indexes_dir() -> Path:
    return data_dir() / "indexes"


def traces_dir() -> Path:
    return data_dir() / "traces"


def evals_dir() -> Path:
    return data_dir() / "evals"


def homes() -> list[Path]:
    """Where the app opens a saved trace or report: the data folder, the bundled assets and the project's recorded
    evaluations — never elsewhere, whatever a link, a report or a link in the data folder points at."""
    return [data_dir(), ASSETS, BUNDLED_EVALS]


def tags_path(trace: Path) -> Path:
    """Where a person's tags and verdict of a trace file are kept: beside the trace when it lives in the data folder
    (a saved run, an evaluation's trace), else under the data folder's tags/, named after the trace's place in the
    project — a bundled example is tagged without writing into assets/."""
    trace, data = trace.resolve(), data_dir().resolve()
    if trace.is_relative_to(data):
        return trace.with_name(trace.stem + ".tags.json")
    where = trace.relative_to(ROOT) if trace.is_relative_to(ROOT) else trace.relative_to(trace.anchor)
    return data / "tags" / ("__".join(where.with_suffix("").parts) + ".tags.json")


def index_dir(name: str) -> Path:
    return indexes_dir() / name


def project_path(path: Path) -> str:
    """A path as the manifest records it: relative to the project when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
