"""The agent's measured runs, pinned: each LLM report of scripts/eval_subset.sh (docs/evals/dev50_*_gear_*.json, and
IRCoT's dev50_*_ircot_*.json) is run
again on the same questions with the LLM answers it recorded (assets/llm_cache, replay only: a prompt that differs
from the recorded one fails loudly), and must give the same recall, answers, iterations and rejected verdicts; PPR with
its recognition filter (dev50_*_ppr_filter.json) the same recall and tokens; hybrid + SyncGE (dev50_*_sync.json, the
three-dataset table of docs/results.md) the same recall, answers, EM/F1 and tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.agent.engine import Engine
from tests.integration.conftest import assert_replays_as_recorded, replay_report

EVALS = Path(__file__).resolve().parents[2] / "docs" / "evals"
REPORTS = sorted([*EVALS.glob("dev50_*_gear_*.json"), *EVALS.glob("dev50_*_ircot_*.json")])
FILTERED = sorted(EVALS.glob("dev50_*_ppr_filter.json"))  # PPR with the LLM recognition filter (docs/peers.md)
SYNC = sorted(EVALS.glob("dev50_*_sync.json"))  # hybrid + SyncGE, one run per cut-off

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_recorded_agent_runs_replay_to_the_same_numbers(path: Path, musique: Engine, questions) -> None:
    recorded, report = replay_report(path, musique, questions)
    for key in ("recall", "em", "f1", "iterations_mean", "verdicts_rejected", "queries_repeated"):
        assert report[key] == pytest.approx(recorded[key]), key
    assert [q["answer"] for q in report["per_question"]] == [q["answer"] for q in recorded["per_question"]]
    assert report["tokens_per_question"] == pytest.approx(recorded["tokens_per_question"])


@pytest.mark.parametrize("path", FILTERED, ids=lambda p: p.stem)
def test_recorded_ppr_filter_runs_replay_to_the_same_recall(path: Path, musique: Engine, questions) -> None:
    recorded, report = replay_report(path, musique, questions)
    assert recorded["settings"]["ppr_filter"] is True
    assert report["recall"] == pytest.approx(recorded["recall"])
    assert [q["recall"] for q in report["per_question"]] == [q["recall"] for q in recorded["per_question"]]
    assert report["tokens_per_question"] == pytest.approx(recorded["tokens_per_question"])


@pytest.mark.parametrize("path", SYNC, ids=lambda p: p.stem)
def test_recorded_syncge_runs_replay_to_the_same_numbers(path: Path, musique: Engine, questions) -> None:
    assert_replays_as_recorded(path, musique, questions)


def test_there_are_recorded_runs_to_replay() -> None:
    assert REPORTS, "no docs/evals/dev50_*_gear_*.json: run scripts/eval_subset.sh"
    assert FILTERED, "no docs/evals/dev50_*_ppr_filter.json: run scripts/eval_subset.sh"
    assert SYNC, "no docs/evals/dev50_*_sync.json: run scripts/eval_subset.sh"
