"""How a QA set's gold passages are found in an index (item 5; docs/usage.md "Gold passages"): by (title,
text) when the QA file gives the text — the text as the index holds it, surrounding whitespace aside — and by title
alone when it gives none (a title-only record, a paragraph with empty text, a HotpotQA/2Wiki record whose context lacks
the title), which finds a passage only when exactly one passage of the index has that title. The loader's count of
questions with a gold passage in the corpus (gold_in_corpus) agrees with what the engine then finds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.corpus import Document, LoadReport
from gear.data.questions import Question, gold_in_corpus, load_qa
from gear.index import build_index

DOCS = [("Etna", "Etna is a volcano on Sicily."), ("Sicily", "Sicily is an island."),
        ("Notes", "First chunk of a text file."), ("Notes", "Second chunk of the same file.")]


@pytest.fixture
def engine(tmp_path: Path, fake_encoder, make_encoder) -> Engine:
    build_index([Document(t, x) for t, x in DOCS], [[] for _ in DOCS], tmp_path / "ix", fake_encoder)
    return Engine.open(tmp_path / "ix", Settings(), encoder=make_encoder())


def qa_file(tmp_path: Path, records: list[dict]) -> list[Question]:
    path = tmp_path / "qa.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return load_qa(path)[0]


def musique(*paragraphs: dict) -> dict:
    return {"id": "q", "question": "Q?", "answer": "A", "paragraphs": [{**p, "is_supporting": True}
                                                                          for p in paragraphs]}


@pytest.mark.parametrize(("paragraph", "found"), [
    ({"title": "Etna", "paragraph_text": "Etna is a volcano on Sicily."}, [0]),          # title and text
    ({"title": "Etna", "paragraph_text": "  Etna is a volcano on Sicily.\n"}, [0]),      # whitespace around
    ({"title": "Etna", "paragraph_text": "Etna is a mountain."}, []),                    # another text: not Etna
    ({"title": "Etna"}, [0]),                                                           # title alone, unique
    ({"title": "Etna", "paragraph_text": ""}, [0]),                                     # empty text: title alone
    ({"title": "Notes"}, []),                                                           # title shared: ambiguous
    ({"title": "Notes", "paragraph_text": "Second chunk of the same file."}, [3]),     # the text tells them apart
])
def test_gold_is_found_by_title_and_text_or_by_title_alone(engine: Engine, tmp_path: Path, paragraph: dict,
                                                           found: list[int]) -> None:
    [q] = qa_file(tmp_path, [musique(paragraph)])
    assert engine.gold_ids(q.gold) == found
    counted = gold_in_corpus([q], [Document(t, x) for t, x in DOCS], LoadReport("qa.json")) if found else None
    assert counted in (None, 1)


def test_hotpotqa_records_name_titles_and_use_their_context_text(engine: Engine, tmp_path: Path) -> None:
    [with_context, titles_only] = qa_file(tmp_path, [
        {"_id": "a", "question": "Q?", "answer": "A", "supporting_facts": [["Sicily", 0]],
         "context": [["Sicily", ["Sicily is ", "an island."]]]},
        {"_id": "b", "question": "Q?", "answer": "A", "supporting_facts": [["Sicily", 0], ["Notes", 0]],
         "context": []}])
    assert with_context.gold == (("Sicily", "Sicily is an island."),) and engine.gold_ids(with_context.gold) == [1]
    assert titles_only.gold == (("Sicily", None), ("Notes", None))
    assert engine.gold_ids(titles_only.gold) == [1]  # "Notes" names two passages: not matched


def test_the_loaders_count_agrees_with_what_the_engine_finds(tmp_path: Path) -> None:
    """A QA set whose only gold passage is named by a shared title has no gold passage the engine can find: the
    loader says so instead of counting it."""
    docs = [Document(t, x) for t, x in DOCS]
    [shared] = qa_file(tmp_path, [musique({"title": "Notes"})])
    report = LoadReport("qa.json")
    with pytest.raises(ValueError, match="none of its 1 questions has a gold passage in the corpus"):
        gold_in_corpus([shared], docs, report)
    [unique, ambiguous] = qa_file(tmp_path, [musique({"title": "Etna"}), {**musique({"title": "Notes"}), "id": "r"}])
    assert gold_in_corpus([unique, ambiguous], docs, report) == 1
    assert any("1 of 2 questions have no gold passage in the corpus" in w for w in report.warnings)


def test_a_gold_passage_the_index_lacks_is_said_not_dropped_silently(engine: Engine, tmp_path: Path) -> None:
    """A question keeps the gold passages found and is evaluated on them, and the report names the ones the index
    lacks (`gear eval` prints them) — a corpus that lost a gold passage would otherwise look better than it is."""
    from gear.eval.report import evaluate

    questions = qa_file(tmp_path, [musique({"title": "Etna", "paragraph_text": "Etna is a volcano on Sicily."},
                                           {"title": "Mars", "paragraph_text": "Mars is a planet."}),
                                   {**musique({"title": "Sicily"}), "id": "whole"}])
    report = evaluate(engine, questions, Settings().with_(retriever="bm25"), (2,))
    assert report.gold_missing == {"q": ["Mars"]} and report.skipped == []
    assert report.to_dict()["gold_missing"] == {"q": ["Mars"]}
    assert [r.id for r in report.questions] == ["q", "whole"] and report.questions[0].n_gold == 1


def test_gear_eval_says_which_gold_passages_the_index_lacks(engine: Engine, tmp_path: Path, capsys) -> None:
    from gear.cli.evaluate import _print_report
    from gear.eval.report import evaluate

    questions = qa_file(tmp_path, [musique({"title": "Etna", "paragraph_text": "Etna is a volcano on Sicily."},
                                           {"title": "Mars", "paragraph_text": "Mars is a planet."})])
    _print_report(evaluate(engine, questions, Settings().with_(retriever="bm25"), (2,)).to_dict(), [2])
    shown = " ".join(capsys.readouterr().out.split())
    assert ("1 question was scored on part of its gold: the index lacks 1 gold passage (e.g. 'Mars' of 'q'), and "
            "recall counts only those found.") in shown  # in the Evaluate page's words


def test_the_evaluate_page_says_what_its_recall_leaves_out() -> None:
    from gear.eval.report import gold_note
    from studio.core.safe import esc_md

    assert gold_note({"skipped": [], "gold_missing": {}}) == ""
    assert gold_note({"skipped": ["a"], "gold_missing": {"q": ["*Mars*"], "r": ["X", "Y"]}}, name=esc_md) == (
        "1 question skipped: none of its gold passages is in this index; 2 questions were scored on part of their "
        "gold: the index lacks 3 gold passages (e.g. &#42;Mars&#42; of q), and recall counts only those found.")
