"""Parsers must read every shape models answer in, and never raise on anything else."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gear.parsing import (
    MAX_CHARS,
    parse_answer,
    parse_entities,
    parse_kept_facts,
    parse_next_question,
    parse_reasoning,
    parse_thought,
    parse_triples,
)

PAPER_SHAPE = """{
    "triples": [
        ("Magic Johnson", "member of sports team", "Michigan State"),
        ("Michigan State", "award", "national championship"),
    ]
}"""


def test_paper_tuple_shape_with_trailing_comma() -> None:
    result = parse_triples(PAPER_SHAPE)
    assert result.triples == [
        ("Magic Johnson", "member of sports team", "Michigan State"),
        ("Michigan State", "award", "national championship"),
    ]
    assert result.warnings == []


def test_reader_facts_line_in_prose() -> None:
    text = (
        'Facts: ("Bremen Cathedral", "dedicated to", "St. Peter"), '
        '("St. Peter\'s Basilica", "located in", "Vatican City")'
    )
    assert parse_triples(text).triples == [
        ("Bremen Cathedral", "dedicated to", "St. Peter"),
        ("St. Peter's Basilica", "located in", "Vatican City"),
    ]


def test_single_quotes_with_apostrophe_and_parentheses_in_values() -> None:
    text = "('St. Peter's Basilica', 'located in', 'Vatican City (Rome)'),"
    assert parse_triples(text).triples == [("St. Peter's Basilica", "located in", "Vatican City (Rome)")]


def test_wrong_arity_tuples_are_dropped_and_counted() -> None:
    result = parse_triples('("a", "b"), ("c", "d", "e"), ("f", "", "g"), ("h", "i", "j", "k")')
    assert result.triples == [("c", "d", "e")]
    assert any("dropped 3" in w for w in result.warnings)


def test_json_list_of_lists_in_fence_with_numbers() -> None:
    text = 'Here you go:\n```json\n[["Vatican City", "founded in", 1929], [" a ", "b", "c"], ["x", null, "y"]]\n```'
    result = parse_triples(text)
    assert result.triples == [("Vatican City", "founded in", "1929"), ("a", "b", "c")]
    assert any("dropped 1" in w for w in result.warnings)


def test_json_objects_with_various_keys() -> None:
    text = json.dumps(
        [
            {"subject": "a", "predicate": "b", "object": "c"},
            {"s": "d", "p": "e", "o": "f"},
            {"head": "g", "relation": "h", "tail": "i"},
            {"Subject": "a", "Predicate": "b", "Object": "c"},
        ]
    )
    result = parse_triples(text)
    assert result.triples == [("a", "b", "c"), ("d", "e", "f"), ("g", "h", "i")]
    assert any("duplicate" in w for w in result.warnings)


def test_extraction_dict_with_named_entities() -> None:
    text = json.dumps({"named_entities": ["Bremen", "St. Peter"], "triples": [["Bremen Cathedral", "in", "Bremen"]]})
    assert parse_triples(text).triples == [("Bremen Cathedral", "in", "Bremen")]
    assert parse_entities(text) == ["Bremen", "St. Peter"]


def test_paper_named_entities_line() -> None:
    text = '{"named_entities": ["Elden Ring", "2022", "FromSoftware", "2022"]}\n{\n "triples": [("a", "b", "c"),]\n}'
    assert parse_entities(text) == ["Elden Ring", "2022", "FromSoftware"]
    assert parse_triples(text).triples == [("a", "b", "c")]


def test_broken_json_is_repaired() -> None:
    text = '{"triples": [["Bremen Cathedral", "dedicated to", "St. Peter"], ["St. Peter", "is", "saint"'
    result = parse_triples(text)
    assert ("Bremen Cathedral", "dedicated to", "St. Peter") in result.triples


def test_empty_and_garbage() -> None:
    assert parse_triples("").triples == []
    assert parse_triples("").warnings
    assert parse_triples("I cannot find any facts.").triples == []
    assert parse_entities("nothing") == []


def test_reasoning_yes_with_answer_in_markdown() -> None:
    verdict = parse_reasoning("**Answerable:** Yes\n**Answer:** 1929")
    assert verdict.answerable is True
    assert verdict.answer == "1929"
    assert verdict.warnings == []


def test_reasoning_no_with_why() -> None:
    verdict = parse_reasoning("Answerable: No\nWhy: The facts do not say when Vatican City became a country.")
    assert verdict.answerable is False
    assert verdict.reason == "The facts do not say when Vatican City became a country."


def test_reasoning_true_false_as_in_walkthrough() -> None:
    assert parse_reasoning("answerable: true\nanswer: 1929").answerable is True
    assert parse_reasoning("ANSWERABLE: False\nWhy: missing date").answerable is False


def test_reasoning_unclear_is_not_answerable_with_warning() -> None:
    verdict = parse_reasoning("Maybe the facts suffice.")
    assert verdict.answerable is False
    assert verdict.warnings
    assert parse_reasoning("").warnings


def test_next_question() -> None:
    question, warnings = parse_next_question("Next Question: When did Vatican City become a country?\nReason: x")
    assert question == "When did Vatican City become a country?"
    assert warnings == []
    assert parse_next_question("**When was it founded?** Because the facts...")[0] == "When was it founded?"
    assert parse_next_question("")[0] == ""
    assert parse_next_question("")[1]
    question, warnings = parse_next_question("Find the founding year of Vatican City")
    assert question == "Find the founding year of Vatican City"
    assert warnings


def test_answer() -> None:
    assert parse_answer("Answer: August 25, 1963.\nBecause ...") == "August 25, 1963."
    assert parse_answer("  1929  ") == "1929"
    assert parse_answer('**Answer:** "Vatican City"') == "Vatican City"
    assert parse_answer("") == ""


ADVERSARIAL = st.lists(
    st.sampled_from([*"()[]{}\"',: \n`abc\\", '"triples"', "Answer:", "```", "Answerable:", "Next Question:", "null"]),
    max_size=80,
).map("".join)


def _check(text: str) -> None:
    result = parse_triples(text)
    assert len(result.triples) == len(set(result.triples))
    for triple in result.triples:
        assert isinstance(triple, tuple) and len(triple) == 3
        for part in triple:
            assert isinstance(part, str) and part and part == part.strip()
    assert all(isinstance(e, str) and e for e in parse_entities(text))
    verdict = parse_reasoning(text)
    assert isinstance(verdict.answerable, bool)
    question, warnings = parse_next_question(text)
    assert isinstance(question, str) and isinstance(warnings, list)
    assert isinstance(parse_answer(text), str)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    _check(text)


@settings(max_examples=300, deadline=None)
@given(ADVERSARIAL)
def test_adversarial_brackets_and_quotes(text: str) -> None:
    _check(text)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.sampled_from(["triples", "subject", "predicate", "object", "s", "p", "o", "named_entities", "x"]),
            children,
            max_size=4,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(JSONISH)
def test_arbitrary_json_values(value: object) -> None:
    _check(json.dumps(value))
    _check(repr(value))


HUGE_UNITS = ['("', "(' ", "[", '{"triples": ', '("a", "b", "c")', "\n", " \n", '{"a": [', '"']
PARSERS = (parse_triples, parse_entities, parse_reasoning, parse_next_question, parse_answer, parse_thought,
           lambda text: parse_kept_facts(text, 5))


def _steps(text: str) -> int:
    """The work every parser does on `text`, counted (not timed): lines of Python executed and builtin functions
    called, as the tracer and the profiler see them."""
    steps = 0

    def line(frame: object, event: str, arg: object):
        nonlocal steps
        steps += 1
        return line

    def call(frame: object, event: str, arg: object) -> None:
        nonlocal steps
        if event == "c_call":
            steps += 1

    sys.settrace(line)
    sys.setprofile(call)
    try:
        for parser in PARSERS:
            parser(text)
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    return steps


@pytest.mark.parametrize("unit", HUGE_UNITS)
def test_huge_inputs_are_read_without_raising(unit: str) -> None:
    _check(unit * (MAX_CHARS // len(unit)))


@pytest.mark.parametrize("unit", HUGE_UNITS)
def test_work_grows_linearly_with_the_input(unit: str) -> None:
    """Four times the input, at most about four times the work: a parser that pairs brackets or scans lines in a
    nested loop (quadratic on inputs like '("' repeated) fails here. Regular expressions run in C, unseen by the
    counter: theirs is bounded by the cap below."""
    size = MAX_CHARS // (16 * len(unit))
    small, large = _steps(unit * size), _steps(unit * 4 * size)
    assert large <= 4.5 * small + 500, (small, large)


@pytest.mark.parametrize("unit", ['("a", "b", "c")', "\n"])
def test_work_stops_growing_at_the_input_cap(unit: str) -> None:
    """Beyond MAX_CHARS the input is cut (with a warning), so three times as much costs no more."""
    at_cap = unit * (MAX_CHARS // len(unit))
    over = unit * (3 * MAX_CHARS // len(unit))
    assert _steps(over) <= _steps(at_cap) + 100
    assert any("truncated" in w for w in parse_triples(over).warnings)
    assert not any("truncated" in w for w in parse_triples(at_cap).warnings)


def test_json_answer_with_brackets_inside_strings_is_read_as_json() -> None:
    """Found by hypothesis: the tuple scan used to read '("], ["0", ")' out of JSON strings as a triple."""
    raw = '{"triples": [["Alpha", "is", "("], ["Beta", "0", ")"]]}'
    assert parse_triples(raw).triples == [("Alpha", "is", "("), ("Beta", "0", ")")]


SMALL_KEYS = ["answerable", "answer", "facts", "why", "reason", "next_question", "question", "x"]
SMALL_JSON = st.dictionaries(
    st.sampled_from(SMALL_KEYS),
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12)
    | st.lists(st.integers() | st.text(max_size=4) | st.booleans() | st.floats(allow_nan=True), max_size=4),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(SMALL_JSON)
def test_small_profile_json_replies_never_raise(value: dict) -> None:
    """The small profile's JSON verdicts and rewrites, in any shape a model could write them."""
    for text in (json.dumps(value), "```json\n" + json.dumps(value) + "\n```", json.dumps(value)[:-1]):
        _check(text)
        verdict = parse_reasoning(text)
        assert all(isinstance(n, int) for n in verdict.cited)
        assert verdict.answerable or verdict.cited == []


def test_small_profile_verdict_and_rewrite() -> None:
    verdict = parse_reasoning('{"answerable": true, "answer": "1929", "facts": [3, "4"], "why": ""}')
    assert (verdict.answerable, verdict.answer, verdict.cited) == (True, "1929", [3, 4])
    refused = parse_reasoning('{"answerable": false, "answer": "", "facts": [], "why": "the year is missing"}')
    assert (refused.answerable, refused.reason, refused.cited) == (False, "the year is missing", [])
    assert parse_reasoning('{"answerable": "yes", "answer": "Rome", "facts": [1]}').answerable
    assert parse_next_question('{"next_question": "When was Vatican City founded?"}')[0] == \
        "When was Vatican City founded?"
    # the paper's free text still parses
    assert parse_reasoning("Answerable: Yes\nAnswer: Germany").answer == "Germany"
    assert parse_next_question("Next Question: Where is X?")[0] == "Where is X?"
