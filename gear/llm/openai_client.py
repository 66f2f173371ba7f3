"""Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp's servers, LM Studio) via the `openai` package.

Temperature is always 0 (the paper's setting, and it makes the record/replay cache meaningful). What the servers
disagree on is handled here, once:

- Structured output: OpenAI, vLLM and Ollama take `{"type": "json_schema", …}`; llama-cpp-python's server only
  `{"type": "json_object", "schema": …}` (it answers the former with HTTP 500 or 422); others neither. The client tries
  them in that order, then plain text, and remembers what worked. The first try of a format not yet known to work goes
  out without retries, so probing a server that rejects it costs one quick request, not the client's back-off.
- Streaming (`on_text`): pieces are passed on as they arrive; token usage comes from the final chunk when the server
  sends it (asked for with `stream_options={"include_usage": True}`; `gear serve-llm` and OpenAI send it). Otherwise the
  completion is counted as the number of content chunks (one sampled token each on llama.cpp's servers, so exact
  there and a lower bound elsewhere) and the prompt is estimated from its characters. A stream that breaks before any
  text arrived is asked again without streaming (its answer or its real error, e.g. a prompt over the context, is
  what the caller gets); one that breaks after some text is a one-line error (the shown part cannot be taken back).
- Retries are the client's own (exponential back-off on refused connections, 5xx and 429), except for a slow answer:
  at temperature 0 the same request to the same server is as slow again, and a one-at-a-time server is still busy
  with the abandoned one, so a read timeout is final at once (see `_SlowAnswerIsFinal`).
- `max_concurrent` callers at a time per client, in a `ModelQueue`: a llama.cpp server computes one answer at a time,
  and callers in line are told their place (the app shows it) instead of silently waiting on a socket.
- A caller that stops waiting stops the server too. The request runs in a worker thread while the caller's thread
  waits for its pieces, hearing a heartbeat (the queue's listener, "your turn", every HEARTBEAT_SECONDS) until the
  first text arrives; whatever the caller raises there or in `on_text` (Streamlit's stop on Cancel, Ctrl-C) shuts
  the request's connection down at once. llama-server notices the closed connection within a second and frees the
  slot at its next batch, so the next call starts at once instead of after an answer nobody reads. Each request
  therefore gets a connection of its own (no keep-alive: its socket is the handle to close).
  `shared_openai_llm` gives the whole process one client (and so one queue) per server, model, key and timeout.

Whatever is left after that becomes an `LLMError` whose one line says what to do and never carries the API key.
"""

from __future__ import annotations

import hashlib
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass
from typing import Any

import httpx2

from gear.llm.base import LLMError, LLMResult, Message, TextListener, estimate_tokens
from gear.llm.openai_errors import broken_stream, context_overflow, describe, message_of
from gear.llm.openai_errors import scrub as scrub
from gear.llm.queue import HEARTBEAT_SECONDS, ModelQueue, current_listener

_PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key but the client insists on one
FORMATS = ("json_schema", "json_object", "text")  # structured-output request shapes, in the order they are tried


def response_format(kind: str, schema: dict | None) -> dict | None:
    """The `response_format` of one request shape (None: plain text)."""
    if schema is None or kind == "text":
        return None
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "output", "schema": schema, "strict": False}}
    return {"type": "json_object", "schema": schema}


def rejects_format(exc: Exception) -> bool:
    """Whether the server refused the request's shape (400/422, or llama-cpp-python's 500 for a format it does not
    validate) rather than failing for another reason."""
    import openai

    if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return True
    return isinstance(exc, openai.InternalServerError) and "response_format" in message_of(exc)


class _TimeoutStream(httpx2.SyncByteStream):
    """A response body whose read timeout surfaces as openai.APITimeoutError (see _SlowAnswerIsFinal)."""

    def __init__(self, inner: Any, request: httpx2.Request) -> None:
        self._inner, self._request = inner, request

    def __iter__(self) -> Iterator[bytes]:
        import openai

        try:
            yield from self._inner
        except httpx2.ReadTimeout:
            raise openai.APITimeoutError(request=self._request) from None

    def close(self) -> None:
        self._inner.close()


