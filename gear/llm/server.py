"""The embedded model behind an OpenAI-compatible HTTP server (llama-cpp-python's), so several app sessions,
evaluations and extraction runs share one model process instead of each loading 1 GB and fighting over the cores.

The server is llama-cpp-python's own (`llama_cpp.server`, its `server` extra), configured to answer exactly as the
in-process `LocalLLM` does, so recorded answers stay valid whichever way the model is reached:

- the same model name (`DEFAULT_MODEL.name` as the alias; the record/replay cache keys on the name the client sends,
  and the server echoes it back), the GGUF's own chat template (llama-cpp-python picks it when no chat format is
  given, as for `LocalLLM`), seed 0, the same context and threads, no logits kept for every token (the server's
  default would allocate n_ctx × vocabulary floats, 5 GB at 8,192), no mlock;
- the same sampling: its request schema defaults `repeat_penalty` to 1.1 where `Llama.create_chat_completion` (what
  `LocalLLM` calls) uses 1.0, and llama.cpp applies the penalty before the greedy pick even at temperature 0, so a
  request that does not set it gets 1.0 (`RequestDefaults`);
- OpenAI's structured-output shape `{"type": "json_schema", …}` is accepted, as llama.cpp's `json_object` + schema;
- streamed answers end with token usage, counted as `LocalLLM` counts a streamed call (the server reports none when
  streaming, and GeAR measures every call in tokens);
- a request is never cut short by a later one (the server's `interrupt_requests` default ends a running stream early
  when another request arrives, which would truncate one app session's answer whenever another asks).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

from gear.llm.base import LLMError
from gear.llm.model_files import DEFAULT_MODEL

LLAMA_VERSION = "0.3.36"
SERVER_HINT = (f"install llama-cpp-python's server extra: .venv/bin/pip install 'llama-cpp-python[server]=="
               f"{LLAMA_VERSION}'  (or scripts/install_local_llm.sh)")
REPEAT_PENALTY = 1.0  # Llama.create_chat_completion's default, which LocalLLM uses

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def require_server() -> None:
    """LLMError saying how to install it when llama-cpp-python or its server extra is missing."""
    import importlib.util

    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        if importlib.util.find_spec(module) is None:
            raise LLMError(f"{module} is not installed, so the LLM server cannot start: {SERVER_HINT}")


def check_port_free(host: str, port: int) -> None:
    """LLMError when `host:port` cannot be bound (checked before spending seconds loading the model)."""
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise LLMError(f"cannot serve on {host}:{port} ({exc.strerror or exc}): choose another --port or --host "
                       "(is a server already running there?)") from None


def adjust_request(body: bytes) -> bytes:
    """A chat request as `LocalLLM` would make it: repeat_penalty 1.0 unless set, OpenAI's json_schema shape as
    llama.cpp's json_object + schema. Anything that is not a JSON object passes unchanged (the server rejects it)."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict):
        return body
    data.setdefault("repeat_penalty", REPEAT_PENALTY)
    fmt = data.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        inner = fmt.get("json_schema")
        schema = inner.get("schema") if isinstance(inner, dict) else None
        data["response_format"] = {"type": "json_object", **({"schema": schema} if isinstance(schema, dict) else {})}
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


class RequestDefaults:
    """ASGI middleware applying `adjust_request` to POST …/chat/completions bodies."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or \
                not str(scope.get("path", "")).endswith("/chat/completions"):
            await self.app(scope, receive, send)
            return
        parts: list[bytes] = []
        while True:
            message = await receive()
            if message.get("type") != "http.request":
                return  # the client left before sending its request
            parts.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = adjust_request(b"".join(parts))
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        scope = {**scope, "headers": [*headers, (b"content-length", str(len(body)).encode())]}
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # later calls watch for the client disconnecting

        await self.app(scope, replay, send)


def stream_usage(llama: Any, text: str, finish: str | None) -> dict[str, int]:
    """Token usage of a streamed answer, as LocalLLM counts it: the completion re-tokenised, the prompt the rest of
    what the context holds now (the last sampled token, EOS or the one that hit max_tokens, is never evaluated)."""
    completion = len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0
    prompt = max(0, int(llama.n_tokens) - max(0, completion - (1 if finish == "length" else 0)))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def with_usage(llama: Any, chunks: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The chat chunks, the finishing one carrying `usage` (OpenAI's field; clients that do not want it ignore it)."""
    pieces: list[str] = []
    for chunk in chunks:
        choices = chunk.get("choices") or []
        if choices:
            piece = (choices[0].get("delta") or {}).get("content")
            if piece:
                pieces.append(piece)
            finish = choices[0].get("finish_reason")
            if finish:
                chunk = {**chunk, "usage": stream_usage(llama, "".join(pieces), finish)}
        yield chunk


def _install_stream_usage() -> None:
    """Wrap the server's stream publisher so streamed chat answers end with usage (idempotent). The route looks the
    publisher up in its module at every request, and passes the llama call in, which is what is wrapped."""
    import llama_cpp
    import llama_cpp.server.app as server_app

    original = server_app.get_event_publisher
    if getattr(original, "gear_usage", False):
        return

    async def publisher(**kwargs: Any) -> None:
        call = kwargs["llama_call"]
        if call is llama_cpp.Llama.create_chat_completion:
            def counted(llama: Any, **request: Any) -> Any:
                return with_usage(llama, call(llama, **request))

            kwargs["llama_call"] = counted
        await original(**kwargs)

    publisher.gear_usage = True  # type: ignore[attr-defined]
    server_app.get_event_publisher = publisher


def build_app(model_path: Path, *, n_ctx: int, n_threads: int, seed: int = 0, alias: str = DEFAULT_MODEL.name) -> Any:
    """The ASGI app serving `model_path` (loaded now, which takes seconds) as `alias`."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as LocalLLM: before the OpenMP runtime starts
    require_server()
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    model = ModelSettings(model=str(model_path), model_alias=alias, n_ctx=n_ctx, n_threads=n_threads,
                          n_threads_batch=n_threads, seed=seed, logits_all=False, use_mlock=False, verbose=False)
    server = ServerSettings(interrupt_requests=False)
    _install_stream_usage()
    try:
        app = create_app(server_settings=server, model_settings=[model])
    except (ValueError, RuntimeError, OSError) as exc:
        raise LLMError(f"could not load the model {model_path} for the LLM server: {' '.join(str(exc).split())[:200]}"
                       ) from None
    return RequestDefaults(app)
