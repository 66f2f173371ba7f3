"""Table 1's base rows on the bundled 2Wiki sample (issue 39): 82 dev questions, the pooled 1,294 passages of 164,
MiniLM. Pinned as measured (docs/results.md, "Table 1 on 2Wiki"; docs/evals/twowiki_{bm25,dense,hybrid}.json), with
R@2 beside the paper's R@5/10/15 and the split by 2Wiki's question type.

The index holds the passages alone: BM25 and the embeddings read no triple, so these rows are the same on the index
with the embedded model's triples, whose extraction runs across sessions (scripts/twowiki_table1.sh extract); the rows
with a graph or an LLM come with those triples.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.corpus import load_corpus, load_qa, unique_documents
from gear.eval.report import EvalReport, evaluate
from gear.index import build_index
from tests.integration.conftest import ties_as_recorded

pytestmark = pytest.mark.slow
TWOWIKI = Path(__file__).resolve().parents[2] / "assets" / "2wikimultihopqa"


@pytest.fixture(scope="module")
def twowiki(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    from gear.embed import Encoder

    docs, report = load_corpus(TWOWIKI / "2wikimultihopqa_dev164_corpus.json")
    docs = unique_documents(docs, report)
    out = tmp_path_factory.mktemp("twowiki") / "index"
    encoder = Encoder("all-MiniLM-L6-v2")
    build_index(docs, [[] for _ in docs], out, encoder)
    return Engine.open(out, Settings(), encoder=encoder)


@pytest.fixture(scope="module")
def twowiki_questions():
    return load_qa(TWOWIKI / "2wikimultihopqa_dev82.json")[0]


def run(engine: Engine, questions, retriever: str) -> EvalReport:
    report = evaluate(engine, questions, Settings().with_(retriever=retriever), (2, 5, 10, 15), protocol="paper")
    assert report.skipped == []  # every question's gold titles are passages of the index
    return report


def rounded(recall: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in recall.items()}


def test_every_gold_title_is_one_passage(twowiki: Engine, twowiki_questions) -> None:
    assert len(twowiki_questions) == 82 and twowiki.backend.n_passages == 1294
    for q in twowiki_questions:
        assert len(twowiki.gold_ids(q.gold)) == len(q.gold) >= 2, q.id


def test_base_retrievers_on_twowiki(twowiki: Engine, twowiki_questions) -> None:
    # hybrid's k = 5 run holds a tie at its cut-off: question 27944f24… ("What nationality of the company that
    # published Qs World University Rankings?") has one gold passage within its top 5 on the CPUs that order ties as
    # the bundled runs were recorded (AVX-512 here: 75.0) and none on an AVX2-only EPYC (74.4, as measured for
    # docs/results.md); the probe of conftest.ties_as_recorded tells the two apart
    pinned = {
        "bm25": {"2": 54.9, "5": 70.1, "10": 80.2, "15": 81.4},
        "dense": {"2": 52.7, "5": 72.3, "10": 79.0, "15": 80.8},
        "hybrid": {"2": 56.1, "5": 75.0 if ties_as_recorded() else 74.4, "10": 80.5, "15": 84.1},
    }
    for retriever, expected in pinned.items():
        report = run(twowiki, twowiki_questions, retriever)
        assert rounded(report.recall()) == expected, retriever
        if retriever == "hybrid":  # by 2Wiki's type: a comparison names both entities, a bridge comparison does not
            by_type = {t: rounded(v["recall"]) for t, v in report.to_dict()["by_hop"].items()}
            assert by_type["comparison"] == {"2": 75.9, "5": 100.0, "10": 100.0, "15": 100.0}
            assert by_type["bridge_comparison"] == {"2": 41.2, "5": 52.9, "10": 55.9, "15": 58.8}
