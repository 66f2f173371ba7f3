"""The agent's measured runs, pinned: each LLM report of scripts/eval_subset.sh (docs/evals/dev50_*_gear_*.json, and
IRCoT's dev50_*_ircot_*.json) is run
again on the same questions with the LLM answers it recorded (assets/llm_cache, replay only: a prompt that differs
from the recorded one fails loudly), and must give the same recall, answers, iterations and rejected verdicts; PPR with
its recognition filter (dev50_*_ppr_filter.json) the same recall and tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import BUNDLED_LLM_CACHE, Settings
from gear.eval.report import evaluate
from gear.llm import MemoLLM, make_llm

EVALS = Path(__file__).resolve().parents[2] / "docs" / "evals"
REPORTS = sorted([*EVALS.glob("dev50_*_gear_*.json"), *EVALS.glob("dev50_*_ircot_*.json")])
FILTERED = sorted(EVALS.glob("dev50_*_ppr_filter.json"))  # PPR with the LLM recognition filter (docs/peers.md)

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_recorded_agent_runs_replay_to_the_same_numbers(path: Path, musique: Engine, questions) -> None:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    wanted = [q["id"] for q in recorded["per_question"]]
    subset = [q for q in questions if q.id in set(wanted)]
    assert [q.id for q in subset] == wanted
    s = recorded["settings"]
    settings = Settings(_env_file=None).with_(
        retriever=s["retriever"], expand=s["expand"], prompts=s["prompts"], max_iterations=s["max_iterations"],
        ircot_retriever=s["ircot_retriever"], ircot_max_steps=s["ircot_max_steps"], llm="replay",
        llm_cache_dir=BUNDLED_LLM_CACHE)
    # a fresh memo, as the recording process had: the session's engine is shared by both profiles' replays, and
    # identical QA calls of the other profile must not be answered by its memo
    musique.set_llm(settings, MemoLLM(make_llm("replay", cache_dir=BUNDLED_LLM_CACHE)))
    report = evaluate(musique, subset, settings, (5, 10, 15)).to_dict()
    for key in ("recall", "em", "f1", "iterations_mean", "verdicts_rejected", "queries_repeated"):
        assert report[key] == pytest.approx(recorded[key]), key
    assert [q["answer"] for q in report["per_question"]] == [q["answer"] for q in recorded["per_question"]]
    assert report["tokens_per_question"] == pytest.approx(recorded["tokens_per_question"])


@pytest.mark.parametrize("path", FILTERED, ids=lambda p: p.stem)
def test_recorded_ppr_filter_runs_replay_to_the_same_recall(path: Path, musique: Engine, questions) -> None:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    assert recorded["settings"]["ppr_filter"] is True
    wanted = [q["id"] for q in recorded["per_question"]]
    subset = [q for q in questions if q.id in set(wanted)]
    settings = Settings(_env_file=None).with_(retriever=recorded["settings"]["retriever"], expand="ppr",
                                              ppr_filter=True, llm="replay", llm_cache_dir=BUNDLED_LLM_CACHE)
    musique.set_llm(settings, MemoLLM(make_llm("replay", cache_dir=BUNDLED_LLM_CACHE)))
    report = evaluate(musique, subset, settings, (5, 10, 15)).to_dict()
    assert report["recall"] == pytest.approx(recorded["recall"])
    assert [q["recall"] for q in report["per_question"]] == [q["recall"] for q in recorded["per_question"]]
    assert report["tokens_per_question"] == pytest.approx(recorded["tokens_per_question"])


def test_there_are_recorded_runs_to_replay() -> None:
    assert REPORTS, "no docs/evals/dev50_*_gear_*.json: run scripts/eval_subset.sh"
    assert FILTERED, "no docs/evals/dev50_*_ppr_filter.json: run scripts/eval_subset.sh"
