"""Table 1's LLM rows on HotpotQA, pinned: each report of scripts/hotpotqa_table1.sh that used the embedded model
(docs/evals/hotpotqa_*_{gear,ircot,sync}*.json) runs again on the same questions with the answers it recorded
(assets/llm_cache, replay only: a prompt that differs from the recorded one fails loudly) over the index of the
bundled triples, and must give the same recall, answers, EM/F1 and tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.agent.engine import Engine
from tests.integration.conftest import assert_replays_as_recorded, assert_rows_recorded, llm_reports

REPORTS = llm_reports("hotpotqa")

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_recorded_hotpotqa_runs_replay_to_the_same_numbers(path: Path, hotpotqa: Engine, hotpotqa_questions) -> None:
    assert_replays_as_recorded(path, hotpotqa, hotpotqa_questions)


def test_there_are_recorded_hotpotqa_runs_to_replay() -> None:
    """Every LLM row of docs/results.md's HotpotQA table is on all 100 questions."""
    rows = ("gear_paper", "ircot_ppr", "sync", "sync_nodiv", "bm25_sync", "dense_sync")
    assert_rows_recorded(REPORTS, "hotpotqa_every1_n100", rows, "scripts/hotpotqa_table1.sh")
