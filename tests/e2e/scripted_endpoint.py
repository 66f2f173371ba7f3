"""A slow OpenAI-compatible endpoint answering as tests.scripted_llm.ScriptedLLM does: the browser tests point the app
at it (GEAR_LLM=openai) to watch a run that is really in progress — each answer streams after `delay` seconds, as a
model that reads its prompt first would — without the embedded model. Like llama-server, it reports the prompt
tokens it had read before: after its first prompt, the chat template's head (TEMPLATE_HEAD tokens) and the head shared
with the previous prompt (≈4 characters a token)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from gear.llm.speed import common_head
from tests.local_http import FakeEndpoint, serving
from tests.scripted_llm import ScriptedLLM

TEMPLATE_HEAD = 6  # "<|im_start|>system …": the tokens every templated prompt starts with


class SlowScripted(FakeEndpoint):
    """POST /v1/chat/completions: ScriptedLLM's answer, streamed in three pieces after `delay` seconds."""

    delay: ClassVar[float] = 2.0
    calls: ClassVar[int] = 0
    last_prompt: ClassVar[str] = ""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        cls.calls += 1
        result = ScriptedLLM().complete(body["messages"], json_schema=None)
        prompt = body["messages"][-1]["content"]
        seen = TEMPLATE_HEAD + common_head(cls.last_prompt, prompt) // 4 if cls.calls > 1 else 0
        cached = min(result.prompt_tokens, seen)
        cls.last_prompt = prompt
        time.sleep(cls.delay)
        usage = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                 "total_tokens": result.prompt_tokens + result.completion_tokens,
                 "prompt_tokens_details": {"cached_tokens": cached}}
        if not body.get("stream"):
            self.send_json(200, {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": result.text}}],
                                 "usage": usage})
            return
        self.start_events()
        event = self.send_event

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        event(chunk({"role": "assistant"}))
        third = max(1, len(result.text) // 3)
        for start in range(0, len(result.text), third):
            event(chunk({"content": result.text[start:start + third]}))
            time.sleep(0.05)
        event(chunk({}, "stop"))
        event({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"], "choices": [],
               "usage": usage})
        self.end_events()

    def do_GET(self) -> None:  # /v1/models
        self.send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})


@contextmanager
def slow_endpoint(delay: float = 2.0) -> Iterator[str]:
    """The endpoint's base URL (…/v1) while the block runs."""
    SlowScripted.delay, SlowScripted.calls, SlowScripted.last_prompt = delay, 0, ""
    with serving(SlowScripted) as url:
        yield url
