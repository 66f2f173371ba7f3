"""Write the diagnoses of saved evaluation reports again by today's rules, from their evaluations replayed as recorded.

A report keeps each question's diagnosis (`per_question[].diagnosis`) and their summary (`diagnosis`) as the rules
of the version that wrote it made them; the Evaluate page and `gear compare` read those fields, so a report written
before the rules changed shows categories today's rules would not propose. This runs each report's evaluation again
exactly as it was recorded — the same index (the demo it was made on, or one built from the corpus and triples its
`index_info` names), the questions it holds in its order, the settings its method reads, its protocol
(gear.eval.protocol) and, for a method that asks an LLM, only the recorded answers (assets/llm_cache, replay: a prompt
not recorded is an error, never a live call) — diagnosed as `gear eval` diagnoses, with its engine as the probe. Only
when the replay equals the report (every question's recall at every k, answer, EM/F1, tokens and iterations) are
the two diagnosis fields written; every other byte of the report stays as it was (checked before writing). A report
that carries no diagnosis is left as it is.

    .venv/bin/python scripts/rediagnose_reports.py [REPORT_OR_FOLDER ...] [--check] [--index DIR --qa FILE]

Without paths: every report under docs/evals (folders are searched recursively; trace folders and files that are no
evaluation report, such as a sweep's own file, are passed over). Reports without an LLM go first. Resumable report by
report: the journal (--journal, by default data/rediagnose.jsonl) remembers each report done and the file it left, and a
run started again passes over those still as they were left (--again: every one). --check replays and compares and
writes nothing, the journal included. Progress, each report's category counts before → after and the questions whose
primary category moved go to stdout; the last lines list the reports refused and why.

A report saved before reports recorded their index is placed by its file name (BEFORE_INDEX_INFO: the scripts that made
them); any other report names its index in `index_info`, or takes --index and --qa.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the embedder from the local cache: nothing fetched at run time

from gear import methods  # noqa: E402
from gear.config import BUNDLED_LLM_CACHE, Settings, renamed  # noqa: E402
from gear.files import atomic_write_text  # noqa: E402

EVALS = ROOT / "docs" / "evals"
ASSETS = ROOT / "assets"
JOURNAL = ROOT / "data" / "rediagnose.jsonl"
DIAGNOSIS_FIELDS = ("diagnosis",)  # the report's summary; and per_question[].diagnosis
COMPARED = ("answer", "em", "f1", "prompt_tokens", "completion_tokens", "iterations")  # per question, beside recall
COMPARED_TOTALS = ("recall", "em", "f1", "tokens_per_question", "iterations_mean")
UNDETERMINED = "undetermined"


@dataclass(frozen=True)
class Place:
    """Where a report's evaluation ran: an index in data/indexes/<name> (a demo's, or one built from a corpus and its
    OpenIE triples as `gear index CORPUS --openie TRIPLES` builds it) and the QA set its questions come from."""

    name: str
    qa: Path
    demo: bool = False
    corpus: Path | None = None
    openie: Path | None = None


MUSIQUE = ASSETS / "musique"
CANDIDATES949 = MUSIQUE / "musique_dev50_candidates949.json"
#: the bundled reports saved before reports recorded their index (index_info), by the start of their file name: where
#: the script that made each ran it (scripts/eval_subset.sh, hotpotqa_table1.sh, twowiki_table1.sh,
#: musique_local_triples.sh)
BEFORE_INDEX_INFO = {
    "dev50_": Place("musique", MUSIQUE / "musique_dev50.json", demo=True),
    "hotpotqa_": Place("hotpotqa", ASSETS / "hotpotqa" / "hotpotqa_train100.json", demo=True),
    "twowiki_": Place("2wiki", ASSETS / "2wikimultihopqa" / "2wikimultihopqa_dev82.json", demo=True),
    "musique949_gpt_": Place("musique949_gpt", MUSIQUE / "musique_dev50.json", corpus=CANDIDATES949,
                             openie=MUSIQUE / "openie_musique_gpt-3.5-turbo-1106_1890.json"),
    "musique949_local_": Place("musique949_local", MUSIQUE / "musique_dev50.json", corpus=CANDIDATES949,
                               openie=MUSIQUE / "openie_musique_qwen2.5-coder-1.5b_949.json"),
}


class Refused(Exception):
    """Why a report is left as it is, in one line."""


def log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


def shown(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def dump(report: dict[str, Any]) -> str:
    """A report as `gear eval` writes it (gear.files.atomic_write_json, indent 1)."""
    return json.dumps(report, indent=1, ensure_ascii=False) + "\n"


def project(path: str | Path) -> Path:
    path = Path(path)
    return path if path.is_absolute() else ROOT / path


# -- which reports ---------------------------------------------------------------------------------------------------
def is_report(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("per_question"), list) and isinstance(
        data.get("settings"), dict) and isinstance(data.get("recall"), dict)


def report_files(paths: list[Path]) -> Iterator[Path]:
    """The JSON files named, and those under the folders named (recursively, trace folders passed over)."""
    for path in paths:
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d != "traces")
                yield from (Path(folder) / f for f in sorted(files) if f.endswith(".json"))
        else:
            yield path


def uses_llm(report: dict[str, Any]) -> bool:
    settings = renamed(report["settings"])
    known = methods.find(str(settings.get("method", "none")))
    return known is None or known.uses_llm(settings)


# -- where a report ran ----------------------------------------------------------------------------------------------
def place_of(path: Path, report: dict[str, Any], index: Path | None, qa: Path | None) -> Place | Path:
    """The report's Place, or the index directory given (--index) when there is one."""
    if index is not None:
        if qa is None:
            raise Refused("--index needs --qa: the QA set the report's questions come from")
        return index
    info = report.get("index_info") or {}
    source = info.get("source") or {}
    if source.get("demo"):
        return Place(str(source["demo"]), qa or project(source["qa"]), demo=True)
    if source.get("corpus") and source.get("openie") and info.get("name"):
        if qa is None and not source.get("qa"):
            raise Refused(f"its index {info['name']!r} names no QA set: give --qa")
        return Place(str(info["name"]), qa or project(source["qa"]), corpus=project(source["corpus"]),
                     openie=project(source["openie"]))
    if info:
        raise Refused(f"its index {info.get('name')!r} was not built from files this script can build it from "
                      "again: give --index and --qa")
    for prefix, place in BEFORE_INDEX_INFO.items():
        if path.name.startswith(prefix):
            return place if qa is None else Place(place.name, qa, place.demo, place.corpus, place.openie)
    raise Refused("it does not record its index (index_info) and its name is none of BEFORE_INDEX_INFO's: give "
                  "--index and --qa")


