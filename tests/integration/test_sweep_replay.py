"""The paper's analyses beyond Table 1, pinned: each bundled sweep (docs/evals/sweeps/*.json, scripts/paper_analyses.sh)
is run again cell by cell over the answers it recorded (assets/llm_cache, replay only: a prompt that differs from the
recorded one fails loudly), each cell with an empty memo as when it was recorded, and every question replayed must
give the same recall, answer, EM/F1, iterations and tokens as in its cell's bundled report. For CI's time a quarter of
each sweep's questions are replayed (every REPLAYED_EVERY-th; GEAR_REPLAY_ALL=1 replays them all); every cell's
table row and paired numbers are then held to its report, all questions, without a model.

The l = 2 column of the grid is also held to the n = 4 run's own trace: a run capped at n iterations ranks what the
n = 4 run had after n (gear.eval.iterations), which is what lets n < 4 replay from the n = 4 recordings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gear import methods
from gear.agent.engine import Engine
from gear.config import BUNDLED_LLM_CACHE, Settings
from gear.eval.iterations import recall_by_iteration
from gear.eval.paper_analyses import GRID, traces_in
from gear.eval.sweep import Axis, cell_slug, load_sweep, paired_records, read_cell_report, run_sweep, summary
from gear.events import RunStarted
from gear.llm import LLMError, MemoLLM, make_llm
from tests.integration.conftest import TIE_PROBE, ties_as_recorded

EVALS = Path(__file__).resolve().parents[2] / "docs" / "evals"
SWEEPS = sorted((EVALS / "sweeps").glob("*.json"))
REPLAYED_EVERY = 1 if os.environ.get("GEAR_REPLAY_ALL") == "1" else 4
COMPARED = ("answer", "em", "f1", "iterations", "prompt_tokens", "completion_tokens", "llm_calls", "memo_calls")

pytestmark = pytest.mark.slow


def _base(sweep) -> Settings:
    """The sweep's base settings as far as its method reads them (the model's own configuration aside)."""
    reads = {"method", "retriever", *methods.get(sweep.method).settings}
    return Settings(_env_file=None).with_(**{k: v for k, v in sweep.settings.items() if k in reads},
                                          llm="replay", llm_cache_dir=BUNDLED_LLM_CACHE)


@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: p.stem)
def test_each_recorded_sweep_replays_cell_by_cell(path: Path, musique: Engine, questions, tmp_path: Path) -> None:
    sweep = load_sweep(path)
    assert sweep.index == "musique", f"{path.name}: a sweep over another index needs its fixture here"
    by_id = {q.id: q for q in questions}
    assert set(sweep.questions) <= set(by_id), f"{path.name}: its questions are not in the bundled file"
    replayed = [by_id[qid] for qid in sweep.questions[::REPLAYED_EVERY]]

    def fresh(settings: Settings) -> None:
        replay = settings.with_(llm="replay", llm_cache_dir=BUNDLED_LLM_CACHE, llm_model=None)  # the recorded model
        musique.set_llm(settings, MemoLLM(make_llm(replay)))

    for recorded in sweep.cells:  # each cell on its own (a sweep cut short holds only some cells of its grid)
        out = tmp_path / f"{cell_slug(recorded.values)}.json"
        try:
            again = run_sweep(musique, replayed, _base(sweep), [Axis(k, (v,)) for k, v in recorded.values.items()],
                              sweep.ks, out, protocol=sweep.protocol, index=sweep.index, fresh=fresh)
        except LLMError as exc:
            if not ties_as_recorded():
                pytest.skip(f"{path.name}: this CPU orders tied scores otherwise than the recording's (probe: "
                            f"{TIE_PROBE[2]!r} before {TIE_PROBE[1]!r}), so a prompt differs: {str(exc)[:120]}")
            raise
        before = {q["id"]: q for q in read_cell_report(path, recorded)["per_question"]}
        for row in read_cell_report(out, again.cells[0])["per_question"]:
            kept = before[row["id"]]
            assert row["recall"] == pytest.approx(kept["recall"]), (recorded.name, row["id"])
            assert {key: row[key] for key in COMPARED} == {key: kept[key] for key in COMPARED}, \
                (recorded.name, row["id"])


@pytest.mark.parametrize("path", SWEEPS, ids=lambda p: p.stem)
def test_each_sweeps_table_is_its_cells_reports(path: Path) -> None:
    """Every row of a sweep's table — R@k, EM/F1, tokens, seconds, iterations — is its cell's report over all the
    sweep's questions, and its paired numbers are the report against the baseline's, question by question."""
    sweep = load_sweep(path)
    baseline = sweep.cell(sweep.baseline)
    assert baseline is not None and baseline.paired == []
    reference = read_cell_report(path, baseline)
    for cell in sweep.cells:
        report = read_cell_report(path, cell)
        assert [q["id"] for q in report["per_question"]] == sweep.questions, cell.name
        for key, value in summary(report).items():
            assert getattr(cell, key) == pytest.approx(value), (cell.name, key)
        if cell is not baseline:
            paired, _ = paired_records(reference, report, sweep.ks)
            assert [m.model_dump() for m in cell.paired] == [m.model_dump() for m in paired], cell.name


def test_a_run_capped_at_n_ranks_what_the_uncapped_run_had_after_n() -> None:
    """The grid's l = 2 cells against the n = 4 run's kept traces (docs/evals/dev50_every2_n20_gear_paper/traces: the
    run the n = 4 cell replays), question by question; no model, no index."""
    sweep = load_sweep(EVALS / GRID)
    runs = {t.first(RunStarted).question_id: t for t in traces_in(EVALS / "dev50_every2_n20_gear_paper" / "traces")}
    assert sorted(runs) == sorted(sweep.questions)
    column = [c for c in sweep.cells if c.values.get("beam_length") == 2]
    assert sorted(int(c.values["max_iterations"]) for c in column) == [1, 2, 3, 4]  # type: ignore[arg-type]
    for cell in column:
        n = int(cell.values["max_iterations"])  # type: ignore[arg-type]
        for row in read_cell_report(EVALS / GRID, cell)["per_question"]:
            derived = recall_by_iteration(runs[row["id"]], sweep.ks, n)[-1]
            assert row["recall"] == pytest.approx(derived), (cell.name, row["id"])


def test_there_are_recorded_sweeps_to_replay() -> None:
    assert SWEEPS, "no docs/evals/sweeps/*.json: run scripts/paper_analyses.sh"
