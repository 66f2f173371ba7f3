"""What a change of the diagnosis's rules changed, trace by trace: the stage tables must not move (every gold
passage's marks, status, lost at and dropped at), only the categories and their evidence may.

    python bench/diagnosis_changes.py TRACES_DIR --before SRC [--qa assets/musique/musique_dev50.json] [--k 5]
    python bench/diagnosis_changes.py TRACES_DIR [--before SRC] --tables OUT.json.xz   # the stage tables (a fixture)
    python bench/diagnosis_changes.py TRACES_DIR --hops      # each gold passage's hop against MuSiQue's decomposition

TRACES_DIR: traces, searched recursively (the recorded subset: `tests/fixtures/subset_traces.tar.xz` unpacked, or
`scripts/subset_traces.sh OUT`). SRC: another source tree whose `gear/` is the rules before (`git archive BASE gear |
tar -x -C SRC`), run in a process of its own. Prints whether every stage table is the same, the gold passages whose
table differs (none expected), and every trace whose primary or second category changed, with both. `--tables`
writes the stage tables of SRC (of this version without --before): the fixture tests/unit/test_diagnosis_stage_tables.py
holds the code to.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, sys
from dataclasses import asdict
from pathlib import Path
from gear.data.questions import load_qa
from gear.diagnosis import diagnose
from gear.diagnosis.gold_texts import QATexts
from gear.trace import Trace
folder, qa, k = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
texts = QATexts(load_qa(qa)[0])
out = {}
for f in sorted(folder.rglob("*.json")):
    if f.name.endswith((".report.json", ".tags.json")):
        continue
    trace = Trace.load(f)
    d = diagnose(trace, k, texts.for_trace(trace), hop=texts.hop_for(trace))
    out[str(f.relative_to(folder))] = {
        "category": d.category, "second": d.second, "evidence": d.evidence,
        "passages": [{"id": p.id, "status": p.status, "lost_at": p.lost_at, "dropped_at": p.dropped_at,
                      "marks": [asdict(m) for m in p.marks]} for p in d.passages]}
print(json.dumps(out))
"""


def diagnoses(src: Path, traces: Path, qa: Path, k: int) -> dict[str, dict]:
    """Every trace under the folder diagnosed by the `gear` of `src`, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(traces), str(qa), str(k)], capture_output=True,
                          text=True, env=env, cwd=src, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the diagnosis of {src} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def tables(found: dict[str, dict]) -> dict[str, list[dict]]:
    """Each trace's stage table: per gold passage its marks, status, lost at and dropped at."""
    return {name: d["passages"] for name, d in found.items()}


def compare(before: dict[str, dict], after: dict[str, dict]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """(gold passages whose table differs, (trace, before, after) for every changed category)."""
    moved, changed = [], []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old is None or new is None:
            moved.append(f"{name}: only {'after' if old is None else 'before'}")
            continue
        for p, q in zip(old["passages"], new["passages"], strict=False):
            if p != q:
                moved.append(f"{name}: passage {p['id']}")
        if len(old["passages"]) != len(new["passages"]):
            moved.append(f"{name}: {len(old['passages'])} gold passages before, {len(new['passages'])} after")
        was = f"{old['category']} ({old['second'] or '—'})"
        now = f"{new['category']} ({new['second'] or '—'})"
        if was != now:
            changed.append((name, was, now))
    return moved, changed


def hop_check(traces: Path, qa: Path) -> None:
    """The hop gear.diagnosis.hops gives each gold passage against the hop of MuSiQue's `question_decomposition` (the
    step whose supporting paragraph it is), over the traces of one method per question."""
    from gear.data.questions import load_qa
    from gear.diagnosis.facts import TraceFacts
    from gear.diagnosis.gold_texts import QATexts
    from gear.diagnosis.hops import hops
    from gear.events import RunStarted
    from gear.trace import Trace

    raw = {q["id"]: q for q in json.loads(qa.read_text(encoding="utf-8"))}
    texts = QATexts(load_qa(qa)[0])
    seen: set[str] = set()
    agree = total = questions = whole = 0
    for f in sorted(traces.rglob("*.json")):
        trace = Trace.load(f)
        start = trace.first(RunStarted)
        if start is None or start.question_id in seen or start.question_id not in raw:
            continue
        seen.add(start.question_id)
        record = raw[start.question_id]
        want = {record["paragraphs"][step["paragraph_support_idx"]]["title"]: n
                for n, step in enumerate(record["question_decomposition"], 1)}
        facts = TraceFacts.of(trace, texts.for_trace(trace))
        ok = True
        for pid, h in hops(facts, facts.gold).items():
            total += 1
            if want.get(facts.title(pid)) == h.hop:
                agree += 1
            else:
                ok = False
                print(f"- {start.question_id} '{facts.title(pid)}': hop {h.hop}, the decomposition's "
                      f"{want.get(facts.title(pid))}")
        questions += 1
        whole += ok
    print(f"hops as the decomposition: {agree}/{total} gold passages, {whole}/{questions} questions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", type=Path)
    parser.add_argument("--before", type=Path, help="a source tree holding the rules before (SRC/gear)")
    parser.add_argument("--tables", type=Path, help="write the stage tables (of --before, else of this version) here "
                                                     "(.json.xz)")
    parser.add_argument("--qa", type=Path, default=ROOT / "assets" / "musique" / "musique_dev50.json")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--hops", action="store_true", help="the hops against MuSiQue's decompositions (--qa)")
    args = parser.parse_args()
    if args.hops:
        hop_check(args.traces, args.qa)
        return
    after = diagnoses(ROOT, args.traces, args.qa, args.k)
    before = diagnoses(args.before, args.traces, args.qa, args.k) if args.before is not None else None
    if args.tables is not None:
        kept = tables(before if before is not None else after)
        args.tables.write_bytes(lzma.compress(json.dumps(kept, sort_keys=True).encode("utf-8")))
        print(f"{len(kept)} stage tables written to {args.tables}")
    if before is None:
        return
    moved, changed = compare(before, after)
    passages = sum(len(d["passages"]) for d in after.values())
    print(f"### {len(after)} traces, {passages} gold passages: stage tables "
          f"{'unchanged' if not moved else f'CHANGED for {len(moved)}'}\n")
    for line in moved:
        print(f"- {line}")
    flows = Counter((was.split(" ")[0], now.split(" ")[0]) for _, was, now in changed)
    print(f"\n### Categories changed on {len(changed)} of {len(after)} traces (primary or second)\n")
    print("| primary before → after | traces |\n| --- | ---: |")
    for (was, now), n in sorted(flows.items(), key=lambda item: (-item[1], item[0])):
        print(f"| {was} → {now} | {n} |")
    print("\n| trace | before (second) | after (second) |\n| --- | --- | --- |")
    for name, was, now in changed:
        print(f"| {name} | {was} | {now} |")


if __name__ == "__main__":
    main()