def index_directory(place: Place) -> Path:
    """The place's index, built first when it is not there (a demo as the app builds it; another as `gear index
    CORPUS --openie TRIPLES --out DIR` builds it, in a process of its own)."""
    from studio.core.demos import ensure_demo_index
    from studio.core.paths import index_dir

    if place.demo:
        return ensure_demo_index(place.name)
    out = index_dir(place.name)
    if not (out / "manifest.json").is_file():
        assert place.corpus is not None and place.openie is not None
        log(f"building the index {place.name} from {shown(place.corpus)} and {shown(place.openie)}")
        subprocess.run([sys.executable, "-m", "gear.cli", "index", str(place.corpus), "--openie", str(place.openie),
                        "--out", str(out)], cwd=ROOT, check=True)
    return out


class Engines:
    """One engine per index for the whole run (an index and its encoder load once); each report starts with an empty
    LLM memo and encoder cache, as the `gear eval` process that recorded it did (a text's vector depends on the batch
    it was encoded in by ~1e-7, enough to swap two beams that tie)."""

    def __init__(self) -> None:
        self._engines: dict[tuple[Path, int], Any] = {}
        self._encoders: dict[str, Any] = {}

    def get(self, directory: Path, settings: Settings) -> Any:
        """The engine over `directory`, opened as `gear eval` opens it with these settings (the fusion's rrf_k)."""
        from gear.agent.engine import Engine
        from gear.embed import Encoder
        from gear.index.manifest import Manifest

        key = (directory.resolve(), settings.rrf_k)
        if key not in self._engines:
            embedder = Manifest.read(directory).embedder
            if embedder not in self._encoders:
                self._encoders[embedder] = Encoder(embedder)
            self._engines[key] = Engine.open(directory, settings, encoder=self._encoders[embedder])
        return self._engines[key]


