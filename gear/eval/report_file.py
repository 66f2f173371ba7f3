"""The one decoder of an evaluation report file (`gear eval --json`, the app's data/evals/*.json, docs/evals/), and
where the traces it names may be followed.

A report is untrusted input (gear.saved): a colleague hands one over to line up with theirs (`gear compare`, the
Evaluate page's two-runs tab). Every field a reader of reports uses is checked here once, when the file is read: the
figures are finite numbers in their range, the recall cut-offs are numbers, the names and answers bounded strings,
each question's entry has the fields of gear.eval.report.QuestionResult with their types. What the checked report
holds is the same dict `EvalReport.to_dict` wrote (fields no reader uses are dropped), so gear.eval.pairing, the
charts and the pages read it as before, without a type to doubt.

A report names a trace per question (`trace_file`); it is followed only inside the report's own folder or the data
folder, links resolved (`trace_path`): a report cannot make `gear compare` or the app read a file elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, NotRequired

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from gear.diagnosis import Diagnosis
from gear.eval.report import QuestionResult
from gear.files import data_dir
from gear.saved import (
    JSON,
    MAX_ITEMS,
    MAX_NAME,
    MAX_WORD,
    Cutoff,
    Finite,
    SavedFileError,
    check,
    count,
    inside,
    parse,
    read,
    typed,
)

MAX_BYTES = 32_000_000  # the largest bundled report (100 questions, each with its diagnosis) is 0.9 MB
MAX_PATH = 4_096


class ReportError(SavedFileError):
    """An evaluation report that cannot be used: the file, the field and why, in one line."""


Word = Annotated[str, Field(max_length=MAX_WORD)]
Name = Annotated[str, Field(max_length=MAX_NAME)]
Percent = Annotated[float, Field(allow_inf_nan=False, ge=0.0, le=100.0)]
Seconds = Annotated[float, Field(allow_inf_nan=False, ge=0.0)]
Names = Annotated[list[Name], Field(max_length=MAX_ITEMS)]
Recall = Annotated[dict[Cutoff, Percent], Field(max_length=MAX_ITEMS)]
Figures = Annotated[dict[Word, Finite], Field(max_length=MAX_ITEMS)]
Free = Annotated[dict[Word, JSON], Field(max_length=MAX_ITEMS)]  # free-form: bounded JSON
Count = Annotated[int, count(10**12)]
IndexName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$")]  # a folder name, never a path


class Hop(TypedDict):
    n: Count
    recall: Recall


class Report(TypedDict):
    """A report's fields, as EvalReport.to_dict writes them (and as older reports wrote them: tokens_per_question was
    once {"total": …}); "label" and "index" are the app's additions. Each entry of per_question is checked on its
    own (`_question`), so a bad one is named by its place."""

    method: Word
    retriever: NotRequired[Word]
    n_questions: NotRequired[Count]
    recall: Recall
    by_hop: NotRequired[Annotated[dict[Name, Hop], Field(max_length=MAX_ITEMS)]]
    latency_ms: NotRequired[Annotated[dict[Name, Figures], Field(max_length=MAX_ITEMS)]]
    settings: NotRequired[Free]
    skipped: NotRequired[Names]
    gold_missing: NotRequired[Annotated[dict[Name, Names], Field(max_length=MAX_ITEMS)]]
    protocol: NotRequired[Word]
    index_info: NotRequired[Free]
    em: NotRequired[Percent]
    f1: NotRequired[Percent]
    tokens_per_question: NotRequired[Seconds | Figures]
    tokens_per_question_detail: NotRequired[Figures]
    iterations_mean: NotRequired[Seconds]
    seconds_per_question: NotRequired[Annotated[dict[Word, Seconds], Field(max_length=MAX_ITEMS)]]
    model_seconds_per_question: NotRequired[Seconds]
    recorded_questions: NotRequired[Count]
    llm_calls_per_question: NotRequired[Seconds]
    memo_calls: NotRequired[Count]
    verdicts_rejected: NotRequired[Count]
    queries_repeated: NotRequired[Count]
    recall_per_iteration: NotRequired[Annotated[dict[Word, Recall], Field(max_length=MAX_ITEMS)]]
    diagnosis: NotRequired[Free]
    per_question: Annotated[list[Any], Field(max_length=MAX_ITEMS)]
    label: NotRequired[Name]
    index: NotRequired[IndexName]


@cache
def _report() -> TypeAdapter[Report]:
    return TypeAdapter(Report)


@cache
def _question() -> TypeAdapter[dict[str, Any]]:
    """A question's entry: gear.eval.report.QuestionResult's fields (plain dicts, as to_dict writes them)."""
    return typed(QuestionResult, objects=False,
                 ints={"n_gold": count(10**6), "iterations": count(10_000), "prompt_tokens": count(10**12),
                       "completion_tokens": count(10**12), "llm_calls": count(10**9), "memo_calls": count(10**9),
                       "recorded_calls": count(10**9), "rejected_verdicts": count(10**9),
                       "repeated_queries": count(10**9)},
                 floats={"recall": Field(ge=0.0, le=1.0), "recall_per_iteration": Field(ge=0.0, le=1.0),
                         "em": Field(ge=0.0, le=1.0), "f1": Field(ge=0.0, le=1.0), "seconds": Field(ge=0.0),
                         "model_seconds": Field(ge=0.0)},
                 texts={"id": Field(max_length=MAX_NAME), "hop": Field(max_length=MAX_WORD),
                        "trace_file": Field(max_length=MAX_PATH)},
                 keys={"recall": Cutoff, "recall_per_iteration": Cutoff})


def decode_report(data: Any, source: str) -> dict[str, Any]:
    """A report's data with every field a reader uses checked; ReportError naming the first that fails."""
    if not isinstance(data, dict) or "recall" not in data or "per_question" not in data:
        raise ReportError(f"{source}: not an evaluation report (it needs \"recall\" and \"per_question\"; write one "
                          "with gear eval --json)")
    checked: Report = check(_report(), data, source, error=ReportError)
    report: dict[str, Any] = dict(checked)
    report["per_question"] = [check(_question(), entry, source, ("per_question", n), ReportError)
                              for n, entry in enumerate(report["per_question"])]
    return report


