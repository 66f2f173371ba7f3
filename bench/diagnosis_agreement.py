"""The automatic diagnosis (gear.diagnosis) checked against a person's labels of the same runs (issue 19, item 4).

    python bench/diagnosis_agreement.py TRACES_DIR [--labels bench/diagnosis_labels.json]
        [--qa assets/musique/musique_dev50.json] [--k 5] [--details] [--all]

TRACES_DIR holds one sub-folder per method as `gear eval --traces` writes them (scripts/subset_traces.sh makes them
by replaying the recorded subset); the labels name the method folder and the question id of each labelled run.
For every labelled run the trace is diagnosed (gold passage texts from the QA set, as `gear diagnose --qa` has them)
and compared with the label:
- per gold passage: the label's "lost at" (the shared vocabulary's first stage missed, or "found") against the
  diagnosis's lost_at, with its dropped_at beside it (the stage after the last one the passage reached);
- per run: the category — primary against primary, and "primary or second": the label's primary is one of the
  diagnosis's two or the diagnosis's primary is one of the label's two.
Counts, percentages and confusion tables in Markdown, then every disagreement with both sides' words
(--details: the diagnosis's whole evidence); --all: the category/table rule (issue 25) over every trace of the folder
and the bundled ones. No timing: this measures agreement, not speed.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from gear.data.corpus import load_qa
from gear.diagnosis import CATEGORIES, Diagnosis, diagnose
from gear.diagnosis.gold_texts import QATexts
from gear.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
FOUND = "found"


@dataclass(frozen=True)
class PassageRow:
    method: str
    question_id: str
    passage_id: int
    title: str
    label: str         # the person's lost-at ("found" or a stage)
    lost_at: str       # the diagnosis's
    dropped_at: str    # the diagnosis's, beside it ("found" when found)
    label_note: str
    evidence: str


@dataclass(frozen=True)
class RunRow:
    method: str
    question_id: str
    label: str
    label_second: str
    category: str
    second: str
    label_note: str
    evidence: list[str]

    @property
    def primary_agrees(self) -> bool:
        return self.label == self.category

    @property
    def either_agrees(self) -> bool:
        return self.label in (self.category, self.second) or self.category in (self.label, self.label_second)


def stage_name(stage: str | None, status: str, k: int) -> str:
    """The diagnosis's stage in the label's words: "found", and "final@5" for FOUND ("final@k")."""
    if status == "found" or stage is None:
        return FOUND if status == "found" else "open"
    return f"final@{k}" if stage == "final@k" else stage


def compare(labels: list[dict], traces: Path, texts: QATexts, k: int) -> tuple[list[PassageRow], list[RunRow]]:
    passages: list[PassageRow] = []
    runs: list[RunRow] = []
    for label in labels:
        trace = Trace.load(traces / label["method"] / f"{label['question_id']}.json")
        d: Diagnosis = diagnose(trace, k, texts.for_trace(trace))
        by_id = {p.id: p for p in d.passages}
        for gold in label["gold"]:
            p = by_id.get(gold["passage_id"])
            if p is None:
                raise SystemExit(f"{label['method']}/{label['question_id']}: gold passage {gold['passage_id']} of the "
                                 "label is not in the trace's RunStarted")
            passages.append(PassageRow(label["method"], label["question_id"], p.id, p.title, gold["lost_at"],
                                       stage_name(p.lost_at, p.status, k), stage_name(p.dropped_at, p.status, k),
                                       gold.get("note", ""), "; ".join(p.evidence)))
        runs.append(RunRow(label["method"], label["question_id"], label["category"],
                           label.get("second_category") or "", d.category or "undetermined", d.second or "",
                           label.get("note", ""), list(d.evidence)))
    return passages, runs


def percent(n: int, total: int) -> str:
    return f"{n}/{total} ({100 * n / total:.0f}%)" if total else "0/0"


def confusion(pairs: list[tuple[str, str]], order: list[str], rows_name: str, cols_name: str) -> None:
    """Rows: the person's; columns: the diagnosis's; the diagonal is agreement."""
    seen = {x for pair in pairs for x in pair}
    names = [x for x in order if x in seen] + sorted(seen - set(order))
    counts = Counter(pairs)
    print(f"\n| {rows_name} ↓ / {cols_name} → | " + " | ".join(names) + " |")
    print("| --- |" + " ---: |" * len(names))
    for r in names:
        cells = [(f"**{counts[(r, c)]}**" if r == c else str(counts[(r, c)])) if counts[(r, c)] else "·"
                 for c in names]
        print(f"| {r} | " + " | ".join(cells) + " |")


def report(passages: list[PassageRow], runs: list[RunRow], k: int, details: bool) -> None:
    methods = list(dict.fromkeys(r.method for r in runs))
    print(f"### Agreement with the hand labels ({len(runs)} runs, {len(passages)} gold passages, k = {k})\n")
    print("| | " + " | ".join(methods) + " | all |")
    print("| --- |" + " ---: |" * (len(methods) + 1))
    groups = [*methods, None]

    def cells(fn) -> str:
        return " | ".join(fn(m) for m in groups)

    def of(rows, m):
        return [r for r in rows if m is None or r.method == m]

    print("| gold passages: lost at agrees | " +
          cells(lambda m: percent(sum(r.label == r.lost_at for r in of(passages, m)), len(of(passages, m)))) + " |")
    print("| gold passages: found / not found agrees | " +
          cells(lambda m: percent(sum((r.label == FOUND) == (r.lost_at == FOUND) for r in of(passages, m)),
                                  len(of(passages, m)))) + " |")
    print("| gold passages: label's lost at = diagnosis's dropped at | " +
          cells(lambda m: percent(sum(r.label == r.dropped_at for r in of(passages, m)), len(of(passages, m)))) +
          " |")
    print("| runs: category agrees (primary) | " +
          cells(lambda m: percent(sum(r.primary_agrees for r in of(runs, m)), len(of(runs, m)))) + " |")
    print("| runs: primary or second agrees | " +
          cells(lambda m: percent(sum(r.either_agrees for r in of(runs, m)), len(of(runs, m)))) + " |")

    stages = [FOUND, "base", "read", "link", "beam", "expanded", "fused", "gist", "linked", "seed", "ranked",
              "retrieval", "final", f"final@{k}"]
    print("\n#### Lost at, per gold passage (rows: the person; columns: the diagnosis)")
    confusion([(r.label, r.lost_at) for r in passages], stages, "person", "diagnosis")
    print("\n#### Category, per run (primary)")
    confusion([(r.label, r.category) for r in runs], [*CATEGORIES, "undetermined"], "person", "diagnosis")

    print("\n#### Gold passages where lost at differs\n")
    print("| method | question | passage | person | diagnosis lost at (dropped at) |")
    print("| --- | --- | --- | --- | --- |")
    for r in passages:
        if r.label != r.lost_at:
            print(f"| {r.method} | {r.question_id} | {r.passage_id} {r.title} | {r.label} | {r.lost_at} "
                  f"({r.dropped_at}) |")
    print("\n#### Runs where the category differs (primary)\n")
    print("| method | question | person (second) | diagnosis (second) |")
    print("| --- | --- | --- | --- |")
    for r in runs:
        if not r.primary_agrees:
            print(f"| {r.method} | {r.question_id} | {r.label} ({r.label_second or '—'}) | {r.category} "
                  f"({r.second or '—'}) |")
    if details:
        print("\n#### Both sides' words, for every disagreement\n")
        for r in passages:
            if r.label != r.lost_at:
                print(f"- **{r.method} {r.question_id} #{r.passage_id} {r.title}**: person {r.label} — {r.label_note}"
                      f"\n  - diagnosis {r.lost_at} (dropped at {r.dropped_at}) — {r.evidence}")
        for r in runs:
            if not r.primary_agrees:
                print(f"- **{r.method} {r.question_id}**: person {r.label} ({r.label_second or '—'}) — "
                      f"{r.label_note}\n  - diagnosis {r.category} ({r.second or '—'}) — " + " | ".join(r.evidence))


def invariant(traces: Path, texts: QATexts, k: int) -> None:
    """Issue 25's rule over every trace under the folder and the bundled ones: a category named after a stage is
    proposed only where the table shows a gold passage lost at one of its stages. Two checks: the proposal's
    (lenient: any lost passage at any of the category's stages, as a diagnosis written before the rule can be checked
    too) and its evidence line's (gear.diagnosis.invariant.violations: the passage and stage it names)."""
    from gear.diagnosis.invariant import CATEGORY_STAGES, loss_stages, stages_of, violations

    files = [f for f in sorted(traces.rglob("*.json")) if not f.name.endswith(".report.json")]
    files += sorted((ROOT / "assets" / "traces").glob("*.json"))
    unsupported: Counter[tuple[str, str]] = Counter()
    named = 0
    for f in files:
        trace = Trace.load(f)
        d = diagnose(trace, k, texts.for_trace(trace))
        for category in (d.category, d.second):
            if category in CATEGORY_STAGES and not any(
                    set(loss_stages(p, d.stages, d.k)) & set(stages_of(category, steered=True)) for p in d.passages):
                unsupported[(f.parent.name, category)] += 1
        named += bool(violations(d))
    print(f"\n### The category/table rule over {len(files)} traces\n")
    print(f"- proposals the table does not support: {sum(unsupported.values())}"
          + (" (" + ", ".join(f"{m} {c} {n}" for (m, c), n in sorted(unsupported.items())) + ")" if unsupported
             else ""))
    print(f"- diagnoses whose evidence does not name a passage and stage where the table shows it lost: {named}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", type=Path, help="a folder of per-method trace folders")
    parser.add_argument("--labels", type=Path, default=ROOT / "bench" / "diagnosis_labels.json")
    parser.add_argument("--qa", type=Path, default=ROOT / "assets" / "musique" / "musique_dev50.json")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--details", action="store_true", help="print both sides' words for every disagreement")
    parser.add_argument("--all", action="store_true", help="also check the category/table rule (issue 25) on every "
                                                           "trace under TRACES_DIR and the bundled ones")
    args = parser.parse_args()
    labels = json.loads(args.labels.read_text(encoding="utf-8"))
    texts = QATexts(load_qa(args.qa)[0])
    passages, runs = compare(labels, args.traces, texts, args.k)
    report(passages, runs, args.k, args.details)
    if args.all:
        invariant(args.traces, texts, args.k)


if __name__ == "__main__":
    main()
