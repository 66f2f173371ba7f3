"""Never pay twice: a process-wide memo of deterministic LLM calls.

Every call GeAR makes is at temperature 0 with a fixed seed, so the same request always gets the same answer. When
an agent iteration repeats an earlier one (same query, same memory) its prompts are identical, and a small local
model would spend minutes recomputing them. The memo serves such calls in microseconds, marks them (source "memo")
so the trace shows the model was not asked, and keeps results exactly as they were — their tokens and seconds too,
what the answer cost when the model wrote it (a run's cost counts each request once: gear.trace.cost).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace

from gear.llm.base import LLM, LLMResult, Message, Source, TextListener, answered_at_once
from gear.llm.replay import cache_key

MAX_ENTRIES = 4096


class MemoLLM:
    """Wraps an LLM: identical requests (model, messages, schema, max_tokens) are answered once. The engine keeps one
    MemoLLM per LLM configuration for the life of the process, so the memo is the process's."""

    def __init__(self, inner: LLM, max_entries: int = MAX_ENTRIES) -> None:
        self.inner = inner
        self.model = inner.model
        self.max_entries = max_entries
        self._memo: OrderedDict[str, LLMResult] = OrderedDict()
        self._lock = threading.Lock()

    def answers_at_once(self, messages: list[Message], json_schema: dict | None, max_tokens: int) -> Source | None:
        """"memo" when this request was answered before in this process, else what the wrapped LLM says."""
        with self._lock:
            if cache_key(self.inner.model, messages, json_schema, max_tokens) in self._memo:
                return "memo"
        return answered_at_once(self.inner, messages, json_schema, max_tokens)

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        key = cache_key(self.inner.model, messages, json_schema, max_tokens)
        with self._lock:
            hit = self._memo.get(key)
            if hit is not None:
                self._memo.move_to_end(key)
        if hit is not None:
            if on_text is not None:
                on_text(hit.text)
            return replace(hit, cached=True, source="memo")
        streaming = {"on_text": on_text} if on_text is not None else {}  # older LLMs may not stream
        result = self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens, **streaming)
        with self._lock:
            self._memo[key] = result
            while len(self._memo) > self.max_entries:
                self._memo.popitem(last=False)
        return result
