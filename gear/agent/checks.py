"""The agent's two guards against a small model fooling itself, as pure functions over text:

- a grounded verdict: "answerable" stands only when the answer is found in the memory facts the reasoner cites and
  those facts are in the gist memory (otherwise it is the paper's reasoner hallucination, and the loop goes on);
- no repeated query: a rewritten question that, normalised, is one already asked brings no new evidence.
"""

from __future__ import annotations

from collections.abc import Sequence

from gear.measures import normalize_answer
from gear.parsing import Verdict

NOT_GROUNDED = "verdict rejected: not grounded in the gist memory"


def grounding_problem(verdict: Verdict, memory: Sequence[Sequence[str]]) -> str:
    """Why an "answerable" verdict is not grounded in the memory ("" when it is, or when it says not answerable)."""
    if not verdict.answerable:
        return ""
    answer = normalize_answer(verdict.answer or "")
    if not answer:
        return "no answer given"
    if not verdict.cited:
        return "it cites no memory fact"
    outside = [n for n in verdict.cited if not 1 <= n <= len(memory)]
    if outside:
        return f"it cites fact {outside[0]}, but the memory holds {len(memory)}"
    words = set(normalize_answer(" ".join(" ".join(memory[n - 1]) for n in verdict.cited)).split())
    missing = [w for w in answer.split() if w not in words]
    if missing:
        return f"the answer {verdict.answer!r} is not in the cited facts {verdict.cited}"
    return ""


def is_repeat(query: str, earlier: Sequence[str]) -> bool:
    """Whether `query`, normalised (case, punctuation, articles, spaces), equals a query already asked."""
    key = normalize_answer(query)
    return bool(key) and any(normalize_answer(q) == key for q in earlier)
