"""The automatic diagnosis (gear.diagnosis) checked against people's labels of the same runs.

The blind-labelled set (bench/labelling/PROTOCOL.md: two labellers, each blind to the other and to the diagnosis):

    python bench/diagnosis_agreement.py --set bench/labelling [--traces DIR] [--half dev|held|all] [--details]
        [--before SRC] [--index] [--k 5]

SET holds `runs.json` (a list: run id "R001"…, dataset, method, question_id, and `trace`, the trace's path relative to
the traces folder: --traces, else SET/traces, else SET/traces.tar.xz unpacked) and one JSONL file per labeller,
`labels_a.jsonl` and `labels_b.jsonl`, a line per run in the protocol's JSON form. For the diagnosis against each
labeller and against the runs both labellers agree on, and between the two labellers: primary agreement and
primary-or-second agreement (one's primary among the other's two), each with a Clopper–Pearson 95 % interval; the
confusion table (rows: the person, columns: the diagnosis); per gold passage, found / not found, the hop and the
responsible step. The runs with odd numbers are the development half, the even ones held out (`--half`; each half and
both are reported): `--details` lists every disagreement with both sides' words, of the development half only — the
held-out half is read in aggregate, never run by run. `--before SRC`: the same numbers for the diagnosis of another
source tree (SRC/gear, e.g. `git archive BASE gear | tar -x -C SRC`), its categories mapped to the protocol's where a
note of its names one. `--index`: diagnose with each dataset's demo index open (data/indexes/<dataset>): extraction
told from graph by its triples, the beams and the base retrievers re-run (gear.diagnosis.probe), and the time that
costs per diagnosis.

The earlier 20 runs labelled by one helper:

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
(--details: the diagnosis's whole evidence); --all: the category/table rule over every trace of the folder
and the bundled ones. No timing: this measures agreement, not speed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from scipy.stats import binomtest

from gear.data.questions import load_qa
from gear.diagnosis import CATEGORIES, STEPS, Diagnosis, diagnose
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
    """The category/table rule over every trace under the folder and the bundled ones: a category named after a stage is
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
                    set(loss_stages(p, d.stages, d.k)) & set(stages_of(category, bridge=True)) for p in d.passages):
                unsupported[(f.parent.name, category)] += 1
        named += bool(violations(d))
    print(f"\n### The category/table rule over {len(files)} traces\n")
    print(f"- proposals the table does not support: {sum(unsupported.values())}"
          + (" (" + ", ".join(f"{m} {c} {n}" for (m, c), n in sorted(unsupported.items())) + ")" if unsupported
             else ""))
    print(f"- diagnoses whose evidence does not name a passage and stage where the table shows it lost: {named}")


# -- the blind-labelled set (bench/labelling/PROTOCOL.md) -----------------------------------------------------------
QA_SETS = {"musique": ROOT / "assets" / "musique" / "musique_dev50.json",
           "hotpotqa": ROOT / "assets" / "hotpotqa" / "hotpotqa_train100.json",
           "2wiki": ROOT / "assets" / "2wikimultihopqa" / "2wikimultihopqa_dev82.json"}
Category = Literal[CATEGORIES]  # type: ignore[valid-type]
Step = Literal[STEPS]  # type: ignore[valid-type]


class RunEntry(BaseModel):
    """One line of runs.json."""

    model_config = ConfigDict(extra="ignore")
    run: str
    dataset: str
    method: str
    question_id: str
    trace: str


class PassageLabel(BaseModel):
    model_config = ConfigDict(extra="ignore")
    gold: str
    hop: int | None = None
    found: bool
    responsible: Step | None = None
    why: str = ""


class Label(BaseModel):
    """One run's label, as the protocol writes it."""

    model_config = ConfigDict(extra="ignore")
    run: str
    primary: Category
    second: Category | None = None
    answer_form_only: bool = False
    confidence: Literal["high", "medium", "low"] | None = None
    passages: list[PassageLabel] = field(default_factory=list)
    note: str = ""


def read_runs(path: Path) -> list[RunEntry]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"{path}: cannot read the runs: {exc}") from None
    if not isinstance(raw, list):
        raise SystemExit(f"{path}: expected a list of runs, found {type(raw).__name__}")
    runs = []
    for n, item in enumerate(raw):
        try:
            runs.append(RunEntry.model_validate(item))
        except ValidationError as exc:
            raise SystemExit(f"{path}: run {n + 1}: {_first_error(exc)}") from None
    return runs


