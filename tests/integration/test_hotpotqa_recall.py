"""The base retrievers on the bundled HotpotQA sample (issue 29): 100 questions, their pooled 994 passages, MiniLM.

These are Table 1's HotpotQA rows that need no triples, pinned as measured (docs/results.md, "Table 1 on HotpotQA");
R@2 as HippoRAG reports it beside the paper's R@5/10/15. Gold passages are named by title alone, and every one of the
200 is found.
"""

from __future__ import annotations

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.eval.report import evaluate

pytestmark = pytest.mark.slow


def recall(engine: Engine, questions, **settings) -> dict[str, float]:
    report = evaluate(engine, questions, Settings().with_(**settings), (2, 5, 10, 15))
    assert report.skipped == []  # every question's gold titles are passages of the index
    return {k: round(v, 1) for k, v in report.recall().items()}


def test_every_gold_title_is_one_passage(hotpotqa: Engine, hotpotqa_questions) -> None:
    assert len(hotpotqa_questions) == 100
    for q in hotpotqa_questions:
        assert len(hotpotqa.gold_ids(q.gold)) == len(q.gold) == 2, q.id


def test_base_retrievers_on_hotpotqa(hotpotqa: Engine, hotpotqa_questions) -> None:
    assert recall(hotpotqa, hotpotqa_questions, retriever="bm25") == {"2": 59.5, "5": 77.5, "10": 89.0, "15": 92.0}
    assert recall(hotpotqa, hotpotqa_questions, retriever="dense") == {"2": 62.5, "5": 78.5, "10": 85.0, "15": 87.5}
    assert recall(hotpotqa, hotpotqa_questions, retriever="hybrid") == {"2": 62.0, "5": 83.0, "10": 90.0, "15": 93.0}
