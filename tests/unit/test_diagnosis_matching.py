"""Answers matched as a person reads them (gear.diagnosis.matching), in the diagnosis and the answer suggestions
alike, and which hop each gold passage serves (gear.diagnosis.hops)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.diagnosis import diagnose
from gear.diagnosis.facts import TraceFacts
from gear.diagnosis.gold_marks import suggest
from gear.diagnosis.hops import hops
from gear.diagnosis.matching import form_only, holds, is_yes_no, normalise
from gear.events import RunStarted
from gear.measures import normalize_answer
from gear.trace import Trace
from tests.unit.test_diagnose import PASSAGES, good_gear_run, start


@pytest.mark.parametrize(("text", "answer"), [
    ("Seabiscuit is Laura Hillenbrand's non-fiction book.", "Laura Hillenbrand"),  # a possessive
    ("as told in Stephen Rebello's account", "Stephen Rebello"),
    ("He signed it on 4 July 1776 in Philadelphia.", "July 4, 1776"),  # a date written otherwise
    ("born 1776-07-04", "4th July 1776"),
    ("The band toured twice.", "2"),  # a number in words
])
def test_a_text_holds_an_answer_written_otherwise(text: str, answer: str) -> None:
    assert holds(text, answer)
    assert f" {normalize_answer(answer)} " not in f" {normalize_answer(text)} "  # SQuAD's words alone miss it


@pytest.mark.parametrize(("text", "answer"), [("He was born in 1776.", "July 4, 1776"), ("Laura Hillenbrandt", "Laura"
                                              " Hillenbrand"), ("the Niger River", "Nigeria")])
def test_a_text_does_not_hold_another_or_a_less_specific_answer(text: str, answer: str) -> None:
    assert not holds(text, answer)


@pytest.mark.parametrize(("answer", "gold"), [("2", "twice"), ("Niger", "Niger River"), ("Paris", "Paris, France"),
                                              ("Sir Elton John", "Elton John"), ("Kennedy", "John F. Kennedy"),
                                              ("5 May 1990", "May 5, 1990"), ("in February 1929", "1929"),
                                              ("Gillian Chung, Bobo Chan, Cecilia Cheung", "Gillian Chung, Bobo Chan, "
                                               "and Cecilia Cheung"),
                                              ("Ed Roland performed as lead vocalist of the band", "lead vocalist")])
def test_right_in_substance(answer: str, gold: str) -> None:
    assert form_only(answer, [gold])


@pytest.mark.parametrize(("answer", "gold"), [("Somerset", "Weston-super-Mare, Somerset"), ("1990", "May 5, 1990"),
                                              ("United", "United Kingdom"), ("Nigeria", "Niger River"),
                                              ("John", "John Smith"), ("yes", "no"), ("United Kingdom", "United"),
                                              ("He was born in 1953, not 1965", "1965")])
def test_less_specific_or_another_answer_is_wrong(answer: str, gold: str) -> None:
    assert form_only(answer, [gold]) == ""


def test_the_normalisation_is_squads_and_a_little_more() -> None:
    assert normalise("The Cathedral of St. Peter's, Bremen!") == "cathedral of st peter bremen"
    assert is_yes_no(["yes"]) and is_yes_no(["No", "no"]) and not is_yes_no(["Norway"]) and not is_yes_no([])


def test_the_diagnosis_and_the_suggestions_match_answers_alike(tiny_index: Path, make_encoder,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """'Laura Hillenbrand' in "Laura Hillenbrand's book": the gold passage holds the answer — no dataset issue —
    and the suggestions find the passage (both through gear.diagnosis.matching.holds)."""
    monkeypatch.setitem(PASSAGES, 3, ("Seabiscuit", "Seabiscuit: An American Legend is Laura Hillenbrand's "
                                                    "non-fiction book."))
    trace = Trace([start(answers=["Laura Hillenbrand"]), *good_gear_run(answer="Seabiscuit").events[1:]])
    d = diagnose(trace)
    assert d.answer is not None and d.answer.in_gold_passages is True and d.category == "answer"
    from gear.agent.engine import Engine
    from gear.config import Settings

    backend = Engine.open(tiny_index, Settings(retriever="bm25"), encoder=make_encoder()).backend
    found = suggest(backend, "Who wrote the first program?", ["Ada Lovelace's"])
    assert [s.title for s in found][:1] == ["Ada Lovelace"]


def test_a_yes_or_no_gold_is_no_dataset_issue() -> None:
    """A comparison's gold "yes" is in no passage's words: that says nothing of the gold passages."""
    d = diagnose(Trace([start(answers=["yes"]), *good_gear_run(answer="no").events[1:]]), passages=PASSAGES)
    assert d.answer is not None and d.answer.in_gold_passages is None and d.category == "answer"


def test_the_question_names_the_first_hop_and_the_text_leads_to_the_next() -> None:
    facts = TraceFacts.of(good_gear_run(), PASSAGES)
    found = hops(facts, [1, 2, 3])
    assert (found[1].hop, found[1].named) == (1, True)  # "Bremen Cathedral" is in the question
    # "St. Peter's Basilica": "St. Peter" is in Bremen's text and not in the question; "basilica" is in both
    assert (found[2].hop, found[2].source, found[2].words) == (2, 1, ("st", "peter"))
    assert (found[3].hop, found[3].source, found[3].name) == (3, 2, "Vatican City")
    assert found[2].named_by("Saint Peter") is False and found[2].named_by("St. Peter") is True


def test_a_comparison_names_both_and_no_title_named_falls_to_the_question_words() -> None:
    question = "Which is older, Lund Cathedral or Speyer Cathedral?"
    facts = TraceFacts.of(Trace([start(gold=[4, 8]).__class__(0, question, "gear", "hybrid", {}, "", [4, 8], [])]),
                          PASSAGES)
    assert [h.hop for h in hops(facts, [4, 8]).values()] == [1, 1]
    facts = TraceFacts.of(Trace([start(gold=[6, 2]).__class__(0, "Where was the church consecrated in 1322?", "gear",
                                                              "hybrid", {}, "", [6, 2], [])]), PASSAGES)
    found = hops(facts, [6, 2])
    assert found[6].hop == 1 and not found[6].named and found[2].hop == 2  # the question's words are Cologne's
    # a question naming no gold passage but describing two: both hop 1 (each text holds half its words or more)
    asked = "Which Catholic cathedral was consecrated in 1322, and which is in Steubenville, Ohio?"
    facts = TraceFacts.of(Trace([RunStarted(0, asked, "gear", "hybrid", {}, "", [6, 7], [])]), PASSAGES)
    assert [h.hop for h in hops(facts, [6, 7]).values()] == [1, 1]
