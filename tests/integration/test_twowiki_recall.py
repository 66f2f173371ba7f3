"""Table 1's single-step rows on the bundled 2Wiki sample: 82 dev questions, the pooled 1,294 passages of
164, MiniLM, the triples the embedded model extracted (assets/2wikimultihopqa). Pinned as measured by
scripts/twowiki_table1.sh (docs/results.md, "Table 1 on 2Wiki"; docs/evals/twowiki_*.json), with R@2 beside the
paper's R@5/10/15 and the split by 2Wiki's question type.
"""

from __future__ import annotations

import pytest

from gear.agent.engine import Engine
from tests.integration.conftest import assert_naive_rows, paper_recall, paper_report, rounded, ties_as_recorded

pytestmark = pytest.mark.slow


def test_every_gold_title_is_one_passage(twowiki: Engine, twowiki_questions) -> None:
    assert len(twowiki_questions) == 82 and twowiki.backend.n_passages == 1294
    for q in twowiki_questions:
        assert len(twowiki.gold_ids(q.gold)) == len(q.gold) >= 2, q.id


def test_base_retrievers_on_twowiki(twowiki: Engine, twowiki_questions) -> None:
    # hybrid's k = 5 run holds a tie at its cut-off: question 27944f24… ("What nationality of the company that
    # published Qs World University Rankings?") has one gold passage within its top 5 on the CPUs that order ties as
    # the bundled runs were recorded (AVX-512: 75.0, docs/evals/twowiki_hybrid.json) and none on an AVX2-only EPYC
    # (74.4); the probe of conftest.ties_as_recorded tells the two apart
    pinned = {
        "bm25": {"2": 54.9, "5": 70.1, "10": 80.2, "15": 81.4},
        "dense": {"2": 52.7, "5": 72.3, "10": 79.0, "15": 80.8},
        "hybrid": {"2": 56.1, "5": 75.0 if ties_as_recorded() else 74.4, "10": 80.5, "15": 84.1},
    }
    for retriever, expected in pinned.items():
        report = paper_report(twowiki, twowiki_questions, retriever=retriever)
        assert rounded(report.recall()) == expected, retriever
        if retriever == "hybrid":  # by 2Wiki's type: a comparison names both entities, a bridge comparison does not
            by_type = {t: rounded(v["recall"]) for t, v in report.to_dict()["by_hop"].items()}
            assert by_type["comparison"] == {"2": 75.9, "5": 100.0, "10": 100.0, "15": 100.0}
            assert by_type["bridge_comparison"] == {"2": 41.2, "5": 52.9, "10": 55.9, "15": 58.8}


def test_naive_ge_on_twowiki(twowiki: Engine, twowiki_questions) -> None:
    # each base retriever + NaiveGE (diversity on, the paper's setting), then without diversity. Hybrid's k = 5 run
    # starts from the tied base list above: on an AVX2-only CPU it finds one gold passage fewer (79.6, 78.7), as
    # measured with NumPy's and PyTorch's AVX-512 paths switched off (docs/results.md, "Table 1 on 2Wiki")
    as_recorded = ties_as_recorded()
    pinned = {
        "bm25": ({"2": 57.3, "5": 76.5, "10": 87.5, "15": 89.0}, {"2": 57.0, "5": 74.7, "10": 85.1, "15": 86.3}),
        "dense": ({"2": 53.4, "5": 79.3, "10": 86.0, "15": 87.5}, {"2": 52.7, "5": 77.1, "10": 83.8, "15": 86.3}),
        "hybrid": ({"2": 57.0, "5": 80.2 if as_recorded else 79.6, "10": 88.4, "15": 89.9},
                   {"2": 56.7, "5": 79.3 if as_recorded else 78.7, "10": 86.6, "15": 88.4}),
    }
    assert_naive_rows(twowiki, twowiki_questions, pinned)


def test_ppr_on_twowiki(twowiki: Engine, twowiki_questions) -> None:
    assert paper_recall(twowiki, twowiki_questions, retriever="dense", expand="ppr") == {
        "2": 57.0, "5": 83.2, "10": 90.9, "15": 91.2}
