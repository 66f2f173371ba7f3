"""`gear serve-llm`'s parts without a model: requests made to answer as LocalLLM does, usage added to streamed answers,
one-line errors for a missing server extra and a busy port (tests/integration/test_llm_server.py runs the real one)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
from typing import Any

import pytest
from typer.testing import CliRunner

from gear.cli import app
from gear.llm import LLMError
from gear.llm import server as llm_server

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def test_requests_get_local_sampling_and_llama_cpp_shape() -> None:
    sent = {"messages": [], "response_format": {"type": "json_schema", "json_schema": {"name": "o", "schema": SCHEMA}}}
    adjusted = json.loads(llm_server.adjust_request(json.dumps(sent).encode()))
    assert adjusted["repeat_penalty"] == 1.0
    assert adjusted["response_format"] == {"type": "json_object", "schema": SCHEMA}
    kept = json.loads(llm_server.adjust_request(b'{"repeat_penalty": 1.3, "response_format": {"type": "text"}}'))
    assert kept == {"repeat_penalty": 1.3, "response_format": {"type": "text"}}
    assert llm_server.adjust_request(b"not json") == b"not json"
    assert llm_server.adjust_request(b"[1]") == b"[1]"


def test_middleware_rewrites_chat_bodies_only() -> None:
    seen: list[tuple[str, bytes, dict[bytes, bytes]]] = []

    async def inner(scope: dict[str, Any], receive: Any, send: Any) -> None:
        message = await receive()
        seen.append((scope["path"], message["body"], dict(scope["headers"])))

    middleware = llm_server.RequestDefaults(inner)

    def call(path: str, body: bytes) -> None:
        parts = [body[:5], body[5:]]

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": parts.pop(0), "more_body": bool(parts)}

        scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"content-length", b"%d" % len(body))]}
        asyncio.run(middleware(scope, receive, None))

    call("/v1/chat/completions", b'{"messages": []}')
    call("/v1/models", b'{"messages": []}')
    (_, body, headers), (_, untouched, _) = seen
    assert json.loads(body) == {"messages": [], "repeat_penalty": 1.0}
    assert headers[b"content-length"] == str(len(body)).encode()
    assert untouched == b"{\"mes"  # other routes read the original stream (its first part here)


class FakeLlama:
    n_tokens = 57  # prompt 50 + 7 generated, the last (EOS) never evaluated

    def tokenize(self, data: bytes, add_bos: bool, special: bool) -> list[int]:
        return list(range(len(data.split())))


def test_streamed_answers_end_with_usage() -> None:
    def chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
        delta = {"content": content} if content is not None else {}
        return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    words = "one two three four five six seven"
    chunks = [chunk(None), *(chunk(w + " ") for w in words.split()), chunk(None, "stop")]
    out = list(llm_server.with_usage(FakeLlama(), iter(chunks)))
    assert all("usage" not in c for c in out[:-1])
    assert out[-1]["usage"] == {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}
    assert llm_server.stream_usage(FakeLlama(), words, "length")["prompt_tokens"] == 51


def test_stream_usage_wraps_only_chat_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("fastapi")
    server_app = pytest.importorskip("llama_cpp.server.app")
    import llama_cpp

    captured: dict[str, Any] = {}

    async def original(**kwargs: Any) -> None:
        captured.update(kwargs)

    monkeypatch.setattr(server_app, "get_event_publisher", original)  # restored after the test
    llm_server._install_stream_usage()
    publisher = server_app.get_event_publisher
    llm_server._install_stream_usage()  # idempotent
    assert server_app.get_event_publisher is publisher is not original and publisher.gear_usage is True
    asyncio.run(publisher(llama_call=llama_cpp.Llama.create_chat_completion, kwargs={}))
    assert captured["llama_call"] is not llama_cpp.Llama.create_chat_completion
    asyncio.run(publisher(llama_call=llama_cpp.Llama.__call__, kwargs={}))
    assert captured["llama_call"] is llama_cpp.Llama.__call__


def test_missing_server_extra_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sse_starlette" else real(name))
    with pytest.raises(LLMError, match=r"^sse_starlette is not installed, so the LLM server cannot start: install "
                                       r"llama-cpp-python's server extra"):
        llm_server.require_server()
    result = CliRunner().invoke(app, ["serve-llm", "--port", "18432"], env={"COLUMNS": "400"})
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: sse_starlette is not installed") and \
        "llama-cpp-python[server]==0.3.36" in lines[0]


def test_busy_port_is_one_line_before_loading_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_server, "require_server", lambda: None)
    monkeypatch.setattr(llm_server, "build_app", lambda *a, **k: pytest.fail("loaded the model for a busy port"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(LLMError, match=f"cannot serve on 127.0.0.1:{port}"):
            llm_server.check_port_free("127.0.0.1", port)
        if importlib.util.find_spec("uvicorn") is None:
            return
        result = CliRunner().invoke(app, ["serve-llm", "--port", str(port)], env={"COLUMNS": "400"})
    assert result.exit_code == 2
    assert [line for line in result.output.splitlines() if line.strip()] == [
        f"error: cannot serve on 127.0.0.1:{port} (Address already in use): choose another --port or --host (is a "
        "server already running there?)"]