class _Connections:
    """The sockets one call's requests opened (httpcore's "trace" extension reports each new connection), so the
    caller can shut them down from its own thread while the worker is blocked reading: a plain close() would not wake
    the blocked read, shutdown() does, and the server sees the connection end."""

    def __init__(self) -> None:
        self._sockets: list[socket.socket] = []
        self._closed = False
        self._lock = threading.Lock()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket):
            return
        with self._lock:
            self._sockets.append(sock)
            closed = self._closed
        if closed:  # closed before this connection was made (a retry racing the caller's stop)
            _shut(sock)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


_call = threading.local()  # the worker thread's _Connections, read by the transport


class _SlowAnswerIsFinal(httpx2.BaseTransport):
    """The default transport, with read timeouts raised as openai.APITimeoutError: the openai client retries httpx's
    own errors but passes its own exceptions through unretried, so a slow answer fails after one timeout while refused
    connections, 5xx and 429 keep the client's retries. Connections are not kept alive, and each new one is reported
    to the calling worker's _Connections, so a stopped call can be cut off (see the module docstring)."""

    def __init__(self) -> None:
        self._inner = httpx2.HTTPTransport(limits=httpx2.Limits(max_keepalive_connections=0))

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        import openai

        connections = getattr(_call, "connections", None)
        if connections is not None:
            request.extensions["trace"] = connections.trace
        try:
            response = self._inner.handle_request(request)
        except httpx2.ReadTimeout:
            raise openai.APITimeoutError(request=request) from None
        return httpx2.Response(response.status_code, headers=response.headers,
                               stream=_TimeoutStream(response.stream, request), extensions=response.extensions)

    def close(self) -> None:
        self._inner.close()


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
        max_concurrent: int | None = None,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        import openai  # imported here so the package loads without the dependency being exercised

        if not model:
            raise LLMError("no LLM model name given: set GEAR_LLM_MODEL (e.g. gpt-4o-mini)")
        if not api_key and base_url is None:
            raise LLMError("no OpenAI API key: set OPENAI_API_KEY, or GEAR_LLM_BASE_URL for a local server")
        if timeout <= 0:
            raise LLMError(f"LLM timeout must be positive seconds, got {timeout}: set GEAR_LLM_TIMEOUT")
        if max_concurrent is not None and max_concurrent < 1:
            raise LLMError(f"LLM max concurrent calls must be at least 1, got {max_concurrent}: fix "
                           "GEAR_LLM_MAX_CONCURRENT")
        self.model = model
        self.base_url = base_url
        self.seed = seed
        self.extra_body = dict(extra_body or {})  # server-specific request fields (llama-server's cache_prompt)
        self.max_retries = max_retries
        self.queue: ModelQueue | None = ModelQueue(max_concurrent) if max_concurrent else None
        self._secret = api_key
        self._format = 0  # index into FORMATS of the first shape to try: what worked last
        self._format_confirmed = False  # a request in FORMATS[_format] has succeeded
        self._stream_usage = True  # send stream_options until a server rejects it
        self._lock = threading.Lock()
        self._client = openai.OpenAI(api_key=api_key or _PLACEHOLDER_KEY, base_url=base_url, timeout=timeout,
                                     max_retries=max_retries,
                                     http_client=openai.DefaultHttpxClient(transport=_SlowAnswerIsFinal()))

    @property
    def where(self) -> str:
        return self.base_url or "api.openai.com"

    def _turn(self) -> AbstractContextManager[None]:
        return self.queue.turn() if self.queue is not None else nullcontext()

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        with self._turn():
            started = time.perf_counter()
            if on_text is None:
                answer = _stoppable(lambda _: self._read(self._create(messages, json_schema, max_tokens, False)), None)
            else:
                answer = _stoppable(lambda pieces: self._stream(messages, json_schema, max_tokens, pieces), on_text)
            seconds = time.perf_counter() - started
        return LLMResult(
            text=answer.text,
            prompt_tokens=answer.prompt if answer.prompt is not None else estimate_tokens(_prompt_text(messages)),
            completion_tokens=answer.completion if answer.completion is not None else estimate_tokens(answer.text),
            seconds=seconds,
            model=answer.model or self.model,
            cached_prompt_tokens=answer.cached,
        )

    # -- one request, in the first shape the server takes ----------------------------------------------------------
    def _create(self, messages: list[Message], json_schema: dict | None, max_tokens: int, stream: bool) -> Any:
        """Send the request, stepping down FORMATS while the server rejects the shape; remember what worked."""
        import openai

        level = self._format if json_schema is not None else len(FORMATS) - 1
        while True:
            kind = FORMATS[level]
            probe = kind != "text" and not (level == self._format and self._format_confirmed)
            try:
                response = self._send(messages, response_format(kind, json_schema), max_tokens, stream, probe)
            except openai.OpenAIError as exc:
                overflow = context_overflow(exc, self.where)
                if overflow is not None:
                    raise overflow from None  # no other shape makes the prompt shorter
                if stream and self._stream_usage and rejects_format(exc) and "stream_options" in message_of(exc):
                    self._stream_usage = False  # an older server: count the tokens instead
                    continue
                if kind != "text" and rejects_format(exc):
                    level += 1
                    continue
                raise describe(exc, where=self.where, model=self.model, secret=self._secret) from None
            if json_schema is not None:
                with self._lock:
                    self._format, self._format_confirmed = level, True
            return response

    def _send(self, messages: list[Message], fmt: dict | None, max_tokens: int, stream: bool, probe: bool) -> Any:
        """One request; a `probe` (a shape not yet known to work) goes out once, and only a failure that is not about
        the shape is then sent again through the client's retries."""
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0, "max_tokens": max_tokens}
        if self.seed is not None:
            kwargs["seed"] = self.seed
        if self.extra_body:
            kwargs["extra_body"] = self.extra_body
        if fmt is not None:
            kwargs["response_format"] = fmt
        if stream:
            kwargs["stream"] = True
            if self._stream_usage:
                kwargs["stream_options"] = {"include_usage": True}
        if not probe:
            return self._client.chat.completions.create(**kwargs)
        try:
            return self._client.with_options(max_retries=0).chat.completions.create(**kwargs)
        except (openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError) as exc:
            if isinstance(exc, openai.APITimeoutError) or rejects_format(exc):
                raise
            return self._client.chat.completions.create(**kwargs)

    # -- reading answers ---------------------------------------------------------------------------------------------
    @staticmethod
    def _read(response: Any) -> _Answer:
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = (getattr(message, "content", None) or "") if message is not None else ""
        usage = getattr(response, "usage", None)
        prompt, completion = _usage(usage)
        return _Answer(text, prompt, completion, getattr(response, "model", None), _cached(usage))

    def _stream(self, messages: list[Message], json_schema: dict | None, max_tokens: int, on_text: TextListener
                ) -> _Answer:
        import openai

        stream = self._create(messages, json_schema, max_tokens, True)
        pieces: list[str] = []
        usage: Any = None
        model: str | None = None
        finished = False
        try:
            for chunk in stream:
                usage = getattr(chunk, "usage", None) or usage
                model = getattr(chunk, "model", None) or model
                for choice in (getattr(chunk, "choices", None) or [])[:1]:
                    delta = getattr(choice, "delta", None)
                    piece = getattr(delta, "content", None) if delta is not None else None
                    if piece:
                        pieces.append(piece)
                        on_text(piece)
                    finished = finished or bool(getattr(choice, "finish_reason", None))
        except openai.OpenAIError as exc:
            if pieces:
                raise broken_stream(self.where, len(pieces), exc) from None
            if isinstance(exc, openai.APITimeoutError):
                raise describe(exc, where=self.where, model=self.model, secret=self._secret) from None
            finished = False
        finally:
            stream.close()
        if not finished:
            if pieces:  # e.g. a llama-cpp-python server that cut this answer short for another request
                raise broken_stream(self.where, len(pieces), None)
            # nothing arrived: ask once more without streaming; its answer, or its real error, is the caller's
            answer = self._read(self._create(messages, json_schema, max_tokens, False))
            on_text(answer.text)
            return answer
        prompt, completion = _usage(usage)
        if completion is None:
            completion = len(pieces)
        return _Answer("".join(pieces), prompt, completion, model, _cached(usage))


