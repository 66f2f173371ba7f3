"""A grid of evaluations: every combination of the values given for some settings, each cell one evaluation exactly as
`gear eval` runs it (gear.eval.report.evaluate over the same questions, with the cell's settings), its report kept
beside the sweep, so the sweep's table is read from reports anyone can open, pair (`gear compare`) or diagnose.

A sweep is resumable cell by cell: a cell whose report is already there, made with the same settings on the same
questions, is read instead of run again (and a cell cut short replays what it had recorded when run again). Each cell
is lined up question by question with a baseline cell (gear.eval.pairing; the sign test and the paired bootstrap of
gear.eval.paired), so a difference in the table comes with how many questions carry it.

The sweep file (`Sweep`) is JSON that a person may hand over: it is decoded by a typed schema, and its cells' reports
are named relative to it.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gear import methods
from gear.config import SECRET_FIELDS, Settings, public_settings, renamed
from gear.data.questions import Question
from gear.eval.pairing import PairingError, pair_reports
from gear.eval.protocol import check
from gear.eval.report import EvalReport, EvaluatedEngine, EvaluatedRun, QuestionProgress, evaluate
from gear.events import LLMCalled
from gear.files import atomic_write_json

VERSION = 1
MAX_BYTES = 20_000_000  # a sweep file of 10,000 cells is ≈15 MB
Value = bool | int | float | str | None


class SweepError(ValueError):
    """A grid that cannot be run or a sweep file that cannot be read: the reason, in one line."""


# -- the grid ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Axis:
    """One setting of the grid and the values it takes, each checked by Settings as `gear eval` would check it."""

    name: str
    values: tuple[Value, ...]


def parse_axis(text: str, base: Settings) -> Axis:
    """"beam_length=1,2,3" → Axis("beam_length", (1, 2, 3)): the name a field of Settings (an old name is read as its
    new one), never a secret, each value validated and typed by Settings."""
    name, sep, raw = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or not name or not raw.strip():
        raise SweepError(f"--set {text!r}: write NAME=V1,V2,… (e.g. beam_length=1,2,3)")
    name = next(iter(renamed({name: None})))
    if name not in Settings.model_fields:
        close = [f for f in Settings.model_fields if name in f or f in name][:4]
        raise SweepError(f"--set {text!r}: {name!r} is not a setting" + (f" (did you mean {', '.join(close)}?)"
                                                                          if close else ""))
    if name in SECRET_FIELDS:
        raise SweepError(f"--set {text!r}: {name} is a secret, not a knob to sweep")
    values: list[Value] = []
    for item in (v.strip() for v in raw.split(",")):
        try:
            typed = getattr(base.with_(**{name: item}), name)
        except ValidationError as exc:
            raise SweepError(f"--set {name}={item!r}: {exc.errors()[0]['msg']}") from None
        value = typed if isinstance(typed, bool | int | float | str) else str(typed)
        if value in values:
            raise SweepError(f"--set {text!r}: {item!r} is given twice")
        values.append(value)
    return Axis(name, tuple(values))


def grid(axes: Sequence[Axis]) -> list[dict[str, Value]]:
    """Every combination of the axes' values, the first axis varying slowest."""
    names = [a.name for a in axes]
    if len(set(names)) != len(names):
        raise SweepError(f"a setting is swept twice: {', '.join(n for n in names if names.count(n) > 1)}")
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(a.values for a in axes))]


def cell_label(values: Mapping[str, Value]) -> str:
    """"beam_length=1 max_iterations=4": a cell as a person reads it (and names it for --baseline)."""
    return " ".join(f"{k}={_shown(v)}" for k, v in values.items())


