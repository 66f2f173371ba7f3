"""Diagnosis (gear.diagnosis) over saved traces: how long it takes, and the tables for docs/results.md.

    python bench/diagnose.py [TRACES_DIR] [--qa assets/musique/musique_dev50.json] [--n 50] [--k 5] [--tables]

Timing: N saved traces (the folder's, cycled up to N; the bundled walk-through traces when no folder is given) are
loaded (Trace.load: read + JSON parse + decode) and then diagnosed, each pass timed apart; the load is the reference
beside it. The target: diagnosing 50 saved traces in under 1 s. One measurement per line, `name value unit`.

--tables: for a folder of per-method sub-folders (scripts/subset_traces.sh writes them), the counts per run in
Markdown — the funnel (gold passages reaching each stage), where they were lost (first stage missed / stage they left
the run at), the proposed categories, per hop type — with gold passage texts from the QA set (--qa), as `gear
diagnose --qa` and `gear eval` have them.
"""

from __future__ import annotations

import argparse
import itertools
import time
from pathlib import Path

from gear.data.questions import load_qa
from gear.diagnosis import CATEGORIES, CATEGORY_LABELS, STAGES, Diagnosis, diagnose, stage_label, summarise
from gear.diagnosis.gold_texts import QATexts
from gear.diagnosis.summary import RunSummary
from gear.trace import Trace, TraceError

ROOT = Path(__file__).resolve().parents[1]
SIDECARS = (".tags.json", ".report.json")


def trace_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json") if not p.name.endswith(SIDECARS))


def timing(files: list[Path], n: int, k: int, texts: QATexts) -> None:
    chosen = list(itertools.islice(itertools.cycle(files), n))
    started = time.perf_counter()
    traces = [Trace.load(p) for p in chosen]
    load_s = time.perf_counter() - started
    extra = [texts.for_trace(t) for t in traces]
    started = time.perf_counter()
    for trace, known in zip(traces, extra, strict=True):
        diagnose(trace, k, known)
    diagnose_s = time.perf_counter() - started
    events = sum(len(t.events) for t in traces)
    print(f"traces {len(traces)} count ({len(set(chosen))} distinct files, {events} events)")
    print(f"load {load_s:.3f} s")
    print(f"diagnose {diagnose_s:.3f} s")
    print(f"diagnose_per_trace {1000 * diagnose_s / len(traces):.2f} ms")
    print(f"ratio diagnose/load {diagnose_s / load_s:.2f} x")
    print(f"target diagnose<1s {'met' if diagnose_s < 1.0 else 'MISSED'}")


def against_first_retrieval(diagnoses: list[Diagnosis]) -> dict[str, tuple[int, int]]:
    """Per run: (gold passages found at final@k that the first retrieval did not have within k — what the graph or
    the later iterations brought —, gold passages the first retrieval had within k that the run did not find)."""
    out: dict[str, tuple[int, int]] = {}
    for d in diagnoses:
        gained, dropped = out.get(d.run, (0, 0))
        first_stage = "retrieval" if "retrieval" in d.stages else "base"
        for p in d.passages:
            first = next((m for m in p.marks if m.stage == first_stage and m.iteration == 1), None)
            early = first is not None and first.reached and first.rank is not None and first.rank <= d.k
            gained += p.status == "found" and not early
            dropped += early and p.status != "found"
        out[d.run] = (gained, dropped)
    return out


def markdown(runs: dict[str, RunSummary], versus: dict[str, tuple[int, int]]) -> None:
    names = list(runs)
    stages = [s for s in STAGES if any(s in r.stages for r in runs.values())]  # the pipeline order
    print("\n#### Gold passages reaching each stage (reached / lost there first / left the run there)\n")
    print("| stage | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for s in stages:
        cells = []
        for r in runs.values():
            if s in r.stages:
                cells.append(f"{r.funnel.get(s, 0)} / {r.lost_at.get(s, 0)} / {r.dropped_at.get(s, 0)}")
            else:
                cells.append("")
        print(f"| {stage_label(s, next(iter(runs.values())).k)} | " + " | ".join(cells) + " |")
    print("| gold passages (found) | " + " | ".join(f"{r.gold} ({r.found})" for r in runs.values()) + " |")
    print("| found, not in the first retrieval's top k / in it, not found | " +
          " | ".join(f"+{versus[n][0]} / −{versus[n][1]}" for n in names) + " |")
    print("\n#### Proposed category per question (second category in brackets)\n")
    print("| category | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for c in (*CATEGORIES, "undetermined"):
        if any(r.categories.get(c) or r.second.get(c) for r in runs.values()):
            cells = [f"{r.categories.get(c, 0)} ({r.second.get(c, 0)})" for r in runs.values()]
            print(f"| {CATEGORY_LABELS.get(c, c)} | " + " | ".join(cells) + " |")
    print("\n#### Per hop type: found / gold passages; lost at (first stage missed)\n")
    hops = sorted({h for r in runs.values() for h in r.by_hop})
    print("| hop | " + " | ".join(names) + " |")
    print("| --- |" + " --- |" * len(names))
    for h in hops:
        cells = []
        for r in runs.values():
            c = r.by_hop.get(h)
            if c is None:
                cells.append("")
                continue
            lost = ", ".join(f"{stage_label(s, r.k)} {n}" for s, n in c.lost_at.items())
            cells.append(f"{c.found}/{c.gold}" + (f"; {lost}" if lost else ""))
        print(f"| {h} | " + " | ".join(cells) + " |")
    print("\n#### Answers\n")
    keys = sorted({a for r in runs.values() for a in r.answers})
    if keys:
        print("| | " + " | ".join(names) + " |")
        print("| --- |" + " --- |" * len(names))
        for a in keys:
            print(f"| {a.replace('_', ' ')} | " + " | ".join(str(r.answers.get(a, "")) for r in runs.values()) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", nargs="?", type=Path, default=ROOT / "assets" / "traces")
    parser.add_argument("--qa", type=Path, default=None, help="QA set for the gold passages' texts")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--tables", action="store_true")
    args = parser.parse_args()
    files = trace_files(args.traces)
    texts = QATexts(load_qa(args.qa)[0] if args.qa else [])
    good = []
    for p in files:
        try:
            Trace.load(p)
            good.append(p)
        except TraceError as exc:
            print(f"# skipped {exc}")
    timing(good, args.n, args.k, texts)
    if args.tables:
        diagnoses: list[Diagnosis] = []
        for p in good:
            trace = Trace.load(p)
            diagnoses.append(diagnose(trace, args.k, texts.for_trace(trace), hop=texts.hop_for(trace)))
        markdown(summarise(diagnoses).runs, against_first_retrieval(diagnoses))


if __name__ == "__main__":
    main()
