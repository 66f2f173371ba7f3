"""Table 1's LLM rows on HotpotQA, pinned: each report of scripts/hotpotqa_table1.sh that used the embedded model
(docs/evals/hotpotqa_*_{gear,ircot,sync}*.json) runs again on the same questions with the answers it recorded
(assets/llm_cache, replay only: a prompt that differs from the recorded one fails loudly) over the index of the
bundled triples, and must give the same recall, answers, EM/F1 and tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import BUNDLED_LLM_CACHE, Settings
from gear.eval.report import evaluate
from gear.llm import MemoLLM, make_llm

EVALS = Path(__file__).resolve().parents[2] / "docs" / "evals"
REPORTS = sorted(p for pattern in ("hotpotqa_*_gear_*.json", "hotpotqa_*_ircot_*.json", "hotpotqa_*_sync*.json")
                 for p in EVALS.glob(pattern))

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_recorded_hotpotqa_runs_replay_to_the_same_numbers(path: Path, hotpotqa: Engine, hotpotqa_questions) -> None:
    recorded = json.loads(path.read_text(encoding="utf-8"))
    wanted = [q["id"] for q in recorded["per_question"]]
    subset = [q for q in hotpotqa_questions if q.id in set(wanted)]
    assert [q.id for q in subset] == wanted
    s = recorded["settings"]
    settings = Settings(_env_file=None).with_(
        retriever=s["retriever"], expand=s["expand"], prompts=s["prompts"], max_iterations=s["max_iterations"],
        diversity=s["diversity"], ircot_retriever=s["ircot_retriever"], ircot_max_steps=s["ircot_max_steps"],
        llm="replay", llm_cache_dir=BUNDLED_LLM_CACHE)
    hotpotqa.set_llm(settings, MemoLLM(make_llm("replay", cache_dir=BUNDLED_LLM_CACHE)))  # a fresh memo, as recorded
    report = evaluate(hotpotqa, subset, settings, [int(k) for k in recorded["recall"]]).to_dict()
    for key in ("recall", "em", "f1", "iterations_mean"):
        assert report[key] == pytest.approx(recorded[key]), key
    assert [q["answer"] for q in report["per_question"]] == [q["answer"] for q in recorded["per_question"]]
    assert report["tokens_per_question"] == pytest.approx(recorded["tokens_per_question"])


def test_there_are_recorded_hotpotqa_runs_to_replay() -> None:
    kinds = {p.stem.rsplit("_n", 1)[-1].split("_", 1)[-1] for p in REPORTS}
    assert {"gear_paper", "ircot_ppr", "sync"} <= kinds, f"recorded: {sorted(kinds)}; run scripts/hotpotqa_table1.sh"