def read_report(path: Path) -> dict[str, Any]:
    """A report file, checked (its size and nesting before it is parsed, then every field)."""
    return decode_report(read(path, max_bytes=MAX_BYTES, error=ReportError), str(path))


def report_from_json(text: str, source: str) -> dict[str, Any]:
    return decode_report(parse(text, source, max_bytes=MAX_BYTES, error=ReportError), source)


def looks_like_report(data: Any) -> bool:
    """Whether parsed JSON has a report's shape (recall per cut-off and a question count, no trace's events), so a
    folder of runs can tell its reports from its traces before either is checked."""
    return isinstance(data, dict) and "recall" in data and "n_questions" in data and "events" not in data


# -- what a report points at -------------------------------------------------------------------------------------------
def homes(report_path: Path | None) -> list[Path]:
    """Where a report's traces may be: its own folder and the data folder."""
    return [*([report_path.parent] if report_path is not None else []), data_dir()]


def trace_path(report_path: Path | None, entry: Mapping[str, Any], roots: Iterable[Path] | None = None
               ) -> Path | None:
    """The saved trace of one question of a (checked) report: the path it recorded, or the same file name in the
    report's own traces folder (<report>/traces/, where the app's evaluations keep them, so a data folder that moved
    still finds them); None when the report kept none or the file is gone. A recorded path that leads out of `roots`
    (default: the report's folder and the data folder), by "..", an absolute path or a link, raises ReportError in
    one line and nothing is read."""
    recorded = entry.get("trace_file")
    if not recorded:
        return None
    allowed = list(roots) if roots is not None else homes(report_path)
    path = Path(recorded)
    candidates = [path]
    if report_path is not None:
        candidates.append(report_path.with_suffix("") / "traces" / path.name)
    refused: Path | None = None
    for candidate in candidates:
        if not (candidate.is_file() or candidate.is_symlink()):
            continue
        try:
            return inside(candidate, allowed, "the report's folder and the data folder")
        except SavedFileError:
            refused = refused or candidate
    if refused is not None:
        how = "a link to a file" if refused.is_symlink() else "a file"
        shown = recorded if len(recorded) <= 120 else recorded[:119] + "…"
        raise ReportError(f"{entry.get('id', 'a question')}: its trace_file {shown!r} is {how} outside the report's "
                          "folder and the data folder: not opened")
    return None


@cache
def _diagnosis() -> TypeAdapter[Diagnosis]:
    return typed(Diagnosis, ints={"k": count(10**6), "rank": count(10**9), "hop": count(1_000),
                                  "iteration": count(10_000)})


def kept_diagnosis(raw: Any) -> Diagnosis | None:
    """The diagnosis a report's entry carries, typed (gear.diagnosis.Diagnosis, every field checked); None when it
    carries none, or one that is not a diagnosis of this version (it is then made from the kept trace, if any)."""
    if not raw:
        return None
    try:
        return check(_diagnosis(), raw, "diagnosis")
    except SavedFileError:
        return None


def by_earlier_rules(report: Mapping[str, Any]) -> int:
    """How many of a report's kept diagnoses an earlier version's rules wrote: not in the shape today's are (no
    confidence, no refs for their evidence, no responsible step for a lost passage), so their categories read as those
    rules read (docs/diagnosis.md); scripts/rediagnose_reports.py writes them again."""
    earlier = 0
    for entry in report.get("per_question") or []:
        raw = entry.get("diagnosis") if isinstance(entry, Mapping) else None
        if not raw:
            continue
        try:
            earlier += Diagnosis.from_dict(raw).to_dict() != raw
        except (TypeError, KeyError, ValueError):
            earlier += 1
    return earlier


def earlier_rules_note(report: Mapping[str, Any]) -> str | None:
    """The line the app and `gear compare` show under a report some of whose diagnoses earlier rules wrote."""
    earlier = by_earlier_rules(report)
    if not earlier:
        return None
    return (f"{earlier:,} of its diagnoses {'was' if earlier == 1 else 'were'} written by the rules before 2026-12-06, "
            "not yet written again: a wrong answer from the right passages reads there as the reasoner's, a second "
            "hop's passage as the base retriever's (docs/diagnosis.md; scripts/rediagnose_reports.py writes them by "
            "today's rules)")
