"""The small-model profile: the paper's reader, reasoner and rewriter, with the paper's instructions kept word for
word, changed only where a 1-3B model needs help to follow the same method:

- answers are JSON constrained by a schema (a grammar on llama.cpp, `json_schema` on OpenAI-compatible servers), so
  every answer parses and repetition loops stop at a cap;
- the reasoner sees the gist memory as numbered facts and must name the numbers that hold its answer, so the agent
  can check that "answerable" is grounded in the memory (the paper's reasoner-hallucination error, caught live);
- the rewriter can be shown the questions already asked, when its first answer repeated one.

Every trace records which profile ran (`prompts` in its settings).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gear.prompts.paper import QUERY_REWRITING, READER, READER_MEMORY_CLAUSE, REASONING_FOR_TERMINATION, format_triples

MAX_FACTS = 10  # facts per read; the paper's reader lists a handful, a small model loops without a cap
MAX_CITED = 6

_FACT = {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3}

READER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": _FACT, "maxItems": MAX_FACTS}},
    "required": ["facts"],
}

REASONER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answerable": {"type": "boolean"},
        "answer": {"type": "string"},
        "facts": {"type": "array", "items": {"type": "integer"}, "maxItems": MAX_CITED},
        "why": {"type": "string"},
    },
    "required": ["answerable", "answer", "facts", "why"],
}

REWRITER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"next_question": {"type": "string"}},
    "required": ["next_question"],
}

READER_REPLY = (
    '\n\nReply with JSON only: {{"facts": [["subject", "predicate", "object"], ...]}}, at most '
    f"{MAX_FACTS} facts, each stated in the documents."
)

REASONER_REPLY = """\
# Your reply (JSON only):
{{"answerable": true, "answer": "...", "facts": [numbers of the facts that state the answer], "why": ""}}
or
{{"answerable": false, "answer": "", "facts": [], "why": "what is missing"}}"""

REWRITER_EARLIER = "\nThese questions were already asked; ask something different:\n{earlier}\n"
REWRITER_REPLY = '\nReply with JSON only: {{"next_question": "..."}}'


def numbered_facts(triples: Sequence[Sequence[str]]) -> str:
    """The memory as numbered facts, [1] ("s", "p", "o"), one per line, so answers can cite them."""
    return "\n".join(f"[{n}] {format_triples([t])}" for n, t in enumerate(triples, 1))


def reader_prompt(docs: str, query: str, memory: Sequence[Sequence[str]] | None = None) -> str:
    """The paper's reader; the preliminary facts (memory) are listed under the question, the answer is JSON."""
    docs = docs.rstrip("\n")
    head, _ = READER.rsplit("\nFacts: {triples}", 1)
    if memory is None:
        text = head.format(docs=docs, query=query, memory_clause="")
    else:
        text = head.format(docs=docs, query=query, memory_clause=READER_MEMORY_CLAUSE)
        text += f"\nPreliminary facts: {format_triples(memory)}"
    return text + READER_REPLY.format()


def reasoning_prompt(query: str, triples: Sequence[Sequence[str]]) -> str:
    """The paper's termination reasoning over numbered facts, answered as JSON citing the facts it uses."""
    head, _ = REASONING_FOR_TERMINATION.split("Your reply must follow the required format:", 1)
    head = head.replace("Facts: {triples}", "Facts:\n{triples}")
    rules = ("If the provided facts contain the answer to the question, reply answerable true with the answer and the "
             "numbers of the facts that state it. If not, reply answerable false and explain why.\n\n")
    return head.format(query=query, triples=numbered_facts(triples)) + rules + REASONER_REPLY.format()


def rewriting_prompt(query: str, triples: Sequence[Sequence[str]], reason: str,
                     earlier: Sequence[str] = ()) -> str:
    """The paper's query re-writing with its example; with `earlier`, the questions already asked are listed."""
    head, _ = QUERY_REWRITING.rsplit("\nNext Question:", 1)
    text = head.format(query=query, triples=format_triples(triples), reason=reason)
    if earlier:
        text += REWRITER_EARLIER.format(earlier="\n".join(f"- {q}" for q in earlier))
    return text + REWRITER_REPLY.format()