def read_labels(path: Path) -> dict[str, Label]:
    """A labeller's JSONL file: one run's label a line (blank lines allowed)."""
    labels: dict[str, Label] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SystemExit(f"{path}: cannot read the labels: {exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            label = Label.model_validate_json(line)
        except ValidationError as exc:
            raise SystemExit(f"{path}: line {n}: {_first_error(exc)}") from None
        if label.run in labels:
            raise SystemExit(f"{path}: line {n}: run {label.run} is labelled twice")
        labels[label.run] = label
    return labels


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(x) for x in err["loc"]) or "the record"
    return f"field {where}: {err['msg']}"


@dataclass
class Verdict:
    """One side's words about a run: its primary, second, form-only flag and per gold passage (G1, G2, … in the
    order of the run's gold passages) found, hop and the step responsible."""

    primary: str
    second: str | None = None
    form_only: bool = False
    passages: dict[str, PassageLabel] = field(default_factory=dict)
    words: str = ""

    @classmethod
    def of_label(cls, label: Label) -> Verdict:
        return cls(label.primary, label.second, label.answer_form_only, {p.gold: p for p in label.passages},
                   label.note)

    @classmethod
    def of_diagnosis(cls, d: Diagnosis) -> Verdict:
        passages = {f"G{n}": PassageLabel(gold=f"G{n}", hop=p.hop, found=p.status == "found",
                                          responsible=p.responsible if p.responsible in STEPS else None)
                    for n, p in enumerate(d.passages, 1)}
        return cls(d.category or "undetermined", d.second, d.answer_form_only, passages, " | ".join(d.evidence))


def primary_agrees(a: Verdict, b: Verdict) -> bool:
    return a.primary == b.primary


def either_agrees(a: Verdict, b: Verdict) -> bool:
    """One's primary among the other's two."""
    return a.primary in (b.primary, b.second) or b.primary in (a.primary, a.second)


@dataclass
class SetRun:
    entry: RunEntry
    a: Verdict | None
    b: Verdict | None
    after: Verdict
    before: Verdict | None = None

    @property
    def number(self) -> int:
        digits = "".join(ch for ch in self.entry.run if ch.isdigit())
        return int(digits) if digits else 0

    @property
    def agreed(self) -> Verdict | None:
        """The labellers' shared primary (with A's second and passages), when both labelled it and agree."""
        if self.a is None or self.b is None or self.a.primary != self.b.primary:
            return None
        return self.a


def interval(k: int, n: int) -> str:
    if n == 0:
        return "0/0"
    low, high = binomtest(k, n).proportion_ci(method="exact")
    return f"{k}/{n} ({100 * k / n:.0f} %, 95 % CI {100 * low:.0f}–{100 * high:.0f} %)"


def traces_folder(set_dir: Path, given: Path | None) -> Path:
    if given is not None:
        return given
    if (set_dir / "traces").is_dir():
        return set_dir / "traces"
    archive = set_dir / "traces.tar.xz"
    if not archive.is_file():
        raise SystemExit(f"{set_dir}: no traces/ folder and no traces.tar.xz: give --traces DIR "
                         "(bench/labelling/replay_runs.sh makes them)")
    out = Path(tempfile.mkdtemp(prefix="labelled_traces_"))
    with tarfile.open(archive) as tar:
        tar.extractall(out, filter="data")
    inner = [p for p in out.iterdir() if p.is_dir()]
    return inner[0] if len(inner) == 1 and not any(p.is_file() for p in out.iterdir()) else out


Diagnoser = Callable[[RunEntry, Trace], Diagnosis]


def diagnoser(k: int, probes: dict[str, object] | None = None) -> Diagnoser:
    """Diagnose a labelled run as `gear eval` would: gold texts and hop type from the dataset's QA set, and the
    dataset's index as a probe where one is open."""
    texts: dict[str, QATexts] = {}

    def run(entry: RunEntry, trace: Trace) -> Diagnosis:
        if entry.dataset not in texts:
            path = QA_SETS.get(entry.dataset)
            texts[entry.dataset] = QATexts(load_qa(path)[0] if path is not None else [])
        qa = texts[entry.dataset]
        probe = (probes or {}).get(entry.dataset)
        return diagnose(trace, k, qa.for_trace(trace), hop=qa.hop_for(trace), probe=probe)  # type: ignore[arg-type]

    return run