def cell_slug(values: Mapping[str, Value]) -> str:
    """"beam_length-1_max_iterations-4": a cell's report file name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "_".join(f"{k}-{_shown(v)}" for k, v in values.items()))[:150]


def _shown(value: Value) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def unread_axes(method: str, axes: Sequence[Axis]) -> list[str]:
    """The swept settings the method's runs do not read (their cells would be alike); the model's own settings aside."""
    reads = {"retriever", "method", *methods.get(method).settings}
    return [a.name for a in axes if a.name not in reads and not a.name.startswith("llm")]


def find_cell(cells: Sequence[Mapping[str, Value]], wanted: Mapping[str, str]) -> int:
    """The index of the cell whose values are `wanted` (each given as text, as on the command line)."""
    hits = [i for i, c in enumerate(cells)
            if all(_shown(c.get(k)) == str(v).strip().lower() or str(c.get(k)) == str(v).strip()
                   for k, v in wanted.items())]
    if len(hits) != 1:
        shown = ", ".join(f"{k}={v}" for k, v in wanted.items())
        raise SweepError(f"--baseline {shown}: " + ("no cell of the grid has these values" if not hits else
                                                     f"{len(hits)} cells have these values: name every swept setting"))
    return hits[0]


def default_baseline(base: Settings, cells: Sequence[Mapping[str, Value]]) -> int:
    """The cell with the base settings' own values (for the defaults, the paper's setting), else the first."""
    for i, c in enumerate(cells):
        if all(getattr(base, k) == v for k, v in c.items()):
            return i
    return 0


# -- before a cell runs: how much of it the recordings hold ------------------------------------------------------------
@dataclass
class CellProbe:
    """What a cell will ask of the model, found before it runs without asking any (gear.agent.recorded): of its runs
    (a question, or a question at each cut-off under the paper's protocol), how many replay whole from the recorded
    answers, how many are recorded up to some request and ask the model from there, and how many ask it from their
    first request; and the model time that is expected to take at the model's learned speed."""

    runs: int
    asks_llm: bool = True
    replayed: int = 0
    partly: int = 0
    live: int = 0
    live_from: dict[str, int] = field(default_factory=dict)  # where the partly recorded runs meet the model
    estimate_s: float = 0.0

    def sentence(self) -> str:
        if not self.asks_llm:
            return f"{self.runs} runs, no LLM asked"
        parts = [f"{self.replayed} replay{'s' if self.replayed == 1 else ''} whole from recordings"]
        if self.partly:
            where = ", ".join(f"{n} at {step}" for step, n in self.live_from.items())
            parts.append(f"{self.partly} {'is' if self.partly == 1 else 'are'} recorded in part and "
                         f"ask{'s' if self.partly == 1 else ''} the model from there ({where})")
        one = self.live == 1
        parts.append(f"{self.live} ask{'s' if one else ''} the model from {'its' if one else 'their'} first request")
        live = self.partly + self.live
        estimate = f"; model time ≈ {duration(self.estimate_s)}" if live else "; nothing is asked of the model"
        return f"{self.runs} runs: " + ", ".join(parts) + estimate


Probe = Callable[[Settings], CellProbe]


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# -- the sweep file ----------------------------------------------------------------------------------------------------
class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class AxisRecord(_Model):
    name: str = Field(max_length=100)
    values: list[Value] = Field(max_length=1000)


class PairedRecord(_Model):
    """A cell against the baseline on one measure (gear.eval.paired.PairedMeasure)."""

    name: str = Field(max_length=40)
    n: int
    mean_a: float
    mean_b: float
    difference: float
    better: int
    worse: int
    tied: int
    p_sign: float | None = None
    low: float | None = None
    high: float | None = None
    sentence: str = Field("", max_length=500)


class CellRecord(_Model):
    name: str = Field(max_length=300)  # cell_label
    values: dict[str, Value]
    report: str = Field(max_length=300)  # the cell's report, relative to the sweep file
    n_questions: int
    recall: dict[str, float]
    em: float | None = None
    f1: float | None = None
    tokens_per_question: float = 0.0
    seconds_per_question: float = 0.0
    iterations_mean: float | None = None
    llm_calls: dict[str, int] = Field(default_factory=dict)  # by source: model, record, memo
    seconds: float = 0.0  # the cell's wall time when it ran (kept when it is read back; 0 if no sweep file said)
    model_seconds: float = 0.0  # of it, the live model's time on the calls no recording answered
    resumed: bool = False  # read from its report, not run by this run of the sweep
    paired: list[PairedRecord] = Field(default_factory=list)  # against the baseline (empty for the baseline itself)
    pairing_note: str = Field("", max_length=500)  # why there are no paired numbers, if there are none


class Sweep(_Model):
    kind: Literal["gear-sweep"] = "gear-sweep"
    version: int = VERSION
    index: str = Field(max_length=300)
    qa: str = Field("", max_length=500)
    method: str = Field(max_length=40)
    retriever: str = Field(max_length=40)
    protocol: str = Field(max_length=20)
    ks: list[int] = Field(max_length=20)
    axes: list[AxisRecord] = Field(max_length=8)
    questions: list[str] = Field(max_length=100_000)
    baseline: str = Field(max_length=300)  # the baseline cell's name
    cells: list[CellRecord] = Field(default_factory=list, max_length=10_000)
    settings: dict[str, Any] = Field(default_factory=dict)  # the base settings (public), before each cell's changes
    index_info: dict[str, Any] = Field(default_factory=dict)

    def cell(self, name: str) -> CellRecord | None:
        return next((c for c in self.cells if c.name == name), None)

    def save(self, path: Path) -> None:
        atomic_write_json(path, self.model_dump(mode="json"), indent=1)


def load_sweep(path: Path) -> Sweep:
    """A sweep file decoded by its schema; SweepError names the file and the first field that is wrong."""
    try:
        if path.stat().st_size > MAX_BYTES:
            raise SweepError(f"{path}: {path.stat().st_size:,} bytes, more than a sweep file holds ({MAX_BYTES:,})")
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SweepError(f"{path}: cannot read it ({exc})") from None
    try:
        return Sweep.model_validate_json(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "the file"
        raise SweepError(f"{path}: not a sweep file: {where}: {first['msg']}") from None


def cells_dir(path: Path) -> Path:
    """Where a sweep keeps its cells' reports: beside it, in a folder of its name (sweep.json → sweep/)."""
    return path.with_suffix("")


def cell_report_path(sweep_path: Path, cell: CellRecord) -> Path:
    """A cell's report, resolved inside the sweep's own folder (a name that leaves it is refused)."""
    folder = cells_dir(sweep_path).resolve()
    path = (sweep_path.parent / cell.report).resolve()
    if folder not in path.parents:
        raise SweepError(f"{sweep_path}: cell {cell.name!r} names a report outside {folder.name}/: {cell.report!r}")
    return path


def read_cell_report(sweep_path: Path, cell: CellRecord) -> dict[str, Any]:
    path = cell_report_path(sweep_path, cell)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SweepError(f"{path}: cannot read the report of cell {cell.name!r} ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("per_question"), list):
        raise SweepError(f"{path}: the report of cell {cell.name!r} is not an evaluation report")
    return data


# -- one cell ----------------------------------------------------------------------------------------------------------
class _Tally:
    """The engine an evaluation drives, counting where each LLM answer came from (the model, a recording, the memo)."""

    def __init__(self, engine: EvaluatedEngine) -> None:
        self._engine = engine
        self.backend = engine.backend
        self.sources: Counter[str] = Counter()
        self.model_seconds = 0.0  # the live model's time on this cell's calls

    def __getattr__(self, name: str) -> Any:  # manifest, directory: what the report records of the index
        return getattr(self._engine, name)

    def gold_ids(self, gold: Sequence[tuple[str, str | None]]) -> list[int]:
        return self._engine.gold_ids(gold)

    def retrieve(self, question: str, **kwargs: Any) -> EvaluatedRun:
        run = self._engine.retrieve(question, **kwargs)
        for call in run.trace.of(LLMCalled):
            source = call.source or ("record" if call.cached else "model")
            self.sources[source] += 1
            self.model_seconds += call.seconds if source == "model" else 0.0
        return run


def summary(report: Mapping[str, Any]) -> dict[str, Any]:
    """A cell's row, from its report: R@k, EM/F1, tokens, seconds and iterations per question."""
    rows = report.get("per_question") or []
    seconds = [float(q.get("seconds") or 0.0) for q in rows]
    return {"n_questions": int(report.get("n_questions") or len(rows)), "recall": dict(report.get("recall") or {}),
            "em": report.get("em"), "f1": report.get("f1"),
            "tokens_per_question": float(report.get("tokens_per_question") or 0.0),
            "seconds_per_question": sum(seconds) / len(seconds) if seconds else 0.0,
            "iterations_mean": report.get("iterations_mean")}


def paired_records(baseline: Mapping[str, Any], report: Mapping[str, Any], ks: Sequence[int]
                   ) -> tuple[list[PairedRecord], str]:
    """The cell against the baseline, question by question: R@k at every cut-off, then EM and F1 (gear.eval.pairing,
    the numbers `gear compare` prints)."""
    out: list[PairedRecord] = []
    try:
        for n, k in enumerate(ks):
            pairing = pair_reports(baseline, report, k, names=("baseline", "cell"))
            for m in pairing.measures if n == 0 else pairing.measures[:1]:
                out.append(PairedRecord(name=m.name, n=m.n, mean_a=m.mean_a, mean_b=m.mean_b, difference=m.difference,
                                        better=m.better, worse=m.worse, tied=m.tied, p_sign=m.p_sign, low=m.low,
                                        high=m.high, sentence=m.sentence()))
    except PairingError as exc:
        return [], str(exc)
    order = [f"R@{k}" for k in ks] + ["EM", "F1"]
    return sorted(out, key=lambda r: order.index(r.name) if r.name in order else len(order)), ""


def reusable(report: Mapping[str, Any], settings: Settings, questions: Sequence[str], ks: Sequence[int],
             protocol: str) -> bool:
    """Whether a cell's saved report is this cell's: the same questions, cut-offs and protocol, and every setting the
    method reads the same."""
    skipped = set(report.get("skipped") or [])
    if [q.get("id") for q in report.get("per_question") or []] != [q for q in questions if q not in skipped]:
        return False
    if sorted(int(k) for k in report.get("recall") or {}) != sorted(ks) or report.get("protocol") != protocol:
        return False
    saved, wanted = renamed(dict(report.get("settings") or {})), public_settings(settings)
    keys = {"method", "retriever", *methods.get(settings.method).settings}
    return all(saved.get(key) == wanted.get(key) for key in keys)


# -- the whole sweep ---------------------------------------------------------------------------------------------------
@dataclass
class CellEvent:
    """What the sweep tells its caller about a cell: it starts (with its probe), or it is done (its record)."""

    number: int
    total: int
    name: str
    settings: Settings
    probe: CellProbe | None = None
    record: CellRecord | None = None


def run_sweep(engine: EvaluatedEngine, questions: Sequence[Question], base: Settings, axes: Sequence[Axis],
              ks: Sequence[int], path: Path, *, protocol: str, index: str, qa: str = "",
              baseline: Mapping[str, str] | None = None, probe: Probe | None = None,
              on_cell: Callable[[CellEvent], None] | None = None,
              progress: Callable[[CellEvent], QuestionProgress | None] | None = None,
              fresh: Callable[[Settings], None] | None = None,
              traces: bool = False, dry_run: bool = False) -> Sweep:
    """Every cell of the grid over `questions`, each an evaluation with the base settings and the cell's values, its
    report saved in cells_dir(path) and the sweep file rewritten after each cell (so a sweep cut short keeps what it
    finished); a cell whose report is already there with the same settings and questions is read, not run. `fresh`
    is called before a cell runs, to give it what a `gear eval` process of its own starts with: an LLM whose memo
    holds nothing of the cells before (else their calls would be "memo" in this cell's report, and cost it no
    tokens). With `dry_run`, only the probes (what each cell would ask of the model)."""
    ks = sorted(set(ks))
    check(protocol)
    combos = grid(axes)
    settings = [base.with_(**c) for c in combos]
    names = [cell_label(c) for c in combos]
    chosen = find_cell(combos, baseline) if baseline else default_baseline(base, combos)
    ids = [q.id for q in questions]
    sweep = Sweep(index=index, qa=qa, method=base.method, retriever=base.retriever, protocol=protocol, ks=list(ks),
                  axes=[AxisRecord(name=a.name, values=list(a.values)) for a in axes], questions=ids,
                  baseline=names[chosen], settings=public_settings(base),
                  index_info=_index_info(engine))
    folder = cells_dir(path)
    before = _earlier_cells(path)  # what an earlier run of this sweep said of the cells it ran (their times, calls)
    reports: dict[int, dict[str, Any]] = {}
    records: dict[int, CellRecord] = {}
    files = [folder / f"{cell_slug(c)}.json" for c in combos]
    # the cells done before (by this sweep cut short, or a smaller grid of it) are read back first, so the sweep file
    # lists every finished cell from its first write on
    for i, report_file in enumerate(files):
        saved = _saved_report(report_file)
        if saved is not None and reusable(saved, settings[i], ids, ks, protocol):
            earlier = before.get(names[i])
            reports[i] = saved
            records[i] = _record(names[i], combos[i], report_file, path, saved,
                                 Counter(earlier.llm_calls) if earlier else Counter(),
                                 earlier.seconds if earlier else 0.0, earlier.model_seconds if earlier else 0.0,
                                 resumed=True)
    # the baseline first, so every cell after it is paired as it finishes
    order = [chosen, *(i for i in range(len(combos)) if i != chosen)]
    for number, i in enumerate(order, 1):
        event = CellEvent(number, len(combos), names[i], settings[i])
        if i not in reports:
            event.probe = probe(settings[i]) if probe is not None else None
            if on_cell:
                on_cell(event)
            if dry_run:
                continue
            if fresh is not None:
                fresh(settings[i])
            tally = _Tally(engine)
            started = time.perf_counter()
            report: EvalReport = evaluate(tally, questions, settings[i], ks,
                                          progress=progress(event) if progress else None,
                                          trace_dir=folder / cell_slug(combos[i]) / "traces" if traces else None,
                                          protocol=protocol)
            data = report.to_dict()
            report.save(files[i])
            reports[i] = data
            records[i] = _record(names[i], combos[i], files[i], path, data, tally.sources,
                                 time.perf_counter() - started, tally.model_seconds)
        if i != chosen and chosen in reports:
            paired, note = paired_records(reports[chosen], reports[i], ks)
            records[i] = records[i].model_copy(update={"paired": paired, "pairing_note": note})
        event.record = records[i]
        if on_cell:
            on_cell(event)
        sweep = sweep.model_copy(update={"cells": [records[j] for j in range(len(combos)) if j in records]})
        if not dry_run:
            sweep.save(path)
    return sweep


def _index_info(engine: EvaluatedEngine) -> dict[str, Any]:
    from gear.eval.report import index_info

    return index_info(getattr(engine, "manifest", None), getattr(engine, "directory", None))


def _earlier_cells(path: Path) -> dict[str, CellRecord]:
    try:
        return {c.name: c for c in load_sweep(path).cells}
    except SweepError:
        return {}


def _saved_report(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _record(name: str, values: Mapping[str, Value], report_file: Path, sweep_path: Path, report: Mapping[str, Any],
            sources: Counter[str], seconds: float, model_seconds: float = 0.0, resumed: bool = False) -> CellRecord:
    return CellRecord(name=name, values=dict(values), report=report_file.relative_to(sweep_path.parent).as_posix(),
                      llm_calls=dict(sources), seconds=seconds, model_seconds=model_seconds, resumed=resumed,
                      **summary(report))
