"""Recall@k (HippoRAG's definition), SQuAD EM/F1 over aliases, and the report's aggregations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gear.eval.report import EvalReport, QuestionResult
from gear.measures import exact_match, f1_score, normalize_answer, recall_at


def test_recall_at_is_the_fraction_of_gold_in_the_top_k() -> None:
    ranked = [4, 9, 1, 7, 2]
    assert recall_at(ranked, [1, 2], 2) == 0.0
    assert recall_at(ranked, [1, 2], 3) == 0.5
    assert recall_at(ranked, [1, 2], 5) == 1.0
    assert recall_at(ranked, [1, 2, 3], 15) == pytest.approx(2 / 3)
    assert recall_at(ranked, [1, 1, 2], 3) == 0.5  # repeated gold counts once
    assert recall_at([1, 1, 1], [1, 2], 3) == 0.5  # repeated ranks do not count twice
    assert recall_at(ranked, [], 5) == 0.0


@pytest.mark.parametrize(("raw", "expected"), [
    ("The  Eiffel Tower!", "eiffel tower"),
    ("an apple, a pear", "apple pear"),
    ("Theory", "theory"),  # articles only as whole words
    ("U.S.A.", "usa"),
])
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_exact_match_best_over_aliases() -> None:
    assert exact_match("the Michigan State", ["MSU", "Michigan State"]) == 1.0
    assert exact_match("Michigan", ["MSU", "Michigan State"]) == 0.0
    assert exact_match("anything", []) == 0.0


def test_f1_best_over_aliases() -> None:
    # vs "Michigan State Spartans": p = 2/2, r = 2/3 → 0.8; vs "MSU": 0
    assert f1_score("Michigan State", ["MSU", "Michigan State Spartans"]) == pytest.approx(0.8)
    # token overlap counts multiplicity: pred "x y y", gold "y z" → same 1, p 1/3, r 1/2 → 0.4
    assert f1_score("x y y", ["y z"]) == pytest.approx(0.4)
    assert f1_score("Paris", ["London", "paris."]) == 1.0
    assert f1_score("", ["Paris"]) == 0.0
    assert f1_score("Paris", []) == 0.0


def _q(qid: str, hop: str, r5: float, r10: float, per_iteration: list[dict[str, float]] | None = None,
       em: float | None = None, f1: float | None = None) -> QuestionResult:
    return QuestionResult(qid, "?", hop, 2, {"5": r5, "10": r10}, em=em, f1=f1,
                          recall_per_iteration=per_iteration or [])


def _report(questions: list[QuestionResult]) -> EvalReport:
    return EvalReport("none", "hybrid", [5, 10], {}, questions, {"wall": [10.0, 20.0, 30.0]})


def test_report_recall_in_percent_and_by_hop() -> None:
    report = _report([_q("a", "2hop", 0.5, 1.0), _q("b", "3hop1", 0.0, 0.5), _q("c", "2hop", 1.0, 1.0)])
    assert report.recall() == pytest.approx({"5": 50.0, "10": 250 / 3})
    assert report.by_hop() == {
        "2hop": {"n": 2, "recall": pytest.approx({"5": 75.0, "10": 100.0})},
        "3hop1": {"n": 1, "recall": {"5": 0.0, "10": 50.0}},
    }
    assert list(report.by_hop()) == ["2hop", "3hop1"]


def test_recall_per_iteration_carries_forward_for_questions_that_stopped() -> None:
    report = _report([
        _q("a", "all", 1, 1, per_iteration=[{"5": 0.5, "10": 0.5}, {"5": 1.0, "10": 1.0}, {"5": 1.0, "10": 1.0}]),
        _q("b", "all", 0, 0, per_iteration=[{"5": 0.0, "10": 0.5}]),  # stopped after iteration 1
        _q("c", "all", 0, 0),  # no per-iteration data: not counted
    ])
    assert report.recall_per_iteration() == {
        "1": pytest.approx({"5": 25.0, "10": 50.0}),
        "2": pytest.approx({"5": 50.0, "10": 75.0}),
        "3": pytest.approx({"5": 50.0, "10": 75.0}),
    }
    assert _report([_q("x", "all", 0, 0)]).recall_per_iteration() == {}


def test_to_dict_and_save(tmp_path: Path) -> None:
    report = _report([_q("a", "all", 1.0, 1.0, em=1.0, f1=1.0), _q("b", "all", 0.0, 0.5, em=0.0, f1=0.5)])
    data = report.to_dict()
    assert data["n_questions"] == 2
    assert data["em"] == 50.0 and data["f1"] == 75.0
    assert data["latency_ms"]["wall"] == {"mean": 20.0, "p50": 20.0, "p95": pytest.approx(29.0)}
    assert "tokens_per_question" not in data and "recall_per_iteration" not in data
    path = tmp_path / "sub" / "report.json"
    report.save(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["recall"] == {"5": 50.0, "10": 75.0}
    assert [q["id"] for q in saved["per_question"]] == ["a", "b"]


def test_empty_report() -> None:
    assert _report([]).recall() == {"5": 0.0, "10": 0.0}
    assert _report([]).by_hop() == {}