BEFORE_SCRIPT = """
import json, sys
from pathlib import Path
from gear.data.questions import load_qa
from gear.diagnosis import diagnose
from gear.diagnosis.gold_texts import QATexts
from gear.trace import Trace
jobs = json.loads(sys.stdin.read())
texts = {}
out = {}
for job in jobs:
    if job["qa"] not in texts:
        texts[job["qa"]] = QATexts(load_qa(Path(job["qa"]))[0])
    qa = texts[job["qa"]]
    trace = Trace.load(Path(job["trace"]))
    d = diagnose(trace, job["k"], qa.for_trace(trace), hop=qa.hop_for(trace))
    out[job["run"]] = {"category": d.category, "second": d.second, "evidence": d.evidence, "notes": d.notes,
                       "passages": [{"status": p.status, "lost_at": p.lost_at, "dropped_at": p.dropped_at}
                                    for p in d.passages]}
print(json.dumps(out))
"""
#: the step a loss was laid at before the diagnosis named steps: the stage it left the run at
STAGE_AS_STEP = {"base": "base", "read": "read", "link": "link", "beam": "beam", "gist": "gist", "linked":
                 "passagelink", "retrieval": "retrieval", "seed": "seed", "ranked": "walk", "expanded": "ranking",
                 "fused": "ranking", "final": "ranking", "final@k": "ranking", "initial": "extraction"}


def before_verdicts(src: Path, runs: Sequence[tuple[RunEntry, Path]], k: int) -> dict[str, Verdict]:
    """The diagnosis of another source tree (run in a process of its own, its `gear` first on the path), each run's
    category mapped to the protocol's where its notes name one (a final fusion no category named: ranking)."""
    jobs = [{"run": e.run, "trace": str(path), "qa": str(QA_SETS[e.dataset]), "k": k} for e, path in runs]
    env = {**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", BEFORE_SCRIPT], input=json.dumps(jobs), capture_output=True,
                          text=True, env=env, cwd=src, check=False)
    if done.returncode != 0:
        raise SystemExit(f"--before {src}: the diagnosis there failed:\n{done.stderr[-2000:]}")
    out = {}
    for run, d in json.loads(done.stdout).items():
        category = d["category"] or "undetermined"
        if d["category"] is None and any("final fusion" in n for n in d["notes"]):
            category = "ranking"
        passages = {f"G{n}": PassageLabel(gold=f"G{n}", found=p["status"] == "found",
                                          responsible=STAGE_AS_STEP.get(p["dropped_at"] or p["lost_at"] or "")
                                          if p["status"] != "found" else None)
                    for n, p in enumerate(d["passages"], 1)}
        out[run] = Verdict(category, d["second"], False, passages, " | ".join(d["evidence"]))
    return out


def compare_set(set_dir: Path, traces: Path | None, k: int, diagnose_run: Diagnoser,
                before: Path | None = None) -> tuple[list[SetRun], list[float]]:
    """Every run of the set, diagnosed, with both labels (and the diagnosis of `before`); the seconds each
    diagnosis took."""
    entries = read_runs(set_dir / "runs.json")
    labels_a = read_labels(set_dir / "labels_a.jsonl")
    labels_b = read_labels(set_dir / "labels_b.jsonl")
    folder = traces_folder(set_dir, traces)
    located = []
    for e in entries:
        path = folder / e.trace
        if not path.is_file():
            raise SystemExit(f"{set_dir / 'runs.json'}: run {e.run}: trace {e.trace} not found in {folder}")
        located.append((e, path))
    old = before_verdicts(before, located, k) if before is not None else {}
    runs, seconds = [], []
    for e, path in located:
        trace = Trace.load(path)
        started = time.perf_counter()
        d = diagnose_run(e, trace)
        seconds.append(time.perf_counter() - started)
        a, b = labels_a.get(e.run), labels_b.get(e.run)
        runs.append(SetRun(e, Verdict.of_label(a) if a else None, Verdict.of_label(b) if b else None,
                           Verdict.of_diagnosis(d), old.get(e.run)))
    return runs, seconds


def half_of(runs: Sequence[SetRun], half: str) -> list[SetRun]:
    if half == "dev":
        return [r for r in runs if r.number % 2 == 1]
    if half == "held":
        return [r for r in runs if r.number % 2 == 0]
    return list(runs)


def pairs(runs: Sequence[SetRun], side: str) -> dict[str, list[tuple[Verdict, Verdict]]]:
    """(person, machine) pairs per comparison; `side` is "after" or "before"."""
    out: dict[str, list[tuple[Verdict, Verdict]]] = {"labeller A": [], "labeller B": [], "both agree": []}
    for r in runs:
        machine = getattr(r, side)
        if machine is None:
            continue
        if r.a is not None:
            out["labeller A"].append((r.a, machine))
        if r.b is not None:
            out["labeller B"].append((r.b, machine))
        if r.agreed is not None:
            out["both agree"].append((r.agreed, machine))
    return out


