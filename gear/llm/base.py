"""The one small contract every LLM backend honours.

Engine code (extraction, reader, reasoner, rewriter) only sees `LLM.complete`, so the OpenAI-compatible client, the
embedded llama.cpp model and the record/replay cache are interchangeable, and token counts flow the same way from all
of them (the paper's efficiency claim is measured in tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

Message = dict[str, str]  # {"role": "system"|"user"|"assistant", "content": str}


@dataclass(frozen=True, slots=True)
class LLMResult:
    """One completion with its cost; `cached` marks results served from the replay cache (original tokens kept)."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    model: str
    cached: bool = False


@runtime_checkable
class LLM(Protocol):
    """A chat model called at temperature 0; `json_schema` asks for schema-constrained JSON where supported."""

    model: str

    def complete(
        self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512
    ) -> LLMResult: ...


class LLMError(RuntimeError):
    """One-line, user-facing message saying what went wrong and what to do; never contains an API key."""


def estimate_tokens(text: str) -> int:
    """Rough token count (≈4 characters per token) for servers that do not report usage."""
    return max(1, (len(text) + 3) // 4) if text else 0


def last_user_content(messages: list[Message]) -> str:
    """The text of the last user message (used to name a prompt in errors without dumping it)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return message.get("content", "")
    return messages[-1].get("content", "") if messages else ""
