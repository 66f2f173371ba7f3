"""The prompts of the peer methods, in our own words: IRCoT's reasoning step (Trivedi et al. 2023) and HippoRAG 2's
recognition filter (Gutiérrez et al. 2025).

- IRCoT: an instruction and one worked example in IRCoT's layout ("Wikipedia Title:" paragraphs, "Q:", "A:" with the
  chain of thought), then the paragraphs collected so far, the question and the sentences already written; the
  model writes the next sentence, and "So the answer is: …" when it is done.
- The filter: the facts matched to the query, numbered; the model names the numbers of those that help answer the
  question (numbers, not the facts themselves, so nothing has to be matched back fuzzily). A JSON schema keeps the
  answer parseable in both prompt profiles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from gear.prompts.paper import format_docs

ANSWER_MARKER = "So the answer is:"

IRCOT_INSTRUCTION = (
    "Answer the question by reasoning over the paragraphs one step at a time. Write only the next sentence of the "
    "reasoning: a single fact from the paragraphs that brings you closer to the answer, or, when the sentences so "
    f'far are enough, a final sentence of the form "{ANSWER_MARKER} <answer>."'
)

IRCOT_EXAMPLE = f"""\
Wikipedia Title: Rusalka (opera)
Rusalka, Op. 114, is an opera by Antonín Dvořák, first performed at the National Theatre in Prague in 1901.

Wikipedia Title: Antonín Dvořák
Antonín Leopold Dvořák (1841–1904) was a Czech composer, born in Nelahozeves, a village in Bohemia.

Wikipedia Title: Bohemia
Bohemia is the largest historical region of the Czech lands. Its capital and largest city is Prague.

Q: What is the capital of the region where the composer of the opera Rusalka was born?
A: The opera Rusalka was composed by Antonín Dvořák. Antonín Dvořák was born in Nelahozeves, in Bohemia. The \
capital of Bohemia is Prague. {ANSWER_MARKER} Prague."""


def ircot_prompt(question: str, passages: Iterable[tuple[str, str]], thoughts: Sequence[str]) -> str:
    """The reasoning step: instruction, the worked example, then the collected paragraphs, Q and the thoughts so far."""
    so_far = " ".join(t.strip() for t in thoughts if t.strip())
    return (f"{IRCOT_INSTRUCTION}\n\n# Example\n\n{IRCOT_EXAMPLE}\n\n# Your turn\n\n{format_docs(passages)}"
            f"Q: {question}\nA: {so_far}").rstrip() + ("\n\nNext sentence:" if so_far else "")


FILTER_INSTRUCTION = (
    "A search matched the facts below to a question. Keep only the facts that help to answer the question, directly "
    "or as one step of a chain of reasoning, and leave out the rest. Choose only from the list; never add a fact."
)

FILTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"keep": {"type": "array", "items": {"type": "integer"}}},
    "required": ["keep"],
}


def filter_prompt(question: str, facts: Sequence[Sequence[str]]) -> str:
    """The recognition filter over numbered (subject, predicate, object) facts; the answer is {"keep": [numbers]}."""
    listed = "\n".join(f"[{n}] (" + ", ".join(f'"{x}"' for x in fact) + ")" for n, fact in enumerate(facts, 1))
    return (f"{FILTER_INSTRUCTION}\n\nQuestion: {question}\n\nFacts:\n{listed}\n\n"
            'Reply with JSON: {"keep": [the numbers of the facts to keep]}, or {"keep": []} if none helps.')
