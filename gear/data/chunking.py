"""Split long texts into passages of about `max_words` words, on paragraph and sentence boundaries where possible.

The paper indexes Wikipedia-paragraph-sized passages (≈100 words in MuSiQue); plain .txt/.md documents are cut to a
similar size so that one LLM extraction call sees one passage and each triple belongs to exactly one passage.
Every chunk keeps its document's title (the extraction prompt and BM25 see it, as with Wikipedia passages).
Pure functions, no I/O.
"""

from __future__ import annotations

import re

DEFAULT_CHUNK_WORDS = 120

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9À-Ý])")


_ABBREVIATIONS = frozenset({
    "st", "mr", "mrs", "ms", "dr", "jr", "sr", "prof", "gen", "col", "lt", "sgt", "capt", "mt", "ft", "no", "vol",
    "inc", "co", "ltd", "corp", "vs", "etc", "al", "fig", "ed", "eds", "rev", "hon",
})
_LAST_WORD = re.compile(r"(\w+)\.[\"')\]]*\s*$")


def _is_abbreviation(before: str) -> bool:
    """Whether the text up to a candidate break ends in an abbreviation ("St.") or an initial ("R.")."""
    match = _LAST_WORD.search(before)
    if match is None:
        return False
    word = match.group(1)
    return word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isalpha() and word.isupper())


def sentences(text: str) -> list[str]:
    """Sentences of a paragraph (end punctuation, whitespace, then a capital or digit; not after "St." or "R.")."""
    parts = []
    start = 0
    for match in _SENTENCE.finditer(text):
        if _is_abbreviation(text[start : match.end()]):
            continue
        parts.append(text[start : match.end()].strip())
        start = match.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _split_words(text: str, max_words: int) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + max_words]) for i in range(0, len(words), max_words)]


def chunk_text(text: str, max_words: int = DEFAULT_CHUNK_WORDS) -> list[str]:
    """Passages of at most `max_words` words (a single longer sentence is cut at word boundaries).

    Paragraphs are kept whole when they fit and packed together up to the limit; longer ones are split between
    sentences. Whitespace inside a passage is normalised to single spaces. Empty input gives no passages.
    """
    if max_words < 1:
        raise ValueError("max_words must be at least 1")
    units: list[str] = []
    for paragraph in _PARAGRAPH.split(text or ""):
        paragraph = " ".join(paragraph.split())
        if not paragraph:
            continue
        if len(paragraph.split()) <= max_words:
            units.append(paragraph)
            continue
        for sentence in sentences(paragraph):
            if len(sentence.split()) <= max_words:
                units.append(sentence)
            else:
                units.extend(_split_words(sentence, max_words))
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        n = len(unit.split())
        if current and size + n > max_words:
            chunks.append(" ".join(current))
            current, size = [], 0
        current.append(unit)
        size += n
    if current:
        chunks.append(" ".join(current))
    return chunks
