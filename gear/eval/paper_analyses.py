"""The paper's analyses beyond Table 1, read from a folder of evaluation reports and sweeps (this project's docs/evals:
docs/results.md, "The paper's analyses beyond Table 1"): which reports make each analysis, in one place, so the
figures scripts/paper_figures.py saves and the ones the app's Evaluate page draws are the same numbers.

- the grid of max iterations × beam length (Table 7): `gear sweep`s of GeAR (sweeps/…_gear_n_l*.json);
- R@k across iterations (Figure 4; Figure 6 over 20 iterations), tokens across iterations (Figure 5): the recorded runs'
  traces (gear.eval.iterations), with Hybrid + SyncGE's single-step line and point;
- robustness to triple density (Table 8): the subset's four reports over the index's own triples (gear.eval.density);
- diversity (Table 3): hybrid + SyncGE with and without the penalty, per dataset, paired question by question;
- the error table (Table 10): the subset's GeAR runs that missed a gold passage, counted by their diagnosis's primary
  category under the paper's error types (three of today's categories have no row in the paper's table).

Every function returns None (or leaves a row out) when its reports are not there, and says nothing else: a caller
shows what exists.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gear.diagnosis.model import (
    ANSWER,
    BASE_RETRIEVER,
    CATEGORY_LABELS,
    DATASET,
    EXTRACTION,
    GRAPH,
    NONE,
    RANKING,
    READER,
    REASONER,
    REWRITER,
)
from gear.eval.density import COUNTS_FILE, DensityTable, density_table, triples_per_passage
from gear.eval.iterations import IterationCurves, curves
from gear.eval.paired import PairedMeasure
from gear.eval.pairing import PairingError, pair_reports
from gear.eval.protocol import diagnosis_k, per_cutoff, report_ks
from gear.eval.sweep import Sweep, SweepError, cell_slug, cells_dir, load_sweep
from gear.trace import Trace, TraceError

SUBSET = "dev50_every2_n20"  # MuSiQue's recorded 20-question subset (scripts/eval_subset.sh)
GRID = f"sweeps/{SUBSET}_gear_n_l.json"  # n = 1..4 at l = 2, the 20 questions, with answers
GRID_SMALL = "sweeps/dev50_every2_n5_gear_n_l_noqa.json"  # n = 1..4 × l = 1, 2, 3, the first 5, no QA step
SYNC_DIVERSITY = f"sweeps/{SUBSET}_sync_diversity.json"
GEAR_20 = f"sweeps/{SUBSET}_gear_iterations.json"
IRCOT_20 = f"sweeps/{SUBSET}_ircot_ppr_iterations.json"
#: the subset's runs drawn across iterations: (label, report stem); their traces are kept beside the reports
MULTI_STEP = (("GeAR", f"{SUBSET}_gear_paper"), ("HippoRAG w/ IRCoT", f"{SUBSET}_ircot_ppr"),
              ("IRCoT (hybrid)", f"{SUBSET}_ircot_base"))
SYNC = ("Hybrid + SyncGE", f"{SUBSET}_sync")
#: the density table's rows, as the paper's (Table 8), per dataset: (dataset, index name, label → report stem)
DENSITY = (("MuSiQue", "musique", {"Hybrid + NaiveGE": f"{SUBSET}_naive", "Hybrid + SyncGE": f"{SUBSET}_sync",
                                   "HippoRAG w/ IRCoT": f"{SUBSET}_ircot_ppr", "GeAR": f"{SUBSET}_gear_paper"}),
           ("2Wiki", "2wiki", {"Hybrid + NaiveGE": "twowiki_hybrid_naive", "Hybrid + SyncGE": "twowiki_every1_n82_sync",
                               "HippoRAG w/ IRCoT": "twowiki_every1_n82_ircot_ppr",
                               "GeAR": "twowiki_every1_n82_gear_paper"}),
           ("HotpotQA", "hotpotqa", {"Hybrid + NaiveGE": "hotpotqa_hybrid_naive",
                                     "Hybrid + SyncGE": "hotpotqa_every1_n100_sync",
                                     "HippoRAG w/ IRCoT": "hotpotqa_every1_n100_ircot_ppr",
                                     "GeAR": "hotpotqa_every1_n100_gear_paper"}))
#: hybrid + SyncGE with and without diversity: (dataset, report with, report without); MuSiQue's from its sweep
DIVERSITY = (("2Wiki", "twowiki_every1_n82_sync", "twowiki_every1_n82_sync_nodiv"),
             ("HotpotQA", "hotpotqa_every1_n100_sync", "hotpotqa_every1_n100_sync_nodiv"))
#: the error table's run: GeAR with the paper's prompts on the subset, its diagnoses in its report
ERRORS = ("GeAR", f"{SUBSET}_gear_paper")
#: the paper's numbers beside ours
PAPER_GRID = {2: {1: (58.1, 66.0, 69.5), 2: (59.2, 68.9, 71.3), 3: (57.9, 68.0, 71.5), 4: (58.4, 67.6, 71.5)},
              3: {1: (55.9, 64.6, 67.9), 2: (57.2, 66.6, 70.2), 3: (58.1, 67.8, 71.0), 4: (56.7, 66.1, 70.4)},
              4: {1: (54.9, 62.9, 67.3), 2: (56.6, 66.3, 69.3), 3: (58.1, 67.9, 71.0), 4: (56.1, 66.1, 69.9)}}
PAPER_DIVERSITY = {"MuSiQue": ((48.7, 57.7, 61.2), (47.0, 53.9, 58.4)),
                   "2Wiki": ((72.6, 80.9, 82.4), (68.2, 76.0, 77.4)),
                   "HotpotQA": ((87.4, 93.3, 95.2), (85.0, 92.2, 94.3))}
#: Table 10, "Analysis of 20 problematic cases in the MuSiQue dataset": each error type, the category of ours that
#: names the same failure, and the paper's count of 20 GeAR runs (GPT-4o mini) that did not reach full recall
PAPER_ERRORS = (("Base Retriever Limitations", BASE_RETRIEVER, 2), ("Reasoner Hallucinations", REASONER, 2),
                ("Reader Hallucinations", READER, 7), ("Dataset Issues", DATASET, 5),
                ("Missing Details during Triple Extraction", EXTRACTION, 1),
                ("Quality of the Constructed Graph (Triple Index)", GRAPH, 3))
#: today's categories the paper's table has no row for, in the order the table lists them
UNMAPPED = (RANKING, ANSWER, REWRITER, NONE)
PAPER_DENSITY = {"Hybrid + NaiveGE": (50.6, 54.6, 54.1, 50.0), "Hybrid + SyncGE": (62.8, 61.2, 59.8, 60.1),
                 "HippoRAG w/ IRCoT": (64.4, 65.5, 55.0, 52.8), "GeAR": (73.6, 73.7, 69.3, 69.7)}


def read_report(evals: Path, stem: str) -> dict[str, Any] | None:
    try:
        data = json.loads((evals / f"{stem}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("per_question"), list) else None


def read_sweep(evals: Path, name: str) -> Sweep | None:
    try:
        return load_sweep(evals / name)
    except SweepError:
        return None


def traces_in(folder: Path) -> list[Trace]:
    """The traces of a folder, in file order (unreadable ones left out)."""
    out = []
    for path in sorted(folder.glob("*.json")):
        try:
            out.append(Trace.load(path))
        except (TraceError, OSError, ValueError):
            continue
    return out


def sweep_cell_traces(evals: Path, name: str, values: dict[str, Any]) -> list[Trace]:
    return traces_in(cells_dir(evals / name) / cell_slug(values) / "traces")


def sync_line(evals: Path, k: int, questions: Sequence[str] | None = None) -> tuple[str, float] | None:
    """Hybrid + SyncGE's single-step R@k over the subset (or the given questions of it): the figures' horizontal
    line."""
    report = read_report(evals, SYNC[1])
    if report is None:
        return None
    rows = [r for r in report["per_question"] if questions is None or r["id"] in set(questions)]
    if not rows:
        return None
    return SYNC[0], 100.0 * sum(float(r["recall"][str(k)]) for r in rows) / len(rows)


def four_iterations(evals: Path, ks: Sequence[int] = (5, 10, 15)) -> list[IterationCurves]:
    """Figure 4: the subset's multi-step runs over their 4 iterations (GeAR's ranking after n: what a run capped at n
    ranks, passageLink included)."""
    out = []
    for label, stem in MULTI_STEP:
        traces = traces_in(evals / stem / "traces")
        if traces:
            out.append(curves(label, traces, ks, 4))
    return out


def twenty_iterations(evals: Path, ks: Sequence[int] = (5, 10, 15)) -> list[IterationCurves]:
    """Figure 6: GeAR (max_iterations 20) and HippoRAG w/ IRCoT (ircot_max_steps 20) on the subset, from their sweeps'
    20-iteration cells."""
    out = []
    for label, name, knob in (("GeAR", GEAR_20, "max_iterations"), ("HippoRAG w/ IRCoT", IRCOT_20,
                                                                     "ircot_max_steps")):
        traces = sweep_cell_traces(evals, name, {knob: 20})
        if traces:
            out.append(curves(label, traces, ks, 20))
    return out


def sync_tokens(evals: Path) -> tuple[str, int, int] | None:
    """Hybrid + SyncGE's tokens over the subset for one run a question (the k = 15 run, whose traces the diversity
    sweep keeps), the answers' QA calls left out as for the multi-step curves: Figure 5's single point."""
    traces = sweep_cell_traces(evals, SYNC_DIVERSITY, {"diversity": True})
    if not traces:
        return None
    prompt = completion = 0
    for t in traces:
        p, c = t.tokens()
        qp, qc = t.tokens(step="qa")
        prompt, completion = prompt + p - qp, completion + c - qc
    return SYNC[0], prompt, completion


@dataclass
class DiversityRow:
    dataset: str
    questions: int
    with_: dict[str, float]   # R@k with diversity
    without: dict[str, float]
    answers: tuple[float | None, float | None]  # EM with, without
    paired: list[PairedMeasure]  # with − without, question by question: R@k at each cut-off, then EM and F1
    paper: tuple[tuple[float, ...], tuple[float, ...]] | None


def diversity_rows(evals: Path, ks: Sequence[int] = (5, 10, 15)) -> list[DiversityRow]:
    """Table 3 on each dataset we have: hybrid + SyncGE with the diversity penalty against without it, question by
    question (B = with diversity, A = without: a positive difference is diversity's gain)."""
    pairs: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = []
    sweep = read_sweep(evals, SYNC_DIVERSITY)
    if sweep is not None:
        from gear.eval.sweep import read_cell_report

        cells = {c.values.get("diversity"): c for c in sweep.cells}
        if True in cells and False in cells:
            path = evals / SYNC_DIVERSITY
            pairs.append(("MuSiQue", read_cell_report(path, cells[True]), read_cell_report(path, cells[False])))
    pairs += [(name, read_report(evals, a), read_report(evals, b)) for name, a, b in DIVERSITY]
    out = []
    for name, with_, without in pairs:
        if with_ is None or without is None:
            continue
        paired: list[PairedMeasure] = []
        try:
            for n, k in enumerate(ks):
                measures = pair_reports(without, with_, k).measures
                paired += measures if n == 0 else measures[:1]
        except PairingError:
            continue
        order = [f"R@{k}" for k in ks] + ["EM", "F1"]
        paired.sort(key=lambda m: order.index(m.name) if m.name in order else len(order))
        out.append(DiversityRow(name, int(with_["n_questions"]), {str(k): with_["recall"][str(k)] for k in ks},
                                {str(k): without["recall"][str(k)] for k in ks}, (with_.get("em"), without.get("em")),
                                paired, PAPER_DIVERSITY.get(name)))
    return out


def density_tables(evals: Path, indexes: Path, k: int = 15) -> dict[str, DensityTable]:
    """Table 8 per dataset whose four reports and index are there (index folders under `indexes`, by name)."""
    out = {}
    for dataset, index, stems in DENSITY:
        reports = {label: read_report(evals, stem) for label, stem in stems.items()}
        if any(r is None for r in reports.values()) or not (indexes / index / COUNTS_FILE).is_file():
            continue
        try:
            counts = triples_per_passage(indexes / index)
            out[dataset] = density_table({label: r for label, r in reports.items() if r is not None}, counts, k)
        except ValueError:
            continue
    return out


@dataclass(frozen=True)
class ErrorRow:
    """One row of the error table: the paper's error type (None: a category of ours the paper has no row for), the
    category of ours counted beside it, the paper's count, and our runs with that primary category."""

    paper_type: str | None
    category: str
    paper: int | None
    missed: tuple[str, ...]  # runs that missed a gold passage within k (the paper's criterion)
    failed: tuple[str, ...]  # runs that missed a gold passage or answered wrong (EM 0)

    @property
    def label(self) -> str:
        return CATEGORY_LABELS[self.category]


@dataclass(frozen=True)
class ErrorTable:
    """Table 10 beside ours: a report's runs that missed a gold passage within the diagnosis's cut-off, and those that
    failed at all, counted by the primary category their diagnosis proposes (runs it leaves undetermined apart)."""

    label: str
    report: str
    k: int
    questions: int
    missed: int
    failed: int
    rows: list[ErrorRow]
    undetermined: tuple[tuple[str, tuple[str, ...], bool], ...]  # (question, the categories it is between, missed)


def error_table(evals: Path) -> ErrorTable | None:
    """The paper's error table beside the subset's GeAR report (ERRORS), read from its per-question diagnoses."""
    label, stem = ERRORS
    report = read_report(evals, stem)
    if report is None:
        return None
    k = diagnosis_k(report_ks(report), per_cutoff(report))
    missed: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    undetermined = []
    n_missed = n_failed = 0
    for entry in report["per_question"]:
        diagnosis = entry.get("diagnosis") or {}
        lost = float(entry["recall"][str(k)]) < 1.0
        wrong = not entry.get("em")
        if not (lost or wrong):
            continue
        n_missed += lost
        n_failed += 1
        category = diagnosis.get("category")
        if category is None:
            undetermined.append((str(entry["id"]), tuple(diagnosis.get("undetermined") or ()), lost))
            continue
        failed.setdefault(category, []).append(str(entry["id"]))
        if lost:
            missed.setdefault(category, []).append(str(entry["id"]))
    rows = [ErrorRow(name, category, count, tuple(missed.get(category, ())), tuple(failed.get(category, ())))
            for name, category, count in PAPER_ERRORS]
    rows += [ErrorRow(None, category, None, tuple(missed.get(category, ())), tuple(failed.get(category, ())))
             for category in UNMAPPED if category in failed]
    return ErrorTable(label, stem, k, len(report["per_question"]), n_missed, n_failed, rows, tuple(undetermined))
