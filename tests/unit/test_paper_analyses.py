"""The paper's analyses beyond Table 1 (gear.eval.iterations, gear.eval.density, gear.eval.paper_analyses,
gear.viz.analyses): a run's ranking after each iteration is the one a run capped there returns, tokens by iteration
add up to the run's, ρ_t bands and their spread as the paper computes them, the diversity rows paired question by
question, and the heatmap of a sweep."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.questions import load_qa
from gear.eval import paper_analyses as pa
from gear.eval.density import BANDS, band_label, band_of, densities, density_table
from gear.eval.iterations import curves, last_iteration, ranking_after, recall_by_iteration, tokens_by_iteration
from gear.eval.sweep import Axis, CellRecord, Sweep, run_sweep
from gear.events import FinalRanking, RunStarted
from gear.trace import Trace
from gear.viz.analyses import iteration_recall_figure, iteration_tokens_figure, sweep_heatmap

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "docs" / "evals"
TRACED = ("dev50_every2_n20_gear_paper", "dev50_every2_n20_ircot_ppr", "dev50_every2_n20_gear_small")


@pytest.fixture(scope="module")
def traces() -> dict[str, list[Trace]]:
    return {stem: pa.traces_in(EVALS / stem / "traces") for stem in TRACED}


def test_the_ranking_after_the_last_iteration_is_the_runs_final_ranking(traces) -> None:
    for stem, runs in traces.items():
        assert len(runs) == 20, stem
        for t in runs:
            final = [p.id for p in t.first(FinalRanking).passages]  # type: ignore[union-attr]
            assert ranking_after(t, last_iteration(t))[:len(final)] == final, (stem, t.question)


def test_recall_after_n_is_carried_forward_past_a_runs_last_iteration(traces) -> None:
    runs = traces["dev50_every2_n20_gear_paper"]
    stopped = next(t for t in runs if last_iteration(t) == 1)
    going = next(t for t in runs if last_iteration(t) == 4)
    assert len({json.dumps(r) for r in recall_by_iteration(stopped, [5, 15], 4)}) == 1
    gold = going.first(RunStarted).gold_passage_ids  # type: ignore[union-attr]
    by_n = recall_by_iteration(going, [15], 4)
    assert by_n[0]["15"] == sum(g in ranking_after(going, 1)[:15] for g in gold) / len(gold)


def test_tokens_by_iteration_add_up_to_the_runs_tokens(traces) -> None:
    for t in traces["dev50_every2_n20_gear_paper"] + traces["dev50_every2_n20_ircot_ppr"]:
        by_n = tokens_by_iteration(t, 4)
        answer = t.tokens(step="qa")
        assert (by_n[-1][0] + answer[0], by_n[-1][1] + answer[1]) == t.tokens()
        assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in itertools.pairwise(by_n))


def test_curves_average_over_runs_and_total_the_tokens(traces) -> None:
    runs = traces["dev50_every2_n20_gear_paper"]
    report = json.loads((EVALS / "dev50_every2_n20_gear_paper.json").read_text())
    c = curves("GeAR", runs, [5, 10, 15], 4)
    assert c.recall[-1] == pytest.approx(report["recall"])  # after the last iteration: the report's own R@k
    assert c.running[0] == 20 and c.running[-1] == sum(q["iterations"] == 4 for q in report["per_question"])
    total = sum(q["prompt_tokens"] + q["completion_tokens"] for q in report["per_question"])
    assert c.prompt_tokens[-1] + c.completion_tokens[-1] + sum(c.answer_tokens) == total


@pytest.mark.parametrize(("value", "band"), [(0.0, 0), (8.99, 0), (9.0, 1), (10.99, 1), (11.0, 2), (13.0, 3),
                                             (40.0, 3)])
def test_a_density_falls_in_the_papers_bands(value: float, band: int) -> None:
    assert band_of(value) == band
    assert [band_label(b) for b in BANDS] == ["ρ_t < 9", "9 ≤ ρ_t < 11", "11 ≤ ρ_t < 13", "13 ≤ ρ_t"]


def _report(recalls: dict[str, float], gold: dict[str, list[int]]) -> dict:
    return {"per_question": [{"id": q, "recall": {"15": r}, "diagnosis": {"passages": [{"id": i} for i in gold[q]]}}
                             for q, r in recalls.items()]}


def test_the_density_table_bands_questions_by_their_gold_passages_triples() -> None:
    counts = np.array([2, 8, 10, 12, 20, 14])
    gold = {"a": [0, 1], "b": [2], "c": [3, 4], "d": [5]}  # ρ_t 5, 10, 16, 14
    assert densities(counts, gold) == {"a": 5.0, "b": 10.0, "c": 16.0, "d": 14.0}
    table = density_table({"one": _report({"a": 1.0, "b": 0.5, "c": 0.0, "d": 1.0}, gold),
                           "two": _report({"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}, gold)}, counts)
    assert table.questions == [1, 1, 0, 2]
    one, two = table.rows
    assert one.recall == [100.0, 50.0, None, 50.0]
    assert one.spread == pytest.approx(float(np.std([100.0, 50.0, 50.0])))  # the band means, ddof 0 (the paper's)
    assert two.spread == 0.0
    assert table.mean_density == pytest.approx(np.mean(counts[[0, 1, 2, 3, 4, 5]]))
    with pytest.raises(ValueError, match="same questions"):
        density_table({"one": _report({"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0}, gold),
                       "short": _report({"a": 1.0}, gold)}, counts)


def test_the_papers_spread_is_the_population_std_of_its_four_band_means() -> None:
    # Table 8's Hybrid + SyncGE and Hybrid + NaiveGE rows give the 1.18 and 2.04 of its §5.2
    assert float(np.std(pa.PAPER_DENSITY["Hybrid + SyncGE"])) == pytest.approx(1.18, abs=0.005)
    assert float(np.std(pa.PAPER_DENSITY["Hybrid + NaiveGE"])) == pytest.approx(2.04, abs=0.005)


def test_the_diversity_rows_pair_the_bundled_reports() -> None:
    rows = {r.dataset: r for r in pa.diversity_rows(EVALS)}
    assert {"2Wiki", "HotpotQA"} <= set(rows)
    hotpot = rows["HotpotQA"]
    with_ = json.loads((EVALS / "hotpotqa_every1_n100_sync.json").read_text())
    without = json.loads((EVALS / "hotpotqa_every1_n100_sync_nodiv.json").read_text())
    assert hotpot.with_ == {k: with_["recall"][k] for k in ("5", "10", "15")}
    r5 = next(m for m in hotpot.paired if m.name == "R@5")
    assert r5.difference == pytest.approx(with_["recall"]["5"] - without["recall"]["5"])
    assert [m.name for m in hotpot.paired] == ["R@5", "R@10", "R@15", "EM", "F1"]


def _sweep(tiny_index: Path, make_encoder, tmp_path: Path) -> Sweep:
    engine = Engine.open(tiny_index, Settings(_env_file=None), encoder=make_encoder())
    questions = load_qa(ROOT / "tests" / "fixtures" / "qa_musique.json")[0]
    return run_sweep(engine, questions, Settings(_env_file=None).with_(retriever="bm25", method="naive"),
                     [Axis("beam_length", (1, 2)), Axis("beam_width", (2, 10))], [2, 5], tmp_path / "s.json",
                     protocol="one-run", index="tiny")


def test_the_heatmap_shows_each_cells_value_and_its_difference(tiny_index: Path, make_encoder,
                                                               tmp_path: Path) -> None:
    sweep = _sweep(tiny_index, make_encoder, tmp_path)
    fig = sweep_heatmap(sweep, "R@5", "beam_length", "beam_width").to_dict()
    heat = fig["data"][0]
    assert list(heat["y"]) == ["1", "2"] and list(heat["x"]) == ["2", "10"]
    for i, length in enumerate((1, 2)):
        for j, width in enumerate((2, 10)):
            cell = next(c for c in sweep.cells if c.values == {"beam_length": length, "beam_width": width})
            assert heat["z"][i][j] == pytest.approx(cell.recall["5"])
    assert "baseline" in heat["text"][1][1]  # beam_length 2, width 10: the paper's setting
    one_axis = sweep_heatmap(sweep, "R@2", "beam_width").to_dict()["data"][0]  # beam_length held at the baseline's
    assert len(one_axis["z"]) == 2 and len(one_axis["z"][0]) == 1


def test_untrusted_names_in_a_sweep_are_escaped_in_its_heatmap() -> None:
    evil = "<img src=x onerror=alert(1)>"
    cell = CellRecord(name=f"x={evil}", values={"x": evil}, report="s/c.json", n_questions=1, recall={"5": 50.0})
    sweep = Sweep(index=evil, method="naive", retriever="bm25", protocol="one-run", ks=[5],
                  axes=[{"name": "x", "values": [evil]}], questions=["q"], baseline=cell.name, cells=[cell])
    html = json.dumps(sweep_heatmap(sweep, "R@5", "x").to_dict())
    assert "<img" not in html and "&lt;img" in html


def test_the_iteration_figures_draw_every_method_and_the_single_step_line(traces) -> None:
    runs = [curves(stem, t, [15], 4) for stem, t in traces.items()]
    fig = iteration_recall_figure(runs, 15, [("Hybrid + SyncGE", 80.0)]).to_dict()
    assert [d["name"] for d in fig["data"]] == [*traces, "Hybrid + SyncGE"]
    assert fig["data"][-1]["y"] == [80.0, 80.0]
    tokens = iteration_tokens_figure(runs[:2], [("Hybrid + SyncGE", 100, 5)]).to_dict()
    assert tokens["data"][0]["y"] == runs[0].prompt_tokens and tokens["data"][1]["y"] == runs[0].completion_tokens
    assert [d["x"] for d in tokens["data"][-2:]] == [[0.5], [0.5]]


def test_each_datasets_density_table_reads_its_four_reports(tmp_path: Path) -> None:
    for _, index, _ in pa.DENSITY:  # stand-in counts: 10 triples on every passage of an index this large
        (tmp_path / index).mkdir()
        np.save(tmp_path / index / "triples_per_passage.npy", np.full(5000, 10, dtype=np.int32))
    tables = pa.density_tables(EVALS, tmp_path)
    assert set(tables) == {"MuSiQue", "2Wiki", "HotpotQA"}
    assert [sum(t.questions) for t in tables.values()] == [20, 82, 100]
    assert all(t.questions[1] == sum(t.questions) for t in tables.values())  # ρ_t = 10: every question in 9–11
    assert [row.label for row in tables["MuSiQue"].rows] == list(pa.PAPER_DENSITY)
    gear = json.loads((EVALS / "dev50_every2_n20_gear_paper.json").read_text())
    assert tables["MuSiQue"].rows[-1].recall[1] == pytest.approx(gear["recall"]["15"])


RESULTS = ROOT / "docs" / "results.md"
SECTION = "## The paper's analyses beyond Table 1"


def _section() -> str:
    text = RESULTS.read_text(encoding="utf-8")
    return text[text.index(SECTION):]


def _triple(recall: dict[str, float]) -> str:
    return " / ".join(f"{recall[k]:.1f}" for k in ("5", "10", "15"))


def test_the_results_section_prints_the_bundled_runs_numbers() -> None:
    """docs/results.md's tables of this section are what the bundled sweeps, reports and traces give
    (scripts/paper_figures.py prints them)."""
    section = _section()
    grid = pa.read_sweep(EVALS, pa.GRID)
    assert grid is not None
    for cell in grid.cells:
        assert _triple(cell.recall) in section, cell.name
        assert f"{cell.tokens_per_question:,.0f}" in section, cell.name
    for curve in pa.four_iterations(EVALS):
        row = " | ".join(f"{_triple(r)} ({n})" for r, n in zip(curve.recall, curve.running, strict=True))
        assert row in section, curve.label
    gear, ircot = pa.four_iterations(EVALS)[:2]
    for c in (gear, ircot):
        tokens = " | ".join(f"{p:,} / {o:,}" for p, o in zip(c.prompt_tokens, c.completion_tokens, strict=True))
        assert f"{tokens} | {c.answer_tokens[0]:,} / {c.answer_tokens[1]:,} |" in section, c.label
    single = pa.sync_tokens(EVALS)
    assert single is not None and f"{single[1]:,} / {single[2]:,}" in section
    for row in pa.diversity_rows(EVALS):
        assert f"| {row.dataset} ({row.questions}) | {_triple(row.with_)} | {_triple(row.without)} |" in section


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_readmes_results_lines_link_to_this_sections_headings() -> None:
    anchors = {_slug(line.lstrip("#")) for line in RESULTS.read_text(encoding="utf-8").splitlines()
               if line.startswith("#")}
    links = re.findall(r"\(docs/results\.md#([^)]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(links) >= 6
    assert [a for a in links if a not in anchors] == []


def test_the_results_section_prints_the_bundled_error_table() -> None:
    """The error table beside the paper's is what the subset's GeAR report's diagnoses give
    (scripts/paper_figures.py --errors prints it)."""
    section = _section()
    table = pa.error_table(EVALS)
    assert table is not None
    assert f"{table.missed} runs missed a gold passage within k = {table.k}" in section
    assert f"{table.failed} missed one or answered wrong" in section
    for row in table.rows:
        paper = "— (no row) | —" if row.paper is None else f"{row.paper_type} | {row.paper} ("
        assert paper in section, row.category
        assert f"| {row.label} | {len(row.missed)} | {len(row.failed)} |" in section, row.category


def _diagnosed(qid: str, recall: float, em: float, category: str | None, between: tuple[str, ...] = ()) -> dict:
    return {"id": qid, "recall": {"5": recall, "15": 1.0}, "em": em,
            "diagnosis": {"category": category, "undetermined": list(between)}}


def test_the_error_table_counts_failing_runs_by_primary_category(tmp_path: Path) -> None:
    runs = [_diagnosed("a", 0.5, 0.0, "reader"), _diagnosed("b", 0.5, 1.0, "graph"),
            _diagnosed("c", 1.0, 0.0, "answer"), _diagnosed("d", 1.0, 1.0, "none"),
            _diagnosed("e", 0.0, 0.0, None, ("reader", "graph")), _diagnosed("f", 1.0, 0.0, "none")]
    report = {"method": "gear", "recall": {"5": 0.0, "15": 0.0}, "per_question": runs}
    (tmp_path / f"{pa.ERRORS[1]}.json").write_text(json.dumps(report), encoding="utf-8")
    table = pa.error_table(tmp_path)
    assert table is not None and (table.k, table.questions, table.missed, table.failed) == (5, 6, 3, 5)
    rows = {row.category: row for row in table.rows}
    assert [r.category for r in table.rows[:6]] == [c for _, c, _ in pa.PAPER_ERRORS]
    assert (rows["reader"].missed, rows["reader"].failed) == (("a",), ("a",))
    assert (rows["graph"].missed, rows["graph"].failed) == (("b",), ("b",))
    assert rows["base_retriever"].failed == ()
    assert (rows["answer"].paper, rows["answer"].missed, rows["answer"].failed) == (None, (), ("c",))
    assert rows["none"].failed == ("f",) and "ranking" not in rows  # a category no failing run has is left out
    assert table.undetermined == (("e", ("reader", "graph"), True),)
    assert sum(r.paper or 0 for r in table.rows) == 20
