"""`gear sweep` and gear.eval.sweep: every combination of the values given is one evaluation exactly as `gear eval`
makes it, kept as its own report; a sweep resumes cell by cell; every cell is paired with a baseline cell; a cell's
probe says, before it runs, how much of it the recordings hold."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gear.agent.engine import Engine
from gear.agent.recorded import probe_cell, recorded_reach
from gear.cli import app
from gear.config import Settings
from gear.data.questions import load_qa
from gear.eval import sweep as sweep_module
from gear.eval.report import evaluate
from gear.eval.sweep import (
    Axis,
    SweepError,
    cell_label,
    grid,
    load_sweep,
    parse_axis,
    read_cell_report,
    run_sweep,
)
from gear.llm import CachedLLM, MemoLLM
from tests.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
QA = ROOT / "tests" / "fixtures" / "qa_musique.json"
WIDE = {"COLUMNS": "400"}


@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(_env_file=None), encoder=make_encoder())


@pytest.fixture
def questions():
    return load_qa(QA)[0]


def test_a_setting_and_its_values_are_read_as_settings_reads_them() -> None:
    base = Settings(_env_file=None)
    assert parse_axis("beam_length=1, 2,3", base) == Axis("beam_length", (1, 2, 3))
    assert parse_axis("diversity=true,false", base) == Axis("diversity", (True, False))
    assert parse_axis("max-iterations=4", base) == Axis("max_iterations", (4,))
    assert parse_axis("expand=naive,sync", base) == Axis("method", ("naive", "sync"))  # an old name: the new one


@pytest.mark.parametrize(("text", "needle"), [
    ("beam_length", "write NAME=V1,V2"),
    ("beam_lenght=1,2", "'beam_lenght' is not a setting"),
    ("llm_api_key=a,b", "is a secret"),
    ("beam_length=0,1", "beam_length='0'"),
    ("beam_length=1,1", "given twice"),
    ("method=naive,nothing", "method='nothing'"),
])
def test_a_wrong_axis_is_one_line_naming_it(text: str, needle: str) -> None:
    with pytest.raises(SweepError, match=None) as caught:
        parse_axis(text, Settings(_env_file=None))
    assert needle in str(caught.value)


def test_the_grid_is_every_combination_first_axis_slowest() -> None:
    cells = grid([Axis("max_iterations", (1, 2)), Axis("beam_length", (1, 2, 3))])
    assert [cell_label(c) for c in cells] == [f"max_iterations={n} beam_length={b}" for n in (1, 2)
                                              for b in (1, 2, 3)]
    with pytest.raises(SweepError, match="swept twice"):
        grid([Axis("beam_length", (1,)), Axis("beam_length", (2,))])


def test_each_cell_is_the_evaluation_gear_eval_makes(engine: Engine, questions, tmp_path: Path) -> None:
    base = Settings(_env_file=None).with_(retriever="bm25", method="naive")
    axes = [Axis("beam_length", (1, 2)), Axis("diversity", (True, False))]
    result = run_sweep(engine, questions, base, axes, [2, 5], tmp_path / "s.json", protocol="paper", index="tiny")
    assert [c.name for c in result.cells] == [cell_label(c) for c in grid(axes)]
    assert result.baseline == "beam_length=2 diversity=true"  # the base settings' own values: the paper's
    for cell in result.cells:
        alone = evaluate(engine, questions, base.with_(**cell.values), [2, 5], protocol="paper").to_dict()
        saved = read_cell_report(tmp_path / "s.json", cell)
        assert saved["settings"] == alone["settings"]
        assert [q["recall"] for q in saved["per_question"]] == [q["recall"] for q in alone["per_question"]]
        assert cell.recall == pytest.approx(alone["recall"])
        if cell.name == result.baseline:
            assert cell.paired == []
        else:  # R@2, R@5 against the baseline, question by question
            assert [m.name for m in cell.paired] == ["R@2", "R@5"]
            base_recall = result.cell(result.baseline).recall  # type: ignore[union-attr]
            assert cell.paired[1].difference == pytest.approx(cell.recall["5"] - base_recall["5"])
            assert cell.paired[1].n == cell.n_questions == len(saved["per_question"])
    assert load_sweep(tmp_path / "s.json") == result


def test_a_sweep_resumes_cell_by_cell(engine: Engine, questions, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    base = Settings(_env_file=None).with_(retriever="bm25", method="naive")
    path = tmp_path / "s.json"
    first = run_sweep(engine, questions, base, [Axis("beam_length", (1, 2))], [5], path, protocol="one-run",
                      index="tiny")
    ran: list[int] = []
    real = sweep_module.evaluate

    def counted(engine, questions, settings, *args, **kwargs):
        ran.append(settings.beam_length)
        return real(engine, questions, settings, *args, **kwargs)

    monkeypatch.setattr(sweep_module, "evaluate", counted)
    again = run_sweep(engine, questions, base, [Axis("beam_length", (1, 2, 3))], [5], path, protocol="one-run",
                      index="tiny")
    assert ran == [3]  # the two cells done before are read back, the new one runs
    assert [c.resumed for c in again.cells] == [True, True, False]
    assert again.cells[0].recall == first.cells[0].recall
    assert again.cells[0].seconds == first.cells[0].seconds > 0  # what the earlier run measured is kept
    # other questions: nothing is reused
    ran.clear()
    more = [*questions, dataclasses.replace(questions[-1], id="another")]
    run_sweep(engine, more, base, [Axis("beam_length", (1, 2))], [5], path, protocol="one-run", index="tiny")
    assert ran == [2, 1]  # the baseline first


def test_the_baseline_is_chosen_by_its_values(engine: Engine, questions, tmp_path: Path) -> None:
    base = Settings(_env_file=None).with_(retriever="bm25", method="naive")
    result = run_sweep(engine, questions, base, [Axis("beam_length", (1, 2))], [5], tmp_path / "s.json",
                       protocol="one-run", index="tiny", baseline={"beam_length": "1"})
    assert result.baseline == "beam_length=1"
    with pytest.raises(SweepError, match="no cell of the grid"):
        run_sweep(engine, questions, base, [Axis("beam_length", (1, 2))], [5], tmp_path / "t.json",
                  protocol="one-run", index="tiny", baseline={"beam_length": "7"})


def test_a_sweep_file_is_decoded_with_the_field_that_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"kind": "gear-sweep", "index": "x", "method": "gear", "retriever": "hybrid",
                               "protocol": "one-run", "ks": "five", "axes": [], "questions": [], "baseline": ""}))
    with pytest.raises(SweepError, match=r"bad.json: not a sweep file: ks"):
        load_sweep(bad)
    (tmp_path / "evil.json").write_text(bad.read_text().replace('"five"', "[5]").replace(
        '"baseline": ""', '"baseline": "", "cells": [{"name": "c", "values": {}, "report": "../../etc/passwd", '
                          '"n_questions": 1, "recall": {}}]'))
    sweep = load_sweep(tmp_path / "evil.json")
    with pytest.raises(SweepError, match="outside"):
        read_cell_report(tmp_path / "evil.json", sweep.cells[0])


def _recorded(engine: Engine, tmp_path: Path) -> Settings:
    """GeAR's runs of the fixture's questions recorded at max_iterations=2, read back in auto mode."""
    cache = tmp_path / "cache"
    record = Settings(_env_file=None).with_(retriever="bm25", method="gear", llm="replay", llm_cache_dir=cache,
                                            max_iterations=2)
    engine.set_llm(record, CachedLLM(ScriptedLLM(), cache, "record"))
    for q in load_qa(QA)[0]:
        engine.retrieve(q.question, k=10, settings=record)
    auto = record.with_(llm="auto")
    engine.set_llm(auto, CachedLLM(ScriptedLLM(), cache, "auto"))
    return auto


def test_the_probe_says_how_far_the_recordings_carry_each_run(engine: Engine, questions, tmp_path: Path) -> None:
    auto = _recorded(engine, tmp_path)
    q = questions[0].question
    assert recorded_reach(engine, q, auto).live_from == ""  # type: ignore[union-attr]
    assert recorded_reach(engine, q, auto.with_(method="naive")) is None  # asks no LLM
    assert recorded_reach(engine, q, auto.with_(prompts="small")).live_from == "the first request"  # type: ignore
    wider = recorded_reach(engine, q, auto.with_(beam_length=1))  # the first read is the same; later reads differ
    assert wider is not None and wider.recorded >= 1 and wider.live_from.startswith(("iteration", "the answer"))
    probe = probe_cell(engine, questions, auto, [5], "one-run")
    assert (probe.runs, probe.replayed, probe.partly, probe.live) == (len(questions), len(questions), 0, 0)
    assert "nothing is asked of the model" in probe.sentence()
    small = probe_cell(engine, questions, auto.with_(prompts="small"), [5], "one-run")
    assert small.live == len(questions) and small.estimate_s > 0
    assert f"{len(questions)} ask the model from their first request" in small.sentence()


def test_each_cell_starts_with_an_empty_memo_as_a_gear_eval_process_does(engine: Engine, questions,
                                                                         tmp_path: Path) -> None:
    auto = _recorded(engine, tmp_path)

    def fresh(s: Settings) -> None:
        engine.set_llm(s, MemoLLM(CachedLLM(ScriptedLLM(), tmp_path / "cache", "auto")))

    result = run_sweep(engine, questions, auto, [Axis("max_iterations", (1, 2))], [5], tmp_path / "s.json",
                       protocol="one-run", index="tiny", fresh=fresh,
                       probe=lambda s: probe_cell(engine, questions, s, [5], "one-run"))
    recorded = result.cell("max_iterations=2")
    assert recorded is not None and set(recorded.llm_calls) <= {"record", "memo"}
    # the cell run after the baseline (whose first iteration asks the same prompts) counts them as a process of its
    # own would: recorded answers with their tokens, not the baseline's memo
    fresh(auto)
    alone = evaluate(engine, questions, auto.with_(max_iterations=1), [5]).to_dict()
    one = result.cell("max_iterations=1")
    assert one is not None and one.tokens_per_question == alone["tokens_per_question"] > 0
    assert one.llm_calls.get("memo", 0) == alone["memo_calls"]


def test_gear_sweep_prints_the_grid_and_keeps_each_cells_report(tiny_index: Path, make_encoder, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name))
    monkeypatch.chdir(tmp_path)
    shutil.copy(QA, tmp_path / "qa.json")
    runner = CliRunner()
    args = ["sweep", str(tiny_index), "qa.json", "-r", "bm25", "-m", "naive", "--set", "beam_length=1,2",
            "--set", "beam_width=2,10", "--k", "2,5", "--json", "out/s.json"]
    result = runner.invoke(app, args, env=WIDE)
    assert result.exit_code == 0, result.output
    assert "[1/4] beam_length=2 beam_width=10" in result.output  # the baseline runs first
    assert "ΔR@5 (p)" in result.output and "baseline" in result.output
    sweep = load_sweep(tmp_path / "out" / "s.json")
    assert len(sweep.cells) == 4 and sorted((tmp_path / "out" / "s").glob("*.json"))
    cell = sweep.cell("beam_length=1 beam_width=2")
    assert cell is not None
    alone = runner.invoke(app, ["eval", str(tiny_index), "qa.json", "-r", "bm25", "-m", "naive", "--k", "2,5",
                                "--json", "e.json"], env={**WIDE, "GEAR_BEAM_LENGTH": "1", "GEAR_BEAM_WIDTH": "2"})
    assert alone.exit_code == 0, alone.output
    evaluated = json.loads((tmp_path / "e.json").read_text())
    assert read_cell_report(tmp_path / "out" / "s.json", cell)["settings"] == evaluated["settings"]
    assert cell.recall == pytest.approx(evaluated["recall"])
    again = runner.invoke(app, args, env=WIDE)
    assert again.output.count("read from its saved report") == 4


@pytest.mark.parametrize(("args", "needle"), [
    (["--set", "beam_lenght=1,2"], "'beam_lenght' is not a setting"),
    ([], "name at least one setting"),
    (["--set", "beam_length=1,2", "--baseline", "beam_length=5"], "no cell of the grid"),
])
def test_gear_sweep_errors_are_one_line(tiny_index: Path, tmp_path: Path, args: list[str], needle: str,
                                        make_encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["sweep", str(tiny_index), str(QA), "-m", "naive", "--json", "s.json", *args],
                                env=WIDE)
    assert result.exit_code == 2 and needle in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output


def test_a_sweep_cut_short_lists_every_cell_it_finished(engine: Engine, questions, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    base = Settings(_env_file=None).with_(retriever="bm25", method="naive")
    path = tmp_path / "s.json"
    run_sweep(engine, questions, base, [Axis("beam_length", (1, 2, 3))], [5], path, protocol="one-run", index="tiny")
    (tmp_path / "s" / "beam_length-1.json").unlink()  # its cell to run again (after the baseline); the others done
    real = sweep_module.evaluate

    def stop(engine, questions, settings, *args, **kwargs):
        raise KeyboardInterrupt  # the sweep is stopped as the cell starts

    monkeypatch.setattr(sweep_module, "evaluate", stop)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(engine, questions, base, [Axis("beam_length", (1, 2, 3))], [5], path, protocol="one-run",
                  index="tiny")
    assert [c.name for c in load_sweep(path).cells] == ["beam_length=2", "beam_length=3"]
    monkeypatch.setattr(sweep_module, "evaluate", real)