# -- the replay ------------------------------------------------------------------------------------------------------
def replay_settings(report: dict[str, Any]) -> Settings:
    """The settings the report's method reads, as recorded, with the recorded answers alone as its LLM."""
    saved = renamed(report["settings"])
    if saved.get("backend", "memory") != "memory":
        raise Refused(f"it ran on the {saved['backend']} backend; this replays the embedded (memory) one")
    method = methods.find(str(saved.get("method", "none")))
    if method is None:
        raise Refused(f"its method {saved.get('method')!r} is not one this version knows")
    reads = {"method", "retriever", "rrf_k", *method.settings}
    return Settings(_env_file=None).with_(**{key: saved[key] for key in sorted(reads) if key in saved},
                                          llm="replay", llm_cache_dir=BUNDLED_LLM_CACHE)


def check_index(report: dict[str, Any], engine: Any) -> None:
    """The index must be the report's: its embedder, and the checksums and counts the report recorded of it."""
    from gear.eval.report import index_info

    embedder = report["settings"].get("embedder")
    if embedder and embedder != engine.manifest.embedder:
        raise Refused(f"it ran with the embedder {embedder}, the index has {engine.manifest.embedder}")
    recorded = report.get("index_info") or {}
    here = index_info(engine.manifest, engine.directory)
    for key in ("passages_sha256", "triple_texts_sha256", "passages", "triples"):
        if recorded.get(key) is not None and recorded[key] != here.get(key):
            raise Refused(f"the index {shown(engine.directory)} is not the one it ran on: {key} {here.get(key)} "
                          f"here, {recorded[key]} in the report")


def questions_of(report: dict[str, Any], qa: Path) -> list[Any]:
    from gear.data.questions import load_qa

    wanted = [str(q["id"]) for q in report["per_question"]]
    by_id = {q.id: q for q in load_qa(qa)[0]}
    missing = [qid for qid in wanted if qid not in by_id]
    if missing:
        raise Refused(f"{len(missing)} of its questions are not in {shown(qa)} (e.g. {missing[0]})")
    return [by_id[qid] for qid in wanted]


