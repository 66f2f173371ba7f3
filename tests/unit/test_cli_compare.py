"""`gear compare A.json B.json`: the table, the flows and the paired numbers of gear.eval.pairing, the
same in --json; other QA sets refused with the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gear.cli import app
from gear.eval.pairing import pair_reports

EVALS = Path(__file__).resolve().parents[2] / "docs" / "evals"
WIDE = {"COLUMNS": "200"}
IRCOT, GEAR = EVALS / "hotpotqa_every1_n100_ircot_ppr.json", EVALS / "hotpotqa_every1_n100_gear_paper.json"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_compare_prints_the_table_flows_and_paired_numbers(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", str(IRCOT), str(GEAR), "--json", str(tmp_path / "p.json")], env=WIDE)
    assert result.exit_code == 0, result.output
    expected = pair_reports(json.loads(IRCOT.read_text()), json.loads(GEAR.read_text()), 5)
    for m in expected.measures:
        assert m.sentence() in result.output
    assert "+7.5 at R@5 (81.5 → 89.0): 24 questions better, 9 worse" in result.output
    assert "ranked past 5 → found: 23 gold passages" in result.output
    assert "100 questions in both" in result.output
    saved = json.loads((tmp_path / "p.json").read_text())
    assert saved["counts"]["passages"] == expected.counts() and saved["k"] == 5
    assert [m["sentence"] for m in saved["measures"]] == [m.sentence() for m in expected.measures]


def test_only_keeps_the_questions_asked_for(runner: CliRunner) -> None:
    result = runner.invoke(app, ["compare", str(IRCOT), str(GEAR), "--only", "breaks", "--by-answer"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "B breaks (answers)" in result.output
    assert result.output.count("1 → 0") == 5  # EM: the 5 questions GeAR answers worse


def test_other_qa_sets_and_cut_offs_are_refused(runner: CliRunner) -> None:
    other = EVALS / "dev50_every2_n20_naive.json"
    result = runner.invoke(app, ["compare", str(IRCOT), str(other)], env=WIDE)
    assert result.exit_code == 2
    assert "different QA sets: the question ids differ" in result.output
    result = runner.invoke(app, ["compare", str(IRCOT), str(GEAR), "--k", "7"], env=WIDE)
    assert result.exit_code == 2 and "both have k = 2, 5, 10, 15" in result.output
    result = runner.invoke(app, ["compare", str(IRCOT), "missing.json"], env=WIDE)
    assert result.exit_code == 2 and "missing.json: file not found" in result.output
