"""What the agent asks the LLM at each step, per prompt profile: the prompt, the JSON schema (small profile) and the
token budget, as an `Ask` (RunContext.ask makes the call). The steps never build a prompt themselves, so the two
profiles differ only here and in gear.prompts.

Budgets are set from recorded runs (assets/llm_cache): reads generate ≈20-150 tokens, verdicts ≈25-65, rewrites
≈20-30, answers ≈5; each cap leaves room above the longest seen, and the small profile's schemas cap the facts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gear.config import PromptProfile
from gear.prompts import paper, small


@dataclass(frozen=True, slots=True)
class Ask:
    """One LLM call of the method: which step, the prompt, an optional JSON schema and the most tokens to write."""

    step: str
    prompt: str
    schema: dict | None
    max_tokens: int


def read(profile: PromptProfile, role: str, docs: str, question: str, memory: Sequence[Sequence[str]] | None
         ) -> Ask:
    if profile == "small":
        return Ask(f"read ({role})", small.reader_prompt(docs, question, memory), small.READER_SCHEMA, 320)
    return Ask(f"read ({role})", paper.reader_prompt(docs, question, memory), None, 384)


def reason(profile: PromptProfile, question: str, memory: Sequence[Sequence[str]]) -> Ask:
    if profile == "small":
        return Ask("reason", small.reasoning_prompt(question, memory), small.REASONER_SCHEMA, 160)
    return Ask("reason", paper.reasoning_prompt(question, memory), None, 160)


def rewrite(profile: PromptProfile, question: str, memory: Sequence[Sequence[str]], why: str,
            earlier: Sequence[str] = ()) -> Ask:
    if profile == "small":
        return Ask("rewrite", small.rewriting_prompt(question, memory, why, earlier), small.REWRITER_SCHEMA, 96)
    return Ask("rewrite", paper.rewriting_prompt(question, memory, why), None, 96)


def answer(passages: Iterable[tuple[str, str]], question: str) -> Ask:
    """The paper's QA prompt in both profiles: answers stay comparable with the paper's EM/F1."""
    return Ask("qa", paper.qa_prompt(passages, question), None, 48)
