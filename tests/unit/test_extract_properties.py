"""Property-based tests: the extraction parser path never raises, whatever the model writes, and its output is
always clean (three non-empty, whitespace-normalised, bounded strings; no case-insensitive duplicates)."""

from __future__ import annotations

import json
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gear.extract.runner import MAX_PART_CHARS, Record, parse_extraction
from gear.parsing import parse_triples

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Fragments the model (or an adversary) writes: brackets, quotes, the paper's tuple style, keys, fences, escapes.
PIECES = st.sampled_from([
    "(", ")", "[", "]", "{", "}", '"', "'", ",", ":", "\n", "\\", "```", "```json\n", '("', '", "', '")',
    "named_entities",
    '"triples"', '{"triples": [', '["a", "b", "c"]', "('x', 'y', 'z')", "null", "true", "1e999", "NaN", "\u0000",
    "\ufeff", "é", "😀", " ", "\t", "/*", "*/", "//", "...",
])
ADVERSARIAL = st.one_of(
    st.text(max_size=400),
    st.lists(PIECES, max_size=200).map("".join),
    st.builds(lambda piece, n: piece * n, PIECES, st.integers(0, 3000)),
    st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
                 lambda children: st.one_of(st.lists(children, max_size=5),
                                            st.dictionaries(st.text(max_size=10), children, max_size=5)),
                 max_leaves=40).map(lambda value: json.dumps(value, allow_nan=True)),
    # triples with a part near the length limit, some repeated in another case (too long, duplicate, kept)
    st.lists(st.tuples(st.integers(MAX_PART_CHARS - 2, MAX_PART_CHARS + 2), st.sampled_from(["s", "S"])),
             max_size=4).map(lambda parts: json.dumps({"triples": [[c * n, "p", "o"] for n, c in parts]})),
)


@FAST
@given(text=ADVERSARIAL, title=st.text(max_size=40), passage=st.text(max_size=200), grounded=st.booleans())
def test_parse_extraction_never_raises_and_output_is_clean(text: str, title: str, passage: str, grounded: bool) -> None:
    triples, entities, stats, warnings = parse_extraction(text, title, passage, require_grounded=grounded)
    assert isinstance(warnings, list) and all(isinstance(e, str) and e for e in entities)
    keys = set()
    for triple in triples:
        assert len(triple) == 3
        for part in triple:
            assert isinstance(part, str) and part and part == " ".join(part.split()) and len(part) <= MAX_PART_CHARS
        keys.add(tuple(part.casefold() for part in triple))
    assert len(keys) == len(triples)
    # every triple the parser read is kept or counted under exactly one reason for dropping it
    read = parse_triples(text)
    parser_duplicates = sum(int(n) for w in read.warnings for n in re.findall(r"removed (\d+) duplicate", w))
    assert stats.too_long == sum(max(map(len, t)) > MAX_PART_CHARS for t in read.triples)
    assert grounded or stats.ungrounded == 0
    assert len(read.triples) == len(triples) + stats.too_long + stats.ungrounded + stats.duplicates - parser_duplicates
    assert triples == [t for t in read.triples if t in set(triples)]  # kept in the order read


@FAST
@given(value=st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20)),
                          lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=8), c,
                                                                                          max_size=4)),
                          max_leaves=30))
def test_parse_extraction_of_any_json_value(value: object) -> None:
    parse_extraction(json.dumps(value))
    parse_extraction(value)  # not even a string


@FAST
@given(line=st.one_of(st.text(max_size=300), st.lists(PIECES, max_size=60).map("".join)))
def test_journal_record_reader_never_raises(line: str) -> None:
    record = Record.from_json(line)
    assert record is None or isinstance(record, Record)


@FAST
@given(triples=st.lists(st.lists(st.text(max_size=15), min_size=3, max_size=3), max_size=20))
def test_valid_schema_answers_keep_every_clean_triple(triples: list[list[str]]) -> None:
    parsed, _, stats, _ = parse_extraction(json.dumps({"named_entities": [], "triples": triples}))
    clean = {tuple(" ".join(p.split()).casefold() for p in t) for t in triples if all(p.split() for p in t)}
    assert {tuple(p.casefold() for p in t) for t in parsed} == clean
    assert len(parsed) + stats.malformed + stats.duplicates == len(triples)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=2000))
def test_journal_loads_any_file_content(tmp_path_factory, data: bytes) -> None:  # type: ignore[no-untyped-def]
    from gear.extract.runner import JOURNAL, Journal

    directory = tmp_path_factory.mktemp("journal")
    (directory / JOURNAL).write_bytes(data)
    journal = Journal(directory)
    assert all(isinstance(r, Record) for r in journal.records.values())
    assert (directory / JOURNAL).read_bytes() == data[: len((directory / JOURNAL).read_bytes())]
