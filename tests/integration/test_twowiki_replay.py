"""Table 1's LLM rows on 2Wiki, pinned: each report of scripts/twowiki_table1.sh that used the embedded
model (docs/evals/twowiki_*_{gear,ircot,sync}*.json) runs again on the same questions with the answers it recorded
(assets/llm_cache, replay only: a prompt that differs from the recorded one fails loudly) over the index of the
bundled triples, and must give the same recall, answers, EM/F1 and tokens, overall and by 2Wiki's question type."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.agent.engine import Engine
from tests.integration.conftest import assert_replays_as_recorded, assert_rows_recorded, llm_reports

REPORTS = llm_reports("twowiki")

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.stem)
def test_recorded_twowiki_runs_replay_to_the_same_numbers(path: Path, twowiki: Engine, twowiki_questions) -> None:
    assert_replays_as_recorded(path, twowiki, twowiki_questions)


def test_there_are_recorded_twowiki_runs_to_replay() -> None:
    """Every LLM row of docs/results.md's 2Wiki table has its report on all 82 questions (GeAR, HippoRAG w/ IRCoT,
    hybrid + SyncGE with and without diversity, BM25 + SyncGE, dense + SyncGE), each with R@2 / 5 / 10 / 15."""
    rows = ("gear_paper", "ircot_ppr", "sync", "sync_nodiv", "bm25_sync", "dense_sync")
    assert_rows_recorded(REPORTS, "twowiki_every1_n82", rows, "scripts/twowiki_table1.sh", ks=(2, 5, 10, 15))
