"""Give the bundled 20-question MuSiQue reports (docs/evals/dev50_every2_n20_*.json) their traces.

Those reports were saved before reports kept each question's trace, so lining two of them up (`gear compare`,
Evaluate's third tab) could not open a question's two runs. The runs themselves are recorded:
tests/fixtures/subset_traces.tar.xz holds the 120 traces scripts/subset_traces.sh replayed from the bundled answers.
Each is kept beside its report (docs/evals/<report>/traces/<question>.json, where the app and `gear compare` look),
and the report's question says so (`trace_file`), only when it is the run the report counts — its finished recall at
the cut-offs that run made (every k for a multi-step method; for a single-step method in the paper's protocol only
the largest, whose run is the one traced) and its answer and EM equal the report's. Nothing else of a report changes:
its diagnoses, as `gear eval` writes them today (the index as the probe), are scripts/rediagnose_reports.py's to write.

    PYTHONPATH=. python scripts/keep_subset_traces.py [--check]

--check compares and writes nothing; a mismatch names the report, the question and the field, and exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear.eval.protocol import per_cutoff, report_ks, traced_k  # noqa: E402
from gear.events import Answered, RunFinished  # noqa: E402
from gear.files import atomic_write_json  # noqa: E402
from gear.trace import Trace  # noqa: E402

EVALS = ROOT / "docs" / "evals"
FIXTURE = ROOT / "tests" / "fixtures" / "subset_traces.tar.xz"
#: the fixture's folders and the reports they replay
RUNS = ("naive", "ppr", "gear_paper", "gear_small", "ircot_ppr", "ircot_base")


def mismatches(entry: dict[str, Any], trace: Trace, same_run: list[int]) -> list[str]:
    """How the trace differs from what the report says of the question (empty: it is the run the report counts)."""
    out = []
    finished = trace.first(RunFinished)
    if finished is None:
        return ["the trace has no RunFinished"]
    for k in same_run:
        mine, theirs = finished.recall.get(str(k)), entry["recall"].get(str(k))
        if mine is None or theirs is None or abs(mine - theirs) > 1e-9:
            out.append(f"recall@{k}: trace {mine}, report {theirs}")
    answered = trace.first(Answered)
    if (answered.answer if answered else None) != entry.get("answer"):
        out.append(f"answer: trace {answered.answer if answered else None!r}, report {entry.get('answer')!r}")
    if (answered.em if answered else None) != entry.get("em"):
        out.append(f"em: trace {answered.em if answered else None}, report {entry.get('em')}")
    return out


def keep(name: str, folder: Path, write: bool) -> list[str]:
    path = EVALS / f"dev50_every2_n20_{name}.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    ks = report_ks(report)
    same_run = [traced_k(ks)] if per_cutoff(report) else ks
    problems, traces = [], {}
    for entry in report["per_question"]:
        file = folder / name / f"{entry['id']}.json"
        if not file.is_file():
            problems.append(f"{path.name}: {entry['id']}: no recorded trace")
            continue
        trace = Trace.load(file)
        problems += [f"{path.name}: {entry['id']}: {m}" for m in mismatches(entry, trace, same_run)]
        entry["trace_file"] = str((path.with_suffix("") / "traces" / file.name).relative_to(ROOT))
        traces[file.name] = file.read_bytes()
    if problems or not write:
        return problems
    out = path.with_suffix("") / "traces"
    out.mkdir(parents=True, exist_ok=True)
    for file_name, data in traces.items():
        (out / file_name).write_bytes(data)
    atomic_write_json(path, report, indent=1)
    print(f"{path.name}: {len(traces)} traces in {out.relative_to(ROOT)}")
    return []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare only; write nothing")
    args = parser.parse_args()
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(FIXTURE) as tar:
            tar.extractall(tmp, filter="data")
        for name in RUNS:  # every report checked before any is written
            problems += keep(name, Path(tmp), write=False)
        for line in problems:
            print(line)
        if problems:
            sys.exit(1)
        print("every trace is the run its report counts")
        for name in RUNS if not args.check else ():
            keep(name, Path(tmp), write=True)


if __name__ == "__main__":
    main()
