"""The OpenAI-compatible client against a scripted local HTTP server: the structured-output ladder (OpenAI's shape,
llama.cpp's, plain text; remembered), the one-line context error (never retried in other shapes), streaming with and
without usage, broken streams, a slow answer that is not retried, turns through the queue, and one shared client per
server. The scripted answers mimic what llama-cpp-python 0.3.36's server really sends (tests/integration/
test_llm_server.py runs the same client against the real one)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from gear.config import Settings, public_settings
from gear.llm import LLMError, llm_key, make_llm
from gear.llm.base import Message
from gear.llm.openai_client import OpenAILLM, shared_openai_llm
from gear.llm.queue import listening
from tests.local_http import FakeEndpoint, serving

MESSAGES: list[Message] = [{"role": "user", "content": "Which saint is Bremen Cathedral dedicated to?"}]
SCHEMA = {"type": "object", "properties": {"saint": {"type": "string"}}, "required": ["saint"]}
ANSWER = '{"saint": "St. Peter"}'
PIECES = ['{"saint"', ': "St.', ' Peter"}']
SECRET = "sk-test-SECRET0123456789abcdef"
# what llama-cpp-python 0.3.36's server answers to OpenAI's json_schema shape (observed: its route error handler turns
# the request validation error into a 500)
LLAMA_CPP_SCHEMA_500 = {"error": {"message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                                             "'response_format', 'type'), 'msg': \"Input should be 'text' or "
                                             "'json_object'\"}", "type": "internal_server_error", "param": None,
                                  "code": None}}
# and to a prompt longer than its context (its ErrorResponseFormatters.context_length_exceeded)
LLAMA_CPP_CONTEXT_400 = {"error": {"message": "This model's maximum context length is 512 tokens. However, you "
                                              "requested 1131 tokens (1067 in the messages, 64 in the completion). "
                                              "Please reduce the length of the messages or completion.",
                                   "type": "invalid_request_error", "param": "messages",
                                   "code": "context_length_exceeded"}}


class _Server(FakeEndpoint):
    """Answers per `behaviour`; records every request body; counts requests in flight."""

    requests: ClassVar[list[dict[str, Any]]] = []
    behaviour: ClassVar[str] = "ok"
    delay: ClassVar[float] = 0.0
    in_flight: ClassVar[int] = 0
    most_in_flight: ClassVar[int] = 0
    generation: ClassVar[int] = 0  # one per test: a request left over from an earlier test must not count here
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        with cls.lock:
            generation = cls.generation
            cls.requests.append(body)
            cls.in_flight += 1
            cls.most_in_flight = max(cls.most_in_flight, cls.in_flight)
        try:
            self._answer(body)
        finally:
            with cls.lock:
                if cls.generation == generation:
                    cls.in_flight -= 1

    def _answer(self, body: dict[str, Any]) -> None:
        behaviour, fmt = type(self).behaviour, body.get("response_format") or {}
        time.sleep(type(self).delay)
        if behaviour == "llama_cpp" and fmt.get("type") == "json_schema":
            return self.send_json(500, LLAMA_CPP_SCHEMA_500)
        if behaviour == "no_formats" and fmt:
            return self.send_json(400, {"error": {"message": "response_format is not supported"}})
        if behaviour == "flaky" and len(type(self).requests) == 1:
            return self.send_json(503, {"error": {"message": "loading the model"}})
        if behaviour == "context":
            return self.send_json(400, LLAMA_CPP_CONTEXT_400)
        if behaviour == "context_stream" and not body.get("stream"):
            return self.send_json(400, LLAMA_CPP_CONTEXT_400)
        if body.get("stream"):
            return self._stream(body, behaviour)
        return self.send_json(200, {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": ANSWER}}],
                                "usage": {"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47}})

    def _stream(self, body: dict[str, Any], behaviour: str) -> None:
        self.start_events()
        if behaviour in ("stream_empty", "context_stream"):
            return  # the connection closes: a stream with no events (how a failing llama.cpp stream looks)

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict | None = None) -> dict[str, Any]:
            return {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], "usage": usage}

        event = self.send_event
        event(chunk({"role": "assistant"}))
        for piece in PIECES:
            event(chunk({"content": piece}))
        if behaviour == "stream_cut":
            return  # closed after part of the answer, no finish
        usage = {"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47}
        with_usage = behaviour != "stream_no_usage" and (body.get("stream_options") or {}).get("include_usage")
        event(chunk({}, "stop"))
        if with_usage:
            event({"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                   "choices": [], "usage": usage})
        self.end_events()



@pytest.fixture()
def server() -> Iterator[str]:
    _Server.requests, _Server.behaviour, _Server.delay = [], "ok", 0.0
    with _Server.lock:
        _Server.in_flight = _Server.most_in_flight = 0
        _Server.generation += 1
    with serving(_Server) as url:
        yield url


def _client(base_url: str, **kwargs: Any) -> OpenAILLM:
    options: dict[str, Any] = {"api_key": SECRET, "max_retries": 0, "timeout": 10, **kwargs}
    return OpenAILLM("test-model", base_url=base_url, **options)


def _attempts(caplog: pytest.LogCaptureFixture) -> int:
    """HTTP requests the openai client sent (it logs each attempt, retries included)."""
    return sum(r.getMessage().startswith("Sending HTTP Request") for r in caplog.records)


def _retries(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The client's retry decisions ("Retrying request to ... in N seconds", "N retries left")."""
    return [r.getMessage() for r in caplog.records if "etry" in r.getMessage() and "Not retrying" not in
            r.getMessage()]


