"""The paper's analyses beyond Table 1 from the bundled reports, sweeps and traces (docs/evals; recorded by
scripts/paper_analyses.sh): the figures as small PNGs under docs/figures/ and the tables as Markdown on stdout, the
numbers docs/results.md prints ("The paper's analyses beyond Table 1"). The figures are the app's (gear.viz.analyses,
over gear.eval.paper_analyses), exported by plotly through kaleido and the system's Chromium.

Usage: .venv/bin/python scripts/paper_figures.py [--evals docs/evals] [--indexes data/indexes] [--out docs/figures]
[--errors] (--errors: the error table alone, no figures and no index; the density table needs the demo indexes it
reads triples from: data/indexes/{musique,2wiki,hotpotqa}, built by the app or
`python -c "from studio.core.demos import ensure_demo_index as e; e('musique')"`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gear.eval import paper_analyses as pa  # noqa: E402
from gear.eval.paired import PairedMeasure  # noqa: E402
from gear.eval.sweep import Sweep  # noqa: E402
from gear.viz.analyses import iteration_recall_figure, iteration_tokens_figure, sweep_heatmap  # noqa: E402

WIDTH, HEIGHT = 760, 430


def save(fig, path: Path) -> None:
    if not os.environ.get("BROWSER_PATH"):
        os.environ["BROWSER_PATH"] = shutil.which("chromium") or "/usr/bin/chromium"
    fig.write_image(path, width=WIDTH, height=HEIGHT, scale=1)
    print(f"<!-- {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: {path.stat().st_size // 1024} KB -->")


def p_text(m: PairedMeasure) -> str:
    p = "—" if m.p_sign is None else f"{m.p_sign:.2g}"
    return f"{m.difference:+.1f} ({m.better}↑ {m.worse}↓, p {p})"


def grid_table(sweep: Sweep) -> None:
    print(f"\n**Max iterations n × beam length l** ({len(sweep.questions)} questions; R@5 / R@10 / R@15; the paper's "
          "in brackets, its b = 2, 3, 4; against the baseline n = 4, l = 2: ΔR@15, questions up ↑ / down ↓, sign "
          "test p)\n")
    lengths = next(a.values for a in sweep.axes if a.name == "beam_length")
    iterations = next(a.values for a in sweep.axes if a.name == "max_iterations")
    print("| l \\ n | " + " | ".join(f"n = {n}" for n in iterations) + " |")
    print("| --- |" + " --- |" * len(iterations))
    for length in lengths:
        cells = []
        for n in iterations:
            cell = next((c for c in sweep.cells if c.values == {"max_iterations": n, "beam_length": length}), None)
            if cell is None:
                cells.append("—")
                continue
            text = " / ".join(f"{cell.recall[str(k)]:.1f}" for k in (5, 10, 15))
            paper = pa.PAPER_GRID.get(int(length), {}).get(int(n))  # type: ignore[arg-type]
            if paper:
                text += " [" + " / ".join(f"{x:.1f}" for x in paper) + "]"
            r15 = next((m for m in cell.paired if m.name == "R@15"), None)
            if r15 is not None:
                text += f"; Δ {r15.difference:+.1f} ({r15.better}↑ {r15.worse}↓, p {_p(r15.p_sign)})"
            cells.append(text)
        print(f"| l = {length} | " + " | ".join(cells) + " |")
    print("\n| cell | EM / F1 | tokens / question | s / question | iterations | LLM answers (model / record / memo) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for c in sweep.cells:
        calls = " / ".join(str(c.llm_calls.get(s, 0)) for s in ("model", "record", "memo"))
        em = "—" if c.em is None or c.f1 is None else f"{c.em:.1f} / {c.f1:.1f}"
        print(f"| {c.name} | {em} | {c.tokens_per_question:.0f} | {c.seconds_per_question:.1f} | "
              f"{c.iterations_mean or 0:.2f} | {calls}{' (read back)' if c.resumed else ''} |")


def _p(p: float | None) -> str:
    return "—" if p is None else f"{p:.2g}"


def curves_table(title: str, curves: Sequence[pa.IterationCurves], line: tuple[str, float] | None) -> None:
    depth = max(len(c.recall) for c in curves)
    print(f"\n**{title}** (R@5 / R@10 / R@15 after each iteration; runs still going)\n")
    print("| method | " + " | ".join(f"n = {n}" for n in range(1, depth + 1)) + " |")
    print("| --- |" + " --- |" * depth)
    for c in curves:
        print(f"| {c.label} ({c.questions}) | " + " | ".join(
            f"{r['5']:.1f} / {r['10']:.1f} / {r['15']:.1f} ({c.running[n]})" for n, r in enumerate(c.recall)) + " |")
    if line:
        print(f"\n{line[0]} (single step): R@15 {line[1]:.1f}")


def tokens_table(curves: Sequence[pa.IterationCurves], single: tuple[str, int, int] | None) -> None:
    depth = max(len(c.prompt_tokens) for c in curves)
    print("\n**Tokens across iterations** (input / output tokens of all the questions together by the end of each "
          "iteration, the answers' QA calls apart)\n")
    print("| method | " + " | ".join(f"n = {n}" for n in range(1, depth + 1)) + " | QA answers |")
    print("| --- |" + " --- |" * (depth + 1))
    if single:
        print(f"| {single[0]} (one run a question) | {single[1]:,} / {single[2]:,} (single step) |"
              + " |" * depth)
    for c in curves:
        print(f"| {c.label} | " + " | ".join(f"{p:,} / {o:,}" for p, o in zip(c.prompt_tokens, c.completion_tokens,
                                                                                  strict=True))
              + f" | {c.answer_tokens[0]:,} / {c.answer_tokens[1]:,} |")


def diversity_table(rows: Sequence[pa.DiversityRow]) -> None:
    print("\n**Hybrid + SyncGE with and without diversity** (R@5 / R@10 / R@15; with − without, question by question: "
          "questions up ↑ / down ↓, sign test p)\n")
    print("| dataset (questions) | with | without | R@5 | R@10 | R@15 | EM | the paper: with / without |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        with_ = " / ".join(f"{v:.1f}" for v in r.with_.values())
        without = " / ".join(f"{v:.1f}" for v in r.without.values())
        by = {m.name: m for m in r.paired}
        paper = ("; ".join(" / ".join(f"{x:.1f}" for x in side) for side in r.paper) if r.paper else "—")
        print(f"| {r.dataset} ({r.questions}) | {with_} | {without} | "
              + " | ".join(p_text(by[n]) if n in by else "—" for n in ("R@5", "R@10", "R@15", "EM"))
              + f" | {paper} |")


def density_table(dataset: str, table: pa.DensityTable) -> None:
    print(f"\n**R@{table.k} by triple density ρ_t, {dataset}** (questions per band: "
          + ", ".join(f"{b} {n}" for b, n in zip(table.bands, table.questions, strict=True))
          + f"; ρ_t of the gold passages {table.mean_density:.2f}, of every passage {table.passages_density:.2f}"
          + ("; the paper's in brackets" if dataset == "MuSiQue" else "") + ")\n")
    print("| method | " + " | ".join(table.bands) + " | std across bands |")
    print("| --- |" + " --- |" * (len(table.bands) + 1))
    for row in table.rows:
        paper = pa.PAPER_DENSITY.get(row.label) if dataset == "MuSiQue" else None
        cells = [("—" if v is None else f"{v:.1f}") + (f" [{paper[i]:.1f}]" if paper else "")
                 for i, v in enumerate(row.recall)]
        spread = ("—" if row.spread is None else f"{row.spread:.2f}") + (f" [{statistics.pstdev(paper):.2f}]"
                                                                          if paper else "")
        print(f"| {row.label} | " + " | ".join(cells) + f" | {spread} |")


def error_table(table: pa.ErrorTable) -> None:
    def ours(questions: Sequence[str]) -> str:
        return str(len(questions)) if questions else "0"

    print(f"\n**Error types, the paper's 20 problematic MuSiQue runs beside ours** ({table.label}, "
          f"`docs/evals/{table.report}.json`: of {table.questions} questions, {table.missed} runs missed a gold "
          f"passage within k = {table.k} — the paper's criterion — and {table.failed} missed one or answered wrong "
          "(EM 0); each counted by its diagnosis's primary category)\n")
    print(f"| the paper's error type | the paper (of 20) | today's category | ours: missed a gold passage "
          f"(of {table.missed}) | ours: failed (of {table.failed}) |")
    print("| --- | --- | --- | --- | --- |")
    for row in table.rows:
        paper = "— (no row)" if row.paper_type is None else row.paper_type
        count = "—" if row.paper is None else f"{row.paper} ({100 * row.paper / 20:.0f} %)"
        print(f"| {paper} | {count} | {row.label} | {ours(row.missed)} | {ours(row.failed)} |")
    if table.undetermined:
        missed = sum(1 for *_, lost in table.undetermined if lost)
        between = "; ".join(f"{qid}: {' / '.join(c)}" for qid, c, _ in table.undetermined)
        print(f"| — | — | undetermined ({between}) | {missed} | {len(table.undetermined)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--evals", type=Path, default=ROOT / "docs" / "evals")
    parser.add_argument("--indexes", type=Path, default=ROOT / "data" / "indexes")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures")
    parser.add_argument("--errors", action="store_true", help="print the error table alone (no figures, no index)")
    args = parser.parse_args()
    errors = pa.error_table(args.evals)
    if errors is not None:
        error_table(errors)
    if args.errors:
        return
    args.out.mkdir(parents=True, exist_ok=True)

    for name, figure in ((pa.GRID, "musique_grid"), (pa.GRID_SMALL, "")):
        grid = pa.read_sweep(args.evals, name)
        if grid is None:
            continue
        grid_table(grid)
        if figure:
            for k in grid.ks[::2]:  # R@5 and R@15
                save(sweep_heatmap(grid, f"R@{k}", "beam_length", "max_iterations"), args.out / f"{figure}_r{k}.png")
    four = pa.four_iterations(args.evals)
    if four:
        line = pa.sync_line(args.evals, 15)
        curves_table("R@k across 4 iterations, MuSiQue subset", four, line)
        save(iteration_recall_figure(four, 15, [line] if line else [],
                                     "R@15 across iterations, MuSiQue (20 questions)"),
             args.out / "musique_recall_iterations.png")
        single = pa.sync_tokens(args.evals)
        tokens_table(four[:2], single)
        save(iteration_tokens_figure(four[:2], [single] if single else [],
                                     "Tokens spent by the end of each iteration, MuSiQue (20 questions)"),
             args.out / "musique_tokens_iterations.png")
    twenty = pa.twenty_iterations(args.evals)
    if twenty:
        grid20 = pa.read_sweep(args.evals, pa.GEAR_20)
        line = pa.sync_line(args.evals, 15, grid20.questions if grid20 else None)
        curves_table("R@k across 20 iterations, MuSiQue subset", twenty, line)
        save(iteration_recall_figure(twenty, 15, [line] if line else [],
                                     f"R@15 across 20 iterations, MuSiQue ({twenty[0].questions} questions)"),
             args.out / "musique_recall_20_iterations.png")
    diversity = pa.diversity_rows(args.evals)
    if diversity:
        diversity_table(diversity)
    for dataset, table in pa.density_tables(args.evals, args.indexes).items():
        density_table(dataset, table)


if __name__ == "__main__":
    main()
