"""The bundled demos' data: every demo's files are there, every passage of its corpus gets its OpenIE record (none
left without triples by a text that does not match), and the demos whose triples this project extracted say how
(the `extraction` record) with counts that are the file's own. The 2Wiki demo's questions keep 2Wiki's types, which
Table 1's split by type and the diagnosis per type read."""

from __future__ import annotations

from collections import Counter

import pytest

from gear.data.corpus import load_corpus, unique_documents
from gear.data.openie import align_openie, load_openie
from gear.data.questions import load_qa
from studio.core import demos


@pytest.mark.parametrize("name", list(demos.DEMOS))
def test_every_demo_passage_has_its_openie_record(name: str) -> None:
    d = demos.DEMOS[name]
    assert d.available, f"{name}: missing {d.missing()}"
    docs, report = load_corpus(d.corpus)
    docs = unique_documents(docs, report)
    oie, _ = load_openie(d.openie)  # (HippoRAG's MuSiQue file holds malformed triples: dropped and counted)
    triples = align_openie(docs, oie, report)
    assert len(triples) == len(docs)
    assert not [w for w in report.warnings if "no OpenIE record" in w]  # (MuSiQue's shared titles are noted apart)
    assert sum(map(len, triples)) > 5 * len(docs)
    questions, _ = load_qa(d.qa)
    assert questions


@pytest.mark.parametrize("name", [n for n in demos.DEMOS if "qwen" in demos.DEMOS[n].openie.name])
def test_extracted_triples_say_how_they_were_made(name: str) -> None:
    import json

    data = json.loads(demos.DEMOS[name].openie.read_text(encoding="utf-8"))
    assert load_openie(demos.DEMOS[name].openie)[1].warnings == []  # the pipeline's guards let no malformed triple out
    record, records = data["extraction"], data["docs"]
    assert "qwen2.5-coder-1.5b" in record["model"].lower()
    assert record.get("passages", len(records)) == len(records)
    if "triples" in record:
        assert record["triples"] == sum(len(r["extracted_triples"]) for r in records)


def test_the_2wiki_demo_keeps_2wikis_question_types() -> None:
    d = demos.DEMOS["2wiki"]
    assert not d.at_start  # built when chosen: 1,294 passages few will open
    questions, _ = load_qa(d.qa)
    assert Counter(q.hop_type for q in questions) == {"compositional": 32, "comparison": 27,
                                                      "bridge_comparison": 17, "inference": 6}
