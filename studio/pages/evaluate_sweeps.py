"""The Evaluate page's tab of sweeps and of the paper's analyses beyond Table 1: a `gear sweep`'s grid as a heatmap of
any measure over two swept settings, with its table and each cell's paired numbers against the baseline cell; then the
paper's analyses drawn from the bundled reports — R@15 and tokens across iterations, diversity, triple density — with
the figures and numbers of docs/results.md (gear.eval.paper_analyses and gear.viz.analyses, which
scripts/paper_figures.py exports). Sweep files are untrusted input: decoded by their schema, every name escaped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from gear.eval import paper_analyses as pa
from gear.eval.sweep import Sweep, SweepError, load_sweep
from gear.viz.analyses import iteration_recall_figure, iteration_tokens_figure, measures, sweep_heatmap
from studio.core import paths
from studio.core.safe import esc_md, one_line

BUNDLED = paths.ROOT / "docs" / "evals"


def sweeps_dir() -> Path:
    """Where a person's sweeps are listed from: the data folder's sweeps/ (`gear sweep … --json data/sweeps/x.json`)."""
    return paths.data_dir() / "sweeps"


def sweep_files() -> dict[str, Path]:
    """A person's sweeps (newest first), then the project's bundled ones (docs/evals/sweeps)."""
    found: dict[str, Path] = {}
    mine = sweeps_dir()
    if mine.is_dir():
        for path in sorted(mine.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True):
            found[path.stem] = path
    for path in sorted((BUNDLED / "sweeps").glob("*.json")):
        found.setdefault(f"bundled: {path.stem}", path)
    return found


@st.cache_data(show_spinner=False, max_entries=32)
def _load(path: str, mtime: float) -> Sweep:
    return load_sweep(Path(path))


def sweeps_and_analyses() -> None:
    sweep_view()
    st.divider()
    paper_analyses()


def sweep_view() -> None:
    st.subheader("A sweep's grid")
    files = sweep_files()
    if not files:
        st.info("No sweeps yet: `gear sweep INDEX QA --method M --set NAME=V1,V2 --json "
                f"{esc_md(paths.shown(sweeps_dir()))}/NAME.json` runs one, cell by cell.")
        return
    name = st.selectbox("Sweep", list(files), key="sweep_file",
                        help="`gear sweep` writes one file per grid and each cell's report in the folder of the same "
                             "name beside it; yours are listed from " + paths.shown(sweeps_dir()) + "/.")
    path = files[str(name)]
    try:
        sweep = _load(str(path), path.stat().st_mtime)
    except (SweepError, OSError) as exc:
        st.error(esc_md(one_line(exc)))
        return
    if not sweep.cells:
        st.info("This sweep has no finished cell yet.")
        return
    axes = [a.name for a in sweep.axes]
    c = st.columns(3)
    measure = c[0].selectbox("Measure", measures(sweep), key="sweep_measure", index=min(
        len(sweep.ks) - 1, len(measures(sweep)) - 1))
    rows = c[1].selectbox("Rows", axes, key="sweep_rows", index=len(axes) - 1)
    others = [a for a in axes if a != rows]
    columns = c[2].selectbox("Columns", others, key="sweep_columns") if others else None
    baseline = sweep.cell(sweep.baseline)
    fixed: dict[str, Any] = {}
    held = [a for a in sweep.axes if a.name not in (rows, columns)]
    if held:
        for box, axis in zip(st.columns(len(held)), held, strict=True):
            default = baseline.values.get(axis.name) if baseline else axis.values[0]
            fixed[axis.name] = box.selectbox(f"{axis.name} held at", axis.values, key=f"sweep_fixed_{axis.name}",
                                             index=axis.values.index(default) if default in axis.values else 0)
    st.plotly_chart(sweep_heatmap(sweep, str(measure), str(rows), columns, fixed), width="stretch",
                    key="fig_sweep")
    st.caption(esc_md(f"{sweep.retriever} · {sweep.method} on {sweep.index}, {len(sweep.questions)} questions "
                      f"({sweep.protocol} protocol); each cell against the baseline ({sweep.baseline}): the "
                      "difference in points, * where the sign test's p < 0.05, and how many questions went up ↑ and "
                      "down ↓."))
    st.dataframe(pd.DataFrame(sweep_rows(sweep)), hide_index=True, width="stretch")
    with st.expander("Each cell against the baseline, question by question"):
        for cell in sweep.cells:
            if cell.paired:
                st.markdown(f"**{esc_md(cell.name)}**: " + "; ".join(esc_md(m.sentence) for m in cell.paired))
            elif cell.pairing_note:
                st.caption(f"{esc_md(cell.name)}: {esc_md(cell.pairing_note)}")


def sweep_rows(sweep: Sweep) -> list[dict[str, Any]]:
    """The sweep's table, one row per cell: its values, R@k, EM/F1, tokens and seconds per question, ΔR@k."""
    out = []
    for cell in sweep.cells:
        row: dict[str, Any] = {a.name: str(cell.values.get(a.name)) for a in sweep.axes}
        row.update({f"R@{k}": round(cell.recall.get(str(k), 0.0), 1) for k in sweep.ks})
        row["EM"] = None if cell.em is None else round(cell.em, 1)
        row["F1"] = None if cell.f1 is None else round(cell.f1, 1)
        row["tokens/question"] = round(cell.tokens_per_question)
        row["s/question"] = round(cell.seconds_per_question, 1)
        paired = {m.name: m for m in cell.paired}
        for k in sweep.ks:
            m = paired.get(f"R@{k}")
            row[f"ΔR@{k}"] = "baseline" if cell.name == sweep.baseline else (
                "—" if m is None else f"{m.difference:+.1f} ({m.better}↑ {m.worse}↓)")
        out.append(row)
    return out