def passage_rows(pairs_: Sequence[tuple[Verdict, Verdict]]) -> tuple[Counter[str], Counter[str]]:
    """Per gold passage: found agrees, hop agrees, responsible agrees (of those both call not found)."""
    agree: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for person, machine in pairs_:
        for gold, p in person.passages.items():
            m = machine.passages.get(gold)
            if m is None:
                continue
            total["found"] += 1
            agree["found"] += p.found == m.found
            if p.hop is not None and m.hop is not None:
                total["hop"] += 1
                agree["hop"] += p.hop == m.hop
            if not p.found and not m.found and p.responsible:
                total["responsible"] += 1
                agree["responsible"] += p.responsible == m.responsible
    return agree, total


def set_table(runs: Sequence[SetRun], side: str, title: str) -> None:
    print(f"\n#### {title}\n")
    print("| against | runs | primary | primary or second | gold passages: found | hop | responsible step |")
    print("| --- | ---: | --- | --- | --- | --- | --- |")
    for name, ps in pairs(runs, side).items():
        agree, total = passage_rows(ps)
        print(f"| {name} | {len(ps)} | {interval(sum(primary_agrees(p, m) for p, m in ps), len(ps))} | "
              f"{interval(sum(either_agrees(p, m) for p, m in ps), len(ps))} | "
              + " | ".join(f"{agree[x]}/{total[x]}" for x in ("found", "hop", "responsible")) + " |")


def labellers_table(runs: Sequence[SetRun]) -> None:
    both = [(r.a, r.b) for r in runs if r.a is not None and r.b is not None]
    agree, total = passage_rows(both)  # type: ignore[arg-type]
    print("\n#### The two labellers (A against B): the ceiling\n")
    print("| runs | primary | primary or second | gold passages: found | hop | responsible step |")
    print("| ---: | --- | --- | --- | --- | --- |")
    print(f"| {len(both)} | {interval(sum(primary_agrees(a, b) for a, b in both), len(both))} | "  # type: ignore
          f"{interval(sum(either_agrees(a, b) for a, b in both), len(both))} | "  # type: ignore[arg-type]
          + " | ".join(f"{agree[x]}/{total[x]}" for x in ("found", "hop", "responsible")) + " |")


def report_set(runs: list[SetRun], k: int, details: bool, halves: Sequence[str], seconds: Sequence[float],
               probe_seconds: Sequence[float] = ()) -> None:
    datasets = Counter(r.entry.dataset for r in runs)
    methods = Counter(r.entry.method for r in runs)
    print(f"### The blind-labelled set: {len(runs)} runs (" + ", ".join(f"{d} {n}" for d, n in datasets.items())
          + "; " + ", ".join(f"{m} {n}" for m, n in methods.items()) + f"), k = {k}")
    for half in halves:
        chosen = half_of(runs, half)
        name = {"dev": "development half (odd runs)", "held": "held-out half (even runs)", "all": "all runs"}[half]
        print(f"\n### {name}: {len(chosen)} runs")
        labellers_table(chosen)
        if any(r.before is not None for r in chosen):
            set_table(chosen, "before", "The diagnosis before (its categories mapped to the protocol's)")
        set_table(chosen, "after", "The diagnosis after")
        for side in ("before", "after"):
            ps = pairs(chosen, side)["both agree"]
            if ps:
                print(f"\n#### Category, {side} (rows: the labellers where they agree; columns: the diagnosis)")
                confusion([(p.primary, m.primary) for p, m in ps], [*CATEGORIES, "undetermined"], "person",
                          "diagnosis")
        both = [(r.a, r.b) for r in chosen if r.a is not None and r.b is not None]
        if both:
            print("\n#### Category, labeller A (rows) against labeller B (columns)")
            confusion([(a.primary, b.primary) for a, b in both], [*CATEGORIES], "A", "B")  # type: ignore[union-attr]
    if seconds:
        print(f"\n- diagnosis: {len(seconds)} runs, {1000 * sum(seconds) / len(seconds):.0f} ms a run "
              f"(max {1000 * max(seconds):.0f} ms)")
    if probe_seconds:
        extra = [p - s for p, s in zip(probe_seconds, seconds, strict=True)]
        rerun = [x for x, r in zip(extra, runs, strict=True) if "re-run" in r.after.words]
        print(f"- with the index open (engines warm): {1000 * sum(probe_seconds) / len(probe_seconds):.0f} ms a run, "
              f"median {1000 * statistics.median(probe_seconds):.0f} ms, max {1000 * max(probe_seconds):.0f} ms; "
              f"{1000 * sum(extra) / len(extra):+.0f} ms a run for the index's checks and re-runs")
        if rerun:
            print(f"- {len(rerun)} of {len(runs)} diagnoses re-ran a step (their evidence says \"re-run\"): "
                  f"{1000 * sum(rerun) / len(rerun):+.0f} ms each on average, max {1000 * max(rerun):+.0f} ms")
    if details:
        dev = half_of(runs, "dev")
        print("\n#### Every disagreement of the development half (odd runs), both sides' words\n")
        for r in dev:
            lines = []
            for who, person in (("A", r.a), ("B", r.b)):
                if person is None:
                    continue
                if not primary_agrees(person, r.after):
                    lines.append(f"  - {who}: {person.primary} ({person.second or '—'}) — {person.words}")
                for g, p in person.passages.items():
                    m = r.after.passages.get(g)
                    if m is not None and not p.found and p.responsible and (m.found or p.responsible != m.responsible):
                        lines.append(f"  - {who} {g}: {p.responsible} ({p.why}) / diagnosis "
                                     f"{'found' if m.found else m.responsible}")
            if lines:
                print(f"- **{r.entry.run}** ({r.entry.dataset}, {r.entry.method}, {r.entry.question_id}) — diagnosis: "
                      f"{r.after.primary} ({r.after.second or '—'}) — {r.after.words}")
                print("\n".join(lines))


