"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio) via the `openai` package.

Temperature is always 0 (the paper's setting, and it makes the record/replay cache meaningful). Retries are the
client's own (exponential back-off on 429/5xx/connection errors); what is left after them becomes an `LLMError` whose
one line says what to do and never carries the API key.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from gear.llm.base import LLMError, LLMResult, Message, estimate_tokens

_KEY_PATTERN = re.compile(r"\b(sk|key|token)-[A-Za-z0-9_\-*]{6,}", re.IGNORECASE)
_PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key but the client insists on one


def scrub(text: str, secret: str | None) -> str:
    """One line, secrets removed: the key itself and anything that looks like a key."""
    line = " ".join(str(text).split())
    if secret:
        line = line.replace(secret, "***")
    return _KEY_PATTERN.sub("***", line)[:200]


class OpenAILLM:
    """Chat completions against `base_url` (None = api.openai.com) with `model`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        seed: int | None = 0,
    ) -> None:
        import openai  # imported here so the package loads without the dependency being exercised

        if not model:
            raise LLMError("no LLM model name given: set GEAR_LLM_MODEL (e.g. gpt-4o-mini)")
        if not api_key and base_url is None:
            raise LLMError("no OpenAI API key: set OPENAI_API_KEY, or GEAR_LLM_BASE_URL for a local server")
        self.model = model
        self.base_url = base_url
        self.seed = seed
        self._secret = api_key
        self._json_schema_supported = True
        self._lock = threading.Lock()
        self._client = openai.OpenAI(
            api_key=api_key or _PLACEHOLDER_KEY, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def _request(self, messages: list[Message], response_format: dict | None, max_tokens: int) -> Any:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": max_tokens,
        }
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if response_format is not None:
            kwargs["response_format"] = response_format
        return self._client.chat.completions.create(**kwargs)

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512) -> LLMResult:
        import openai

        response_format = None
        if json_schema is not None and self._json_schema_supported:
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": json_schema, "strict": False},
            }
        started = time.perf_counter()
        try:
            try:
                response = self._request(messages, response_format, max_tokens)
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                if response_format is None:
                    raise
                # the server may not do structured output: ask once more in plain text; if that works, stop asking
                response = self._request(messages, None, max_tokens)
                with self._lock:
                    self._json_schema_supported = False
        except openai.OpenAIError as exc:
            raise self._error(exc) from None
        seconds = time.perf_counter() - started
        return self._result(response, messages, seconds)

    def _result(self, response: Any, messages: list[Message], seconds: float) -> LLMResult:
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = (getattr(message, "content", None) or "") if message is not None else ""
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None) if usage is not None else None
        completion_tokens = getattr(usage, "completion_tokens", None) if usage is not None else None
        if not isinstance(prompt_tokens, int):
            prompt_tokens = estimate_tokens("\n".join(m.get("content", "") for m in messages))
        if not isinstance(completion_tokens, int):
            completion_tokens = estimate_tokens(text)
        return LLMResult(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            seconds=seconds,
            model=str(getattr(response, "model", None) or self.model),
        )

    def _error(self, exc: Exception) -> LLMError:
        """Translate client errors into one actionable line without the key."""
        import openai

        where = self.base_url or "api.openai.com"
        detail = scrub(getattr(exc, "message", None) or str(exc), self._secret)
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            text = f"LLM server {where} rejected the API key: check OPENAI_API_KEY"
        elif isinstance(exc, openai.RateLimitError):
            text = f"LLM server {where} kept rate-limiting after retries: wait, lower concurrency or raise your quota"
        elif isinstance(exc, openai.NotFoundError):
            text = f"LLM server {where} does not know model {self.model!r} (or the URL is wrong): check GEAR_LLM_MODEL"
        elif isinstance(exc, openai.APITimeoutError):
            text = f"LLM server {where} timed out: check it is running or raise the timeout"
        elif isinstance(exc, openai.APIConnectionError):
            text = f"cannot reach LLM server {where}: check GEAR_LLM_BASE_URL and that the server is running"
        elif isinstance(exc, openai.APIStatusError):
            text = f"LLM server {where} answered HTTP {exc.status_code} for model {self.model!r}"
        else:
            text = f"LLM call to {where} failed"
        return LLMError(f"{text} ({detail})" if detail else text)
