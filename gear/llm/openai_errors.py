"""What an OpenAI-compatible server's failure means to the user: one line, the API key never in it.

Kept apart from the client so the wording of every failure lives in one place, and the client's code reads as the
request it makes. The servers word the same failure differently (OpenAI, vLLM and llama-cpp-python's server say
"maximum context length is M tokens", with the prompt's size in different phrases; llama.cpp's llama-server "request
(N tokens) exceeds the available context size (M tokens)"), so the context check reads the numbers out of any of
them.
"""

from __future__ import annotations

import re
from typing import Any

from gear.llm.base import LLMError

_KEY_PATTERN = re.compile(r"\b(sk|key|token)-[A-Za-z0-9_\-*]{6,}", re.IGNORECASE)
_CONTEXT = re.compile(r"maximum context length is (\d+)|exceeds? (?:the )?context (?:window|length|size) of (\d+)|"
                      r"exceeds the available context size \((\d+) tokens\)", re.IGNORECASE)
_PROMPT = re.compile(r"(\d+) (?:tokens )?in the messages|messages resulted in (\d+) tokens|"
                     r"requested tokens \((\d+)\)|request \((\d+) tokens\) exceeds", re.IGNORECASE)
_COMPLETION = re.compile(r"(\d+) in the completion", re.IGNORECASE)


def scrub(text: str, secret: str | None) -> str:
    """One line, secrets removed: the key itself and anything that looks like a key."""
    line = " ".join(str(text).split())
    if secret:
        line = line.replace(secret, "***")
    return _KEY_PATTERN.sub("***", line)[:200]


def message_of(exc: Exception) -> str:
    """The server's own message (the JSON error's "message" when there is one), else the exception's text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("detail"), str | list):
            return str(body["detail"])
    return str(getattr(exc, "message", None) or exc)


def _first_int(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    if match is None:
        return None
    return next(int(group) for group in match.groups() if group is not None)


def context_overflow(exc: Exception, where: str) -> LLMError | None:
    """The one-line error for a request longer than the server's context, or None when `exc` is something else."""
    body = getattr(exc, "body", None)
    code = getattr(exc, "code", None) or (body.get("code") if isinstance(body, dict) else None)
    text = message_of(exc)
    context = _first_int(_CONTEXT, text)
    if code != "context_length_exceeded" and context is None:
        return None
    prompt = _first_int(_PROMPT, text)
    completion = _first_int(_COMPLETION, text)
    size = f"({context})" if context is not None else "(size not reported)"
    advice = ("use fewer or shorter passages, or a server with a larger context (GEAR_LLM_CTX_PER_SLOT, "
              "gear serve-llm --n-ctx)")
    if prompt is not None and context is not None and prompt < context and completion:
        return LLMError(f"prompt of {prompt} tokens plus {completion} to generate is longer than the LLM server's "
                        f"context {size} at {where}: {advice}")
    tokens = f"prompt of {prompt} tokens" if prompt is not None else "prompt"
    return LLMError(f"{tokens} is longer than the LLM server's context {size} at {where}: {advice}")


def describe(exc: Exception, *, where: str, model: str, secret: str | None) -> LLMError:
    """Translate a client error into one actionable line without the key."""
    import openai

    overflow = context_overflow(exc, where)
    if overflow is not None:
        return overflow
    detail = scrub(message_of(exc), secret)
    text: str
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        text = f"LLM server {where} rejected the API key: check OPENAI_API_KEY"
    elif isinstance(exc, openai.RateLimitError):
        text = f"LLM server {where} kept rate-limiting after retries: wait, lower concurrency or raise your quota"
    elif isinstance(exc, openai.NotFoundError):
        text = f"LLM server {where} does not know model {model!r} (or the URL is wrong): check GEAR_LLM_MODEL"
    elif isinstance(exc, openai.APITimeoutError):
        text = (f"LLM server {where} did not answer within the timeout (not retried: it would be as slow again): "
                "raise GEAR_LLM_TIMEOUT, lower max_tokens or use a faster server")
        detail = ""
    elif isinstance(exc, openai.APIConnectionError):
        text = f"cannot reach LLM server {where}: check GEAR_LLM_BASE_URL and that the server is running"
    elif isinstance(exc, openai.APIStatusError):
        text = f"LLM server {where} answered HTTP {exc.status_code} for model {model!r}"
    else:
        text = f"LLM call to {where} failed"
    return LLMError(f"{text} ({detail})" if detail else text)


def broken_stream(where: str, pieces: int, exc: Any) -> LLMError:
    """A stream that stopped after part of the answer was shown: not retried (the part cannot be taken back)."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        why = "went silent for longer than the timeout"
    else:
        why = "closed the connection"
    return LLMError(f"LLM server {where} {why} in the middle of an answer (after {pieces} pieces): check that it is "
                    "still running, then ask again")