def main_set(args: argparse.Namespace) -> None:
    probes: dict[str, object] = {}
    if args.index:
        from gear.agent.engine import Engine

        for dataset in QA_SETS:
            folder = ROOT / "data" / "indexes" / dataset
            if (folder / "manifest.json").is_file():
                probes[dataset] = engine = Engine.open(folder)
                engine.encoder.encode_cached(["warm up"])  # the model loads once, outside the timings
    runs, seconds = compare_set(args.set, args.traces, args.k, diagnoser(args.k), args.before)
    probe_seconds: list[float] = []
    if probes:
        with_index, probe_seconds = compare_set(args.set, args.traces, args.k, diagnoser(args.k, probes))
        for r, p in zip(runs, with_index, strict=True):
            r.after = p.after
    halves = ["dev", "held", "all"] if args.half == "all" else [args.half]
    report_set(runs, args.k, args.details, halves, seconds, probe_seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("traces", type=Path, nargs="?", help="a folder of per-method trace folders (the 20 runs of "
                                                             "diagnosis_labels.json)")
    parser.add_argument("--set", type=Path, help="a blind-labelled set: runs.json, labels_a.jsonl, labels_b.jsonl")
    parser.add_argument("--traces", dest="set_traces", type=Path, help="with --set: the folder its runs' traces are in")
    parser.add_argument("--half", choices=("dev", "held", "all"), default="all",
                        help="with --set: the odd runs (development), the even ones (held out) or both")
    parser.add_argument("--before", type=Path, help="with --set: also diagnose with SRC/gear (another version)")
    parser.add_argument("--index", action="store_true", help="with --set: diagnose with each dataset's demo index "
                                                             "open (re-runs, extraction told from graph)")
    parser.add_argument("--labels", type=Path, default=ROOT / "bench" / "diagnosis_labels.json")
    parser.add_argument("--qa", type=Path, default=ROOT / "assets" / "musique" / "musique_dev50.json")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--details", action="store_true", help="print both sides' words for every disagreement")
    parser.add_argument("--all", action="store_true", help="also check the category/table rule on every "
                                                           "trace under TRACES_DIR and the bundled ones")
    args = parser.parse_args()
    if args.set is not None:
        args.traces = args.set_traces
        main_set(args)
        return
    if args.traces is None:
        parser.error("give TRACES_DIR (the 20 runs of --labels) or --set SET")
    labels = json.loads(args.labels.read_text(encoding="utf-8"))
    texts = QATexts(load_qa(args.qa)[0])
    passages, runs = compare(labels, args.traces, texts, args.k)
    report(passages, runs, args.k, args.details)
    if args.all:
        invariant(args.traces, texts, args.k)


if __name__ == "__main__":
    main()