def _shapes() -> list[str | None]:
    return [(r.get("response_format") or {}).get("type") for r in _Server.requests]


# -- structured output -------------------------------------------------------------------------------------------------

def test_json_schema_first_when_the_server_takes_it(server: str) -> None:
    result = _client(server).complete(MESSAGES, json_schema=SCHEMA)
    assert json.loads(result.text) == {"saint": "St. Peter"}
    assert _Server.requests[0]["response_format"]["json_schema"]["schema"] == SCHEMA and _shapes() == ["json_schema"]


def test_llama_cpp_server_gets_its_own_shape_and_it_is_remembered(server: str,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    _Server.behaviour = "llama_cpp"
    client = _client(server, max_retries=3)  # the probe goes out once: no back-off on the rejected shape
    with caplog.at_level(logging.DEBUG, logger="openai"):
        client.complete(MESSAGES, json_schema=SCHEMA)
    assert _attempts(caplog) == 2 and not _retries(caplog)  # one request per shape, the rejected one not retried
    assert _shapes() == ["json_schema", "json_object"]
    assert _Server.requests[1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    client.complete(MESSAGES, json_schema=SCHEMA)
    client.complete(MESSAGES)  # plain requests send no format and change nothing
    client.complete(MESSAGES, json_schema=SCHEMA)
    assert _shapes() == ["json_schema", "json_object", "json_object", None, "json_object"]


def test_plain_text_when_no_shape_is_accepted(server: str) -> None:
    _Server.behaviour = "no_formats"
    client = _client(server)
    assert client.complete(MESSAGES, json_schema=SCHEMA).text == ANSWER
    client.complete(MESSAGES, json_schema=SCHEMA)
    assert _shapes() == ["json_schema", "json_object", None, None]


# -- the context ------------------------------------------------------------------------------------------------------

def test_prompt_over_the_context_is_one_line_and_not_retried_in_other_shapes(server: str) -> None:
    _Server.behaviour = "context"
    with pytest.raises(LLMError) as info:
        _client(server, max_retries=3).complete(MESSAGES, json_schema=SCHEMA)
    message = str(info.value)
    assert message.startswith("prompt of 1067 tokens is longer than the LLM server's context (512): ") or \
        message.startswith(f"prompt of 1067 tokens is longer than the LLM server's context (512) at {server}")
    assert "\n" not in message and SECRET not in message
    assert len(_Server.requests) == 1


def test_context_error_behind_a_broken_stream_is_still_the_context_error(server: str) -> None:
    _Server.behaviour = "context_stream"  # llama-cpp-python fails a streamed over-long prompt after its 200
    shown: list[str] = []
    with pytest.raises(LLMError, match=r"^prompt of 1067 tokens is longer than the LLM server's context \(512\)"):
        _client(server).complete(MESSAGES, on_text=shown.append)
    assert shown == [] and [r.get("stream", False) for r in _Server.requests] == [True, False]


# -- streaming ---------------------------------------------------------------------------------------------------------

def test_stream_passes_pieces_and_takes_usage_from_the_last_chunk(server: str) -> None:
    shown: list[str] = []
    result = _client(server).complete(MESSAGES, on_text=shown.append)
    assert shown == PIECES and result.text == "".join(PIECES) == ANSWER
    assert (result.prompt_tokens, result.completion_tokens, result.model) == (40, 7, "test-model")
    assert _Server.requests[0]["stream"] is True
    assert _Server.requests[0]["stream_options"] == {"include_usage": True}


def test_stream_without_usage_counts_chunks_and_estimates_the_prompt(server: str) -> None:
    _Server.behaviour = "stream_no_usage"
    result = _client(server).complete(MESSAGES, on_text=lambda piece: None)
    assert result.completion_tokens == len(PIECES)
    assert result.prompt_tokens == (len(MESSAGES[0]["content"]) + 3) // 4


def test_stream_with_nothing_in_it_is_asked_again_without_streaming(server: str) -> None:
    _Server.behaviour = "stream_empty"
    shown: list[str] = []
    result = _client(server).complete(MESSAGES, on_text=shown.append)
    assert shown == [ANSWER] and result.text == ANSWER and result.completion_tokens == 7
    assert [r.get("stream", False) for r in _Server.requests] == [True, False]


def test_stream_cut_after_some_text_is_one_line(server: str) -> None:
    _Server.behaviour = "stream_cut"
    shown: list[str] = []
    with pytest.raises(LLMError, match=r"in the middle of an answer \(after 3 pieces\)") as info:
        _client(server).complete(MESSAGES, on_text=shown.append)
    assert shown == PIECES and "\n" not in str(info.value) and len(_Server.requests) == 1


# -- faults ------------------------------------------------------------------------------------------------------------

def test_slow_answer_fails_after_one_timeout_without_retries(server: str, caplog: pytest.LogCaptureFixture) -> None:
    _Server.delay = 1.5
    client = _client(server, timeout=0.3, max_retries=3)
    with caplog.at_level(logging.DEBUG, logger="openai"), pytest.raises(LLMError) as info:
        client.complete(MESSAGES)
    assert str(info.value).startswith(f"LLM server {server} did not answer within the timeout")
    assert "\n" not in str(info.value)
    assert _attempts(caplog) == 1 and not _retries(caplog)  # the client sent it once and scheduled no retry


@pytest.mark.parametrize("schema", [None, SCHEMA])
def test_a_passing_server_error_is_retried_by_the_client(server: str, schema: dict | None) -> None:
    _Server.behaviour = "flaky"  # one 503, then answers
    assert _client(server, max_retries=2).complete(MESSAGES, json_schema=schema).text == ANSWER
    assert _shapes() == (["json_schema", "json_schema"] if schema else [None, None])


def test_unreachable_server_is_one_line() -> None:
    with pytest.raises(LLMError) as info:
        _client("http://127.0.0.1:9/v1", max_retries=1).complete(MESSAGES)
    assert str(info.value).startswith("cannot reach LLM server http://127.0.0.1:9/v1: check GEAR_LLM_BASE_URL")


# -- turns and sharing -------------------------------------------------------------------------------------------------

def test_max_concurrent_calls_take_turns_and_waiters_hear_their_place(server: str) -> None:
    _Server.delay = 0.4
    client = _client(server, max_concurrent=1)
    heard: list[int] = []

    def call(listen: bool) -> None:
        with listening(heard.append if listen else None):
            client.complete(MESSAGES)

    first = threading.Thread(target=call, args=(False,))
    first.start()
    time.sleep(0.1)
    second = threading.Thread(target=call, args=(True,))
    second.start()
    first.join(5)
    second.join(5)
    assert _Server.most_in_flight == 1 and len(_Server.requests) == 2
    assert heard and heard[0] == 1 and heard[-1] == 0


def test_one_shared_client_per_server_model_key_and_limits(server: str) -> None:
    a = shared_openai_llm("m", base_url=server, api_key=SECRET, timeout=30, max_concurrent=1)
    assert shared_openai_llm("m", base_url=server, api_key=SECRET, timeout=30, max_concurrent=1) is a
    assert shared_openai_llm("m", base_url=server, api_key=SECRET, timeout=31, max_concurrent=1) is not a
    assert shared_openai_llm("m", base_url=server, api_key="sk-other-key-123456", timeout=30, max_concurrent=1) \
        is not a
    assert a.queue is not None and a.queue.slots == 1


def test_settings_reach_the_client_and_the_key_stays_out_of_what_is_written(server: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    settings = Settings(_env_file=None, llm="openai", llm_base_url=server, llm_model="m", llm_timeout=7,
                        llm_max_retries=1, llm_max_concurrent=2)
    llm = make_llm(settings)
    assert isinstance(llm, OpenAILLM) and llm.queue is not None and llm.queue.slots == 2
    assert llm._client.timeout == 7 and llm._client.max_retries == 1
    assert llm_key(settings) != llm_key(settings.with_(llm_timeout=8))
    written = json.dumps(public_settings(settings))
    assert SECRET not in written and "llm_api_key" not in written
    assert public_settings(settings)["llm_timeout"] == 7 and public_settings(settings)["llm_max_concurrent"] == 2
    with pytest.raises(ValueError, match="llm_timeout"):
        Settings(_env_file=None, llm_timeout=0)
