"""A slow OpenAI-compatible endpoint answering as tests.scripted_llm.ScriptedLLM does: the browser tests point the app
at it (GEAR_LLM=openai) to watch a run that is really in progress — each answer streams after `delay` seconds, as a
model that reads its prompt first would — without the embedded model."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

from tests.local_http import serving
from tests.scripted_llm import ScriptedLLM


class SlowScripted(BaseHTTPRequestHandler):
    """POST /v1/chat/completions: ScriptedLLM's answer, streamed in three pieces after `delay` seconds."""

    delay: ClassVar[float] = 2.0
    calls: ClassVar[int] = 0

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls += 1
        result = ScriptedLLM().complete(body["messages"], json_schema=None)
        time.sleep(type(self).delay)
        usage = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
                 "total_tokens": result.prompt_tokens + result.completion_tokens}
        if not body.get("stream"):
            self._json({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": result.text}}], "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def event(data: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

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
        self.wfile.write(b"data: [DONE]\n\n")

    def do_GET(self) -> None:  # /v1/models
        self._json({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

    def _json(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def slow_endpoint(delay: float = 2.0) -> Iterator[str]:
    """The endpoint's base URL (…/v1) while the block runs."""
    SlowScripted.delay, SlowScripted.calls = delay, 0
    with serving(SlowScripted) as url:
        yield url