def _stoppable(work: Callable[[TextListener], _Answer], on_text: TextListener | None) -> _Answer:
    """Run `work` (one request) in a worker thread and wait for it in the caller's: its text pieces are passed to
    `on_text` here, a heartbeat goes to the queue's listener in context until the first piece arrives, and if the
    caller raises while waiting (a listener's stop, KeyboardInterrupt) the request's connections are shut down before
    the exception goes on, so the server stops working on it."""
    inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    connections = _Connections()

    def run() -> None:
        _call.connections = connections
        try:
            inbox.put(("done", work(lambda piece: inbox.put(("text", piece)))))
        except BaseException as exc:  # handed to the caller's thread, which raises it
            inbox.put(("error", exc))
        finally:
            _call.connections = None

    heartbeat = current_listener()
    worker = threading.Thread(target=run, name="gear-llm-call", daemon=True)
    worker.start()
    writing = False
    try:
        while True:
            try:
                kind, value = inbox.get(timeout=HEARTBEAT_SECONDS)
            except queue.Empty:
                if heartbeat is not None and not writing:
                    heartbeat(0)  # still our turn: the model is reading (a point where the caller may stop)
                continue
            if kind == "text":
                writing = True
                if on_text is not None:
                    on_text(value)
            elif kind == "done":
                return value  # type: ignore[no-any-return]  # the worker's _Answer
            else:
                raise value
    except BaseException:
        connections.close()  # the caller stopped waiting (or the call failed): free the server at once
        raise


