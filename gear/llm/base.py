"""The one small contract every LLM backend honours.

Engine code (extraction, reader, reasoner, rewriter) only sees `LLM.complete`, so the OpenAI-compatible client, the
embedded llama.cpp model and the record/replay cache are interchangeable, and token counts flow the same way from all
of them (the paper's efficiency claim is measured in tokens).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}
TextListener = Callable[[str], None]  # receives each new piece of text as the model writes it
Source = Literal["model", "record", "memo"]


@dataclass(frozen=True, slots=True)
class LLMResult:
    """One completion with its cost. `source` says who answered: the model now, a recorded answer, or this process's
    memo of an identical earlier call (no model work now); the tokens and seconds are always what the answer cost
    when the model wrote it."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    model: str
    cached: bool = False  # served without calling the model (source "record" or "memo")
    source: Source = "model"
    # of prompt_tokens, how many the server took from its prompt cache instead of reading them (None: not reported)
    cached_prompt_tokens: int | None = None


@runtime_checkable
class LLM(Protocol):
    """A chat model called at temperature 0; `json_schema` asks for schema-constrained JSON where supported;
    `on_text` receives the answer piece by piece while it is generated (the whole text at once when it was not)."""

    model: str

    def complete(
        self,
        messages: list[Message],
        *,
        json_schema: dict | None = None,
        max_tokens: int = 512,
        on_text: TextListener | None = None,
    ) -> LLMResult: ...


class LLMError(RuntimeError):
    """One-line, user-facing message saying what went wrong and what to do; never contains an API key."""


def estimate_tokens(text: str) -> int:
    """Rough token count (≈4 characters per token) for servers that do not report usage."""
    return max(1, (len(text) + 3) // 4) if text else 0


def answered_at_once(llm: LLM, messages: list[Message], json_schema: dict | None, max_tokens: int) -> Source | None:
    """Who will answer this request without the model, told before it is sent: "memo" (an identical call earlier in
    this process), "record" (a recorded answer), or None (the model, now). Asks the wrappers that can tell
    (MemoLLM, CachedLLM: their `answers_at_once`); any other LLM is the model."""
    check = getattr(llm, "answers_at_once", None)
    return check(messages, json_schema, max_tokens) if callable(check) else None


def last_user_content(messages: list[Message]) -> str:
    """The text of the last user message (used to name a prompt in errors without dumping it)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return message.get("content", "")
    return messages[-1].get("content", "") if messages else ""
