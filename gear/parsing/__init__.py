"""Tolerant parsers for LLM output: they never raise, they report what they had to drop.

Small local models and API models alike answer in many shapes (the paper's tuple lists, JSON lists, JSON objects,
markdown, prose around code fences, broken JSON). The agent must keep going whatever comes back, so every parser
returns its best reading plus warnings, which the trace shows so a person can see why an iteration went wrong.
One module per kind of output: `triples` (OpenIE and the reader), `agent` (verdict, rewritten query, answer),
`peers` (IRCoT's thought, PPR's recognition filter); `text` holds what they share.
"""

from __future__ import annotations

from gear.parsing.agent import Verdict, parse_answer, parse_next_question, parse_reasoning
from gear.parsing.peers import Thought, parse_kept_facts, parse_thought
from gear.parsing.text import MAX_CHARS
from gear.parsing.triples import ParseResult, parse_entities, parse_triples

__all__ = [
    "MAX_CHARS",
    "ParseResult",
    "Thought",
    "Verdict",
    "parse_answer",
    "parse_entities",
    "parse_kept_facts",
    "parse_next_question",
    "parse_reasoning",
    "parse_thought",
    "parse_triples",
]
