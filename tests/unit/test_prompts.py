"""The paper's prompts are pinned line by line: a silent edit would make results incomparable with the paper."""

from __future__ import annotations

from gear import prompts
from gear.prompts import (
    QA_NO_PASSAGES,
    QA_WITH_PASSAGES,
    QUERY_REWRITING,
    READER,
    REASONING_FOR_TERMINATION,
    TRIPLE_EXTRACTION,
    format_docs,
    format_triples,
    qa_prompt,
    reader_prompt,
)


def test_extraction_prompt_lines_and_demonstrations() -> None:
    lines = TRIPLE_EXTRACTION.splitlines()
    assert lines[0] == "# Instruction"
    assert (
        "Respond with a JSON list of triples, with each triple representing a relationship in the RDF graph." in lines
    )
    assert "# Demonstration #1" in lines and "# Demonstration #2" in lines
    assert '        ("Magic Johnson", "drafted by", "Los Angeles Lakers"),' in lines
    assert '        ("George R. R. Martin", "genre", "fantasy"),' in lines
    rendered = prompts.extraction_prompt("Bremen Cathedral", "Bremen Cathedral is dedicated to St. Peter.")
    assert '{"named_entities": ["Elden Ring", "2022",' in rendered  # {{ }} render as single braces
    assert rendered.endswith("```\nBremen Cathedral\n\nBremen Cathedral is dedicated to St. Peter.")


def test_reader_prompt_keeps_the_papers_typo_and_blue_text() -> None:
    assert "You should present these facts as knowlege triples" in READER
    without = reader_prompt("Wikipedia Title: A\nx\n\n", "Q?", None)
    assert "Based on these documents,\nfind additional supporting fact(s)" in without
    assert "preliminary facts" not in without
    assert without.endswith("Question: Q?\nFacts: ")
    with_memory = reader_prompt("docs", "Q?", [("Bremen Cathedral", "dedicated to", "St. Peter")])
    assert "Based on these documents and some preliminary facts provided below,\n" in with_memory
    assert with_memory.endswith('Facts: ("Bremen Cathedral", "dedicated to", "St. Peter")')
    assert "Now you are given some documents:\ndocs\n\n\nBased" in with_memory


def test_reasoning_and_rewriting() -> None:
    assert "1. If the provided facts contain the answer to the question, your should reply as follows:" in (
        REASONING_FOR_TERMINATION
    )
    assert REASONING_FOR_TERMINATION.endswith("Why: ...\n\n# Your reply:")
    assert "Your task is to analyze the question given the provided facts and determine what else information is" in (
        QUERY_REWRITING
    )
    assert QUERY_REWRITING.endswith("Question: {query}\nFacts: {triples}\nReason: {reason}\n\nNext Question:")


def test_qa_prompts() -> None:
    assert QA_WITH_PASSAGES.startswith("As an advanced reading comprehension assistant")
    assert "Answer: August 25, 1963.\n==================\n" in QA_WITH_PASSAGES
    assert "adapted" not in QA_WITH_PASSAGES and "novel of the same name buy Jim Tully" in QA_WITH_PASSAGES
    rendered = qa_prompt([("Vatican City", "Founded in 1929.")], "When?")
    assert rendered.endswith(
        "==================\n\nWikipedia Title: Vatican City\nFounded in 1929.\n\nQuestion: When?\n\nAnswer:"
    )
    assert qa_prompt([], "When?") == QA_NO_PASSAGES.format(question="When?")
    assert QA_NO_PASSAGES.startswith("Given the following question, please present a concise, definitive answer")


def test_formatters() -> None:
    assert format_triples([("a", "b", "c"), ("d", "e", "f")]) == '("a", "b", "c"), ("d", "e", "f")'
    assert format_triples([]) == ""
    assert format_docs([("T", "x"), ("U", "y")]) == "Wikipedia Title: T\nx\n\nWikipedia Title: U\ny\n\n"


def test_templates_have_only_known_placeholders() -> None:
    import string

    expected = {
        "TRIPLE_EXTRACTION": {"wiki_title", "passage"},
        "READER": {"docs", "memory_clause", "query", "triples"},
        "REASONING_FOR_TERMINATION": {"query", "triples"},
        "QUERY_REWRITING": {"query", "triples", "reason"},
        "QA_WITH_PASSAGES": {"passages", "question"},
        "QA_NO_PASSAGES": {"question"},
    }
    for name, fields in expected.items():
        found = {f for _, f, _, _ in string.Formatter().parse(getattr(prompts, name)) if f}
        assert found == fields, name
        assert all(line == line.rstrip() for line in getattr(prompts, name).splitlines()[:-1]), name