@st.cache_data(show_spinner=False, max_entries=8)
def _analyses(evals: str, indexes: str, built: tuple[str, ...]) -> dict[str, Any]:
    """The analyses' numbers, once per set of demo indexes built (`built`: the density tables read their triples)."""
    root = Path(evals)
    return {"four": pa.four_iterations(root), "twenty": pa.twenty_iterations(root), "line": pa.sync_line(root, 15),
            "tokens": pa.sync_tokens(root), "diversity": pa.diversity_rows(root),
            "density": pa.density_tables(root, Path(indexes)), "grid20": pa.read_sweep(root, pa.GEAR_20)}


def paper_analyses() -> None:
    st.subheader("The paper's analyses beyond Table 1")
    st.caption("On the project's recorded runs (docs/results.md, “The paper's analyses beyond Table 1”; the same "
               "figures as docs/figures/, from scripts/paper_figures.py). MuSiQue: the 20-question subset; the grid "
               "of max iterations × beam length is the bundled sweep above.")
    indexes = paths.indexes_dir()
    built = tuple(name for _, name, _ in pa.DENSITY if (indexes / name / pa.COUNTS_FILE).is_file())
    data = _analyses(str(BUNDLED), str(indexes), built)
    if data["four"]:
        st.plotly_chart(iteration_recall_figure(data["four"], 15, [data["line"]] if data["line"] else [],
                                                "R@15 across iterations, MuSiQue (20 questions)"),
                        width="stretch", key="fig_paper_iterations")
        st.plotly_chart(iteration_tokens_figure(data["four"][:2], [data["tokens"]] if data["tokens"] else [],
                                                "Tokens spent by the end of each iteration, MuSiQue (20 questions)"),
                        width="stretch", key="fig_paper_tokens")
    if data["twenty"]:
        grid20 = data["grid20"]
        line = pa.sync_line(BUNDLED, 15, grid20.questions if grid20 else None)
        st.plotly_chart(iteration_recall_figure(data["twenty"], 15, [line] if line else [],
                                                f"R@15 across 20 iterations, MuSiQue ({data['twenty'][0].questions} "
                                                "questions)"), width="stretch", key="fig_paper_20")
    if data["diversity"]:
        st.markdown("**Hybrid + SyncGE with and without the diversity penalty** (with − without, question by "
                    "question)")
        st.dataframe(pd.DataFrame([diversity_row(r) for r in data["diversity"]]), hide_index=True, width="stretch")
    for dataset, table in data["density"].items():
        st.markdown(f"**R@{table.k} by triple density ρ_t, {esc_md(dataset)}** (ρ_t: the mean triples of a "
                    f"question's gold passages in the index; gold passages {table.mean_density:.2f} on average, "
                    f"every passage {table.passages_density:.2f})")
        rows = [{"method": row.label, **{f"{b} (n={n})": None if v is None else round(v, 1)
                                         for b, n, v in zip(table.bands, table.questions, row.recall, strict=True)},
                 "std across bands": None if row.spread is None else round(row.spread, 2)} for row in table.rows]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    if not data["density"]:
        st.caption("The density tables appear once the demo indexes they read triples from are built (pick "
                   "“musique”, “2wiki” or “hotpotqa” in the sidebar).")
    st.caption("The error table (20 problematic MuSiQue runs by category) waits for the diagnosis's categories to "
               "agree with an analyst; see docs/results.md.")


def diversity_row(r: pa.DiversityRow) -> dict[str, Any]:
    by = {m.name: m for m in r.paired}
    row: dict[str, Any] = {"dataset": r.dataset, "questions": r.questions,
                           "with": " / ".join(f"{v:.1f}" for v in r.with_.values()),
                           "without": " / ".join(f"{v:.1f}" for v in r.without.values())}
    for name in ("R@5", "R@10", "R@15", "EM"):
        m = by.get(name)
        row[name] = "—" if m is None else f"{m.difference:+.1f} ({m.better}↑ {m.worse}↓)"
    row["the paper: with / without"] = (" ; ".join(" / ".join(f"{x:.1f}" for x in side) for side in r.paper)
                                        if r.paper else "—")
    return row
