"""The prompts GeAR sends: the paper's appendix prompts verbatim (paper) and the small-model profile (small), which
keeps the paper's instructions but asks for schema-constrained JSON, numbers the memory's facts so the reasoner can
cite them, and shows the rewriter the questions already asked. The paper's prompts are this package's face.

Beside them: peers (the peer methods' prompts, in our own words) and order (the order of the passages in a
read prompt)."""

from gear.prompts.paper import (
    QA_NO_PASSAGES,
    QA_WITH_PASSAGES,
    QUERY_REWRITING,
    READER,
    READER_MEMORY_CLAUSE,
    REASONING_FOR_TERMINATION,
    TRIPLE_EXTRACTION,
    extraction_prompt,
    format_docs,
    format_triples,
    qa_prompt,
    reader_prompt,
    reasoning_prompt,
    rewriting_prompt,
)

__all__ = [
    "QA_NO_PASSAGES",
    "QA_WITH_PASSAGES",
    "QUERY_REWRITING",
    "READER",
    "READER_MEMORY_CLAUSE",
    "REASONING_FOR_TERMINATION",
    "TRIPLE_EXTRACTION",
    "extraction_prompt",
    "format_docs",
    "format_triples",
    "qa_prompt",
    "reader_prompt",
    "reasoning_prompt",
    "rewriting_prompt",
]