def replay(report: dict[str, Any], engine: Any, settings: Settings, questions: list[Any], name: str
           ) -> dict[str, Any]:
    """The report's evaluation run again on its questions: the report `gear eval` would write now."""
    from gear.eval.protocol import protocol_of, report_ks
    from gear.eval.report import evaluate
    from gear.llm import LLMError, MemoLLM, make_llm

    engine.set_llm(settings, MemoLLM(make_llm("replay", cache_dir=BUNDLED_LLM_CACHE)))
    started = time.monotonic()
    step = max(1, len(questions) // 10)

    def progress(done: int, total: int, _qid: str) -> None:
        if done % step == 0 or done == total:
            log(f"  {name}: {done}/{total} questions, {time.monotonic() - started:.0f} s")

    try:
        return evaluate(engine, questions, settings, report_ks(report), progress=progress,
                        protocol=protocol_of(report)).to_dict()
    except LLMError as exc:
        raise Refused(f"a prompt of its run is not recorded, so it cannot replay here ({tie_order()}): "
                      f"{str(exc)[:160]}") from exc


def tie_order() -> str:
    """Whether this CPU orders tied scores as the CPU the bundled runs were recorded on (tests/integration/conftest:
    on another, some prompts differ from the recorded ones)."""
    try:
        from tests.integration.conftest import ties_as_recorded
    except ImportError:
        return "this CPU's order of tied scores not probed"
    return "this CPU orders tied BM25 scores as the recording's" if ties_as_recorded() else \
        "this CPU orders tied BM25 scores otherwise than the recording's CPU"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def differences(recorded: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """Where the replay differs from the report: every question's recall at every k, answer, EM/F1, tokens and
    iterations, and the report's totals (empty: it is the run the report counts)."""
    ids = [q["id"] for q in recorded["per_question"]]
    again = [q["id"] for q in replayed["per_question"]]
    if ids != again:
        return [f"questions: {len(ids)} in the report, {len(again)} replayed (skipped: {replayed.get('skipped')})"]
    out = []
    for mine, theirs in zip(recorded["per_question"], replayed["per_question"], strict=True):
        for key in ("recall", *COMPARED):
            if not _same(mine.get(key), theirs.get(key)):
                out.append(f"{mine['id']}: {key} {mine.get(key)!r} in the report, {theirs.get(key)!r} replayed")
    for key in COMPARED_TOTALS:
        if key in recorded and not _same(recorded[key], replayed.get(key)):
            out.append(f"{key}: {recorded[key]!r} in the report, {replayed.get(key)!r} replayed")
    return out


# -- the rewrite -----------------------------------------------------------------------------------------------------
def rediagnosed(recorded: dict[str, Any], replayed: dict[str, Any]) -> dict[str, Any]:
    """The report with the replay's diagnoses and their summary, every other field as it was (in its place; a summary
    the report lacked goes before per_question, where `gear eval` writes it)."""
    out: dict[str, Any] = {}
    for key, value in recorded.items():
        if key == "per_question" and "diagnosis" not in recorded:
            out["diagnosis"] = replayed["diagnosis"]
        out[key] = replayed["diagnosis"] if key == "diagnosis" else value
    out["per_question"] = [{**entry, "diagnosis": again["diagnosis"]}
                           for entry, again in zip(recorded["per_question"], replayed["per_question"], strict=True)]
    return out


def restored(report: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """`report` with the diagnosis fields `source` has (and without those it lacks), every other field as it is."""
    def back(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
        return {key: old[key] if key == "diagnosis" else value for key, value in new.items()
                if key != "diagnosis" or key in old}

    out = back(report, source)
    out["per_question"] = [back(entry, old) for entry, old in zip(report["per_question"], source["per_question"],
                                                                  strict=True)]
    return out


def categories(report: dict[str, Any]) -> list[tuple[str, str]]:
    """Each question's (primary, second) category; "undetermined" where none is proposed."""
    out = []
    for entry in report["per_question"]:
        d = entry.get("diagnosis") or {}
        out.append((d.get("category") or UNDETERMINED, d.get("second") or ""))
    return out


def stage_tables(report: dict[str, Any]) -> list[Any]:
    """Each question's gold passages with their stage marks (what the rules of a category do not decide), but for
    final@k's, which follow the cut-off the diagnosis counts at."""
    return [[(p["id"], [m for m in p["marks"] if m["stage"] != "final@k"])
             for p in (entry.get("diagnosis") or {}).get("passages", [])] for entry in report["per_question"]]


def changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    old, new = categories(before), categories(after)
    moved = Counter(f"{a[0]} → {b[0]}" for a, b in zip(old, new, strict=True) if a[0] != b[0])

    def cutoffs(report: dict[str, Any]) -> str:
        return "/".join(sorted({str((e.get("diagnosis") or {}).get("k")) for e in report["per_question"]}))

    return {
        "questions": len(new),
        "k": f"{cutoffs(before)} → {cutoffs(after)}",
        "before": dict(Counter(c for c, _ in old).most_common()),
        "after": dict(Counter(c for c, _ in new).most_common()),
        "primary_changed": sum(moved.values()),
        "second_only_changed": sum(1 for a, b in zip(old, new, strict=True) if a[0] == b[0] and a[1] != b[1]),
        "moves": dict(moved.most_common()),
        "stage_marks_changed": sum(1 for a, b in zip(stage_tables(before), stage_tables(after), strict=True)
                                   if a != b),
    }


def rediagnose(path: Path, engines: Engines, args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    """One report: ("rewritten" | "unchanged" | "checked", what changed); Refused when it is left as it is."""
    text = path.read_text(encoding="utf-8")
    report = json.loads(text)
    if dump(report) != text:
        raise Refused("it is not written as `gear eval` writes reports (indent 1, UTF-8): rewriting it would change "
                      "other bytes than its diagnoses")
    place = place_of(path, report, args.index, args.qa)
    qa = args.qa if isinstance(place, Path) else place.qa
    directory = place if isinstance(place, Path) else index_directory(place)
    settings = replay_settings(report)
    engine = engines.get(directory, settings)
    engine.encoder._cache.clear()  # as in the process that recorded it: every text encoded afresh (bench/expand.py)
    check_index(report, engine)
    replayed = replay(report, engine, settings, questions_of(report, qa), path.stem)
    if found := differences(report, replayed):
        raise Refused(f"the replay differs from the report in {len(found)} places: " + "; ".join(found[:4]))
    new = rediagnosed(report, replayed)
    new_text = dump(new)
    if dump(restored(new, report)) != text:  # every byte but the diagnoses' is the report's
        raise Refused("writing its diagnoses would change another field")
    changed = changes(report, new)
    if new_text == text:
        return "unchanged", changed
    if args.check:
        return "checked", changed
    atomic_write_text(path, new_text)
    return "rewritten", changed


# -- the journal -----------------------------------------------------------------------------------------------------
def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def done_before(journal: Path) -> dict[str, str]:
    """report → the file's checksum when the journal last finished it (rewritten, unchanged or refused)."""
    done: dict[str, str] = {}
    if journal.is_file():
        for line in journal.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                done[entry["report"]] = entry["sha256"]
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a kill
    return done


def note(journal: Path, entry: dict[str, Any]) -> None:
    journal.parent.mkdir(parents=True, exist_ok=True)
    with journal.open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, help="reports or folders of reports (default: docs/evals)")
    parser.add_argument("--check", action="store_true", help="replay and compare; write nothing")
    parser.add_argument("--index", type=Path, help="the index the reports ran on (instead of what they record)")
    parser.add_argument("--qa", type=Path, help="the QA set their questions come from (with --index)")
    parser.add_argument("--journal", type=Path, default=JOURNAL, help="where finished reports are remembered")
    parser.add_argument("--again", action="store_true", help="do reports the journal has as done too")
    args = parser.parse_args(argv)

    reports: list[tuple[bool, int, Path]] = []
    for file in report_files(args.paths or [EVALS]):
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            log(f"{shown(file)}: not read ({exc})")
            continue
        if not is_report(data):
            continue
        if not any(entry.get("diagnosis") for entry in data["per_question"]):
            log(f"{shown(file)}: carries no diagnosis: left as it is")
            continue
        reports.append((uses_llm(data), len(data["per_question"]) * len(data["recall"]), file))
    reports.sort(key=lambda r: (r[0], r[1], str(r[2])))  # the cheap ones first: no LLM, fewest runs
    done = {} if args.again or args.check else done_before(args.journal)
    engines = Engines()
    outcomes: dict[str, list[str]] = {}
    total_cpu, started = cpu_seconds(), time.monotonic()
    for n, (_, _, path) in enumerate(reports, 1):
        name = shown(path)
        if done.get(name) == sha256(path):
            log(f"[{n}/{len(reports)}] {name}: done before (journal), passed over")
            outcomes.setdefault("done before", []).append(name)
            continue
        log(f"[{n}/{len(reports)}] {name}")
        cpu, wall = cpu_seconds(), time.monotonic()
        entry: dict[str, Any] = {"report": name}
        try:
            outcome, changed = rediagnose(path, engines, args)
            entry |= {"outcome": outcome, **changed}
            log(f"  {outcome}: diagnosis k {changed['k']}; primary category changed on {changed['primary_changed']} "
                f"of {changed['questions']} (second only: {changed['second_only_changed']}); stage marks changed on "
                f"{changed['stage_marks_changed']}")
            log(f"  before: {changed['before']}")
            log(f"  after:  {changed['after']}")
            if changed["moves"]:
                log(f"  moves:  {changed['moves']}")
        except Refused as exc:
            outcome = "refused"
            entry |= {"outcome": outcome, "reason": str(exc)}
            log(f"  refused, left as it is: {exc}")
        entry |= {"cpu_s": round(cpu_seconds() - cpu, 1), "wall_s": round(time.monotonic() - wall, 1),
                  "sha256": sha256(path)}
        log(f"  {entry['cpu_s']:.0f} s CPU, {entry['wall_s']:.0f} s wall")
        outcomes.setdefault(outcome, []).append(name + (f" ({entry['reason']})" if outcome == "refused" else ""))
        if not args.check:
            note(args.journal, entry)
    log(f"{len(reports)} reports with diagnoses; {cpu_seconds() - total_cpu:.0f} s CPU, "
        f"{time.monotonic() - started:.0f} s wall")
    for outcome, names in outcomes.items():
        log(f"{outcome}: {len(names)}")
        for name in names if outcome in ("refused", "checked") else ():
            log(f"  {name}")
    return 1 if "refused" in outcomes else 0


if __name__ == "__main__":
    sys.exit(main())
