"""A stand-in for llama.cpp's llama-server, for the unit tests of the owned server
(tests/unit/test_llm_owned_server.py).

It takes llama-server's command line (only --alias, --host and --port matter), answers /health with 503 for
FAKE_LOAD_SECONDS and 200 afterwards, and /v1/chat/completions with "echo: <last user message>" (streamed when asked,
usage in the last chunk, prompt_tokens_details.cached_tokens as llama-server reports it). A user message containing
"DIE" makes it exit in the middle of the answer, as a crash would. Each start appends its pid to FAKE_STARTS_FILE.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

READY_AT = time.monotonic() + float(os.environ.get("FAKE_LOAD_SECONDS", "0.3"))


class Handler(BaseHTTPRequestHandler):
    alias = "fake"

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/health":
            if time.monotonic() < READY_AT:
                return self._json(503, {"error": {"code": 503, "message": "Loading model"}})
            return self._json(200, {"status": "ok"})
        return self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = "echo: " + body["messages"][-1]["content"]
        usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14,
                 "prompt_tokens_details": {"cached_tokens": 5}}
        if not body.get("stream"):
            if "DIE" in text:
                os._exit(3)
            return self._json(200, {"id": "1", "object": "chat.completion", "created": 0, "model": self.alias,
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": text}}],
                                    "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def event(delta: dict, finish: str | None = None, with_usage: bool = False) -> None:
            chunk = {"id": "1", "object": "chat.completion.chunk", "created": 0, "model": self.alias,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if with_usage:
                chunk = {**chunk, "choices": [], "usage": usage}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        for piece in (text[:6], text[6:]):
            event({"content": piece})
            if "DIE" in text:
                os._exit(3)
        event({}, "stop")
        event({}, with_usage=True)
        self.wfile.write(b"data: [DONE]\n\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alias", default="fake")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args, _ = parser.parse_known_args()
    Handler.alias = args.alias
    starts = os.environ.get("FAKE_STARTS_FILE")
    if starts:
        with open(starts, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
    print(f"fake llama-server {os.getpid()} on {args.host}:{args.port}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    sys.exit(main())
