"""A stand-in for llama.cpp's llama-server, for the unit tests of the owned server
(tests/unit/test_llm_owned_server.py).

It takes llama-server's command line (only --alias, --host, --port and --list-devices matter: the last prints a CPU
build's empty device list and exits, as the real one does), answers /health with 503 for
FAKE_LOAD_SECONDS and 200 afterwards, and /v1/chat/completions with "echo: <last user message>" (streamed when asked,
usage in the last chunk, prompt_tokens_details.cached_tokens as llama-server reports it). A user message containing
"DIE" makes it exit in the middle of the answer, as a crash would. Each start appends its pid to FAKE_STARTS_FILE,
and each request its method, path and status to FAKE_REQUESTS_FILE (a chat request before ready gets 503, as the real
server's does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import ThreadingHTTPServer

from local_http import FakeEndpoint  # run as a script: tests/ is on sys.path

READY_AT = time.monotonic() + float(os.environ.get("FAKE_LOAD_SECONDS", "0.3"))


LOADING = {"error": {"code": 503, "message": "Loading model"}}


def note(method: str, path: str, status: int) -> None:
    requests = os.environ.get("FAKE_REQUESTS_FILE")
    if requests:
        with open(requests, "a", encoding="utf-8") as handle:
            handle.write(f"{method} {path} {status}\n")


class Handler(FakeEndpoint):
    alias = "fake"

    def do_GET(self) -> None:
        if self.path == "/health":
            status = 503 if time.monotonic() < READY_AT else 200
            note("GET", self.path, status)
            return self.send_json(status, LOADING if status == 503 else {"status": "ok"})
        return self.send_json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if time.monotonic() < READY_AT:
            note("POST", self.path, 503)
            return self.send_json(503, LOADING)
        note("POST", self.path, 200)
        text = "echo: " + body["messages"][-1]["content"]
        usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14,
                 "prompt_tokens_details": {"cached_tokens": 5}}
        if not body.get("stream"):
            if "DIE" in text:
                os._exit(3)
            return self.send_json(200, {"id": "1", "object": "chat.completion", "created": 0, "model": self.alias,
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": text}}],
                                    "usage": usage})
        self.start_events()

        def event(delta: dict, finish: str | None = None, with_usage: bool = False) -> None:
            chunk = {"id": "1", "object": "chat.completion.chunk", "created": 0, "model": self.alias,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if with_usage:
                chunk = {**chunk, "choices": [], "usage": usage}
            self.send_event(chunk)

        for piece in (text[:6], text[6:]):
            event({"content": piece})
            if "DIE" in text:
                os._exit(3)
        event({}, "stop")
        event({}, with_usage=True)
        self.end_events()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alias", default="fake")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--list-devices", action="store_true")
    args, _ = parser.parse_known_args()
    if args.list_devices:
        print("Available devices:\n  (none)")
        return
    Handler.alias = args.alias
    starts = os.environ.get("FAKE_STARTS_FILE")
    if starts:
        with open(starts, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
    print(f"fake llama-server {os.getpid()} on {args.host}:{args.port}", flush=True)
    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    sys.exit(main())
