"""Chunking plain text into passages: bounded size, nothing lost or reordered, paragraphs and sentences respected."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gear.data.chunking import chunk_text, sentences


def test_short_text_is_one_passage_with_normalised_spaces() -> None:
    assert chunk_text("  Bremen   Cathedral\nis old.  ") == ["Bremen Cathedral is old."]
    assert chunk_text("") == [] and chunk_text(" \n\n ") == []


def test_paragraphs_are_packed_up_to_the_limit() -> None:
    text = "one two three.\n\nfour five.\n\nsix seven eight nine."
    assert chunk_text(text, 5) == ["one two three. four five.", "six seven eight nine."]


def test_long_paragraph_splits_between_sentences() -> None:
    text = "Bremen Cathedral is a church. It is dedicated to St. Peter. The city is Bremen."
    assert sentences(text) == ["Bremen Cathedral is a church.", "It is dedicated to St. Peter.", "The city is Bremen."]
    assert chunk_text(text, 7) == ["Bremen Cathedral is a church.", "It is dedicated to St. Peter.",
                                   "The city is Bremen."]


def test_a_sentence_longer_than_the_limit_is_cut_at_words() -> None:
    assert chunk_text("a b c d e f g", 3) == ["a b c", "d e f", "g"]
    with pytest.raises(ValueError):
        chunk_text("a", 0)


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab. \n!?AZ09é")), max_size=600), limit=st.integers(1, 40))
def test_chunks_are_bounded_and_keep_every_word_in_order(text: str, limit: int) -> None:
    chunks = chunk_text(text, limit)
    assert all(chunk and len(chunk.split()) <= limit for chunk in chunks)
    assert " ".join(chunks).split() == text.split()