@dataclass(frozen=True, slots=True)
class _Answer:
    """One answer as the server gave it (None: a count it did not report)."""

    text: str
    prompt: int | None
    completion: int | None
    model: str | None
    cached: int | None = None


def _usage(usage: Any) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens as the server reported them, None where it did not."""
    if usage is None:
        return None, None
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    return (prompt if isinstance(prompt, int) else None, completion if isinstance(completion, int) else None)


def _cached(usage: Any) -> int | None:
    """Prompt tokens the server took from its cache (OpenAI's and llama-server's prompt_tokens_details.cached_tokens),
    None where it does not say."""
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    cached = details.get("cached_tokens") if isinstance(details, dict) else getattr(details, "cached_tokens", None)
    return cached if isinstance(cached, int) else None


def _prompt_text(messages: list[Message]) -> str:
    return "\n".join(m.get("content", "") for m in messages)


_shared: dict[tuple[object, ...], OpenAILLM] = {}
_shared_lock = threading.Lock()


def shared_openai_llm(model: str, *, base_url: str | None, api_key: str | None, timeout: float = 120.0,
                      max_retries: int = 3, max_concurrent: int | None = None) -> OpenAILLM:
    """The process's one client for this server, model, key and timeout (so every app session waits in the same
    queue, and what the server accepts is learnt once). The key is kept only as its hash in the lookup table."""
    fingerprint = hashlib.sha256(api_key.encode("utf-8")).hexdigest() if api_key else None
    key = (base_url, model, fingerprint, timeout, max_retries, max_concurrent)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = OpenAILLM(model, base_url=base_url, api_key=api_key, timeout=timeout,
                                     max_retries=max_retries, max_concurrent=max_concurrent)
        return _shared[key]
