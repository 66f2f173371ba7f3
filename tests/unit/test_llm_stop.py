"""A caller that stops waiting stops the server's work: while the model reads (no text yet) the caller hears a
heartbeat from which it may stop (Streamlit's Cancel raises there), and whatever it raises — there, in `on_text`, or a
KeyboardInterrupt — shuts the request's connection down, which is how llama-server learns to free its slot
(tests/integration/test_llm_server.py checks that half against the real server). A scripted server that "reads" until
the client hangs up stands in for the model here."""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from gear.llm.base import Message
from gear.llm.openai_client import OpenAILLM
from gear.llm.queue import listening
from tests.local_http import FakeEndpoint, serving

MESSAGES: list[Message] = [{"role": "user", "content": "Which saint is Bremen Cathedral dedicated to?"}]
READ_SECONDS = 30.0  # how long the scripted model "reads" before answering, unless the client hangs up first


class Stop(BaseException):
    """What Streamlit's stop looks like to the engine: a BaseException raised inside a listener."""


class _ReadingServer(FakeEndpoint):
    """Holds each request as a model reading a long prompt would, watching the connection; answers after
    `read_seconds` (streamed in `pieces`, one every `piece_gap` s) unless the client hung up first."""

    hung_up: ClassVar[threading.Event] = threading.Event()
    read_seconds: ClassVar[float] = READ_SECONDS
    pieces: ClassVar[list[str]] = ['{"saint"', ': "St.', ' Peter"}']
    piece_gap: ClassVar[float] = 0.0
    peers: ClassVar[list[int]] = []

    def _client_gone(self, wait: float) -> bool:
        readable, _, _ = select.select([self.connection], [], [], wait)
        if not readable:
            return False
        try:
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        cls.peers.append(self.client_address[1])
        deadline = time.monotonic() + cls.read_seconds
        while time.monotonic() < deadline:
            if self._client_gone(0.05):
                cls.hung_up.set()
                return
        try:
            if body.get("stream"):
                self._stream(body)
            else:
                self.send_json(200, {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": "".join(cls.pieces)}}],
                                     "usage": {"prompt_tokens": 40, "completion_tokens": 3, "total_tokens": 43}})
        except OSError:
            cls.hung_up.set()

    def _stream(self, body: dict[str, Any]) -> None:
        cls = type(self)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": body["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        self.start_events()
        for piece in cls.pieces:
            self.send_event(chunk({"content": piece}))
            if cls.piece_gap and self._client_gone(cls.piece_gap):
                cls.hung_up.set()
                return
        self.send_event(chunk({}, "stop"))
        self.end_events()


@pytest.fixture()
def server() -> Iterator[str]:
    _ReadingServer.hung_up = threading.Event()
    _ReadingServer.read_seconds, _ReadingServer.piece_gap, _ReadingServer.peers = READ_SECONDS, 0.0, []
    with serving(_ReadingServer) as url:
        yield url


def _client(url: str) -> OpenAILLM:
    return OpenAILLM("test-model", base_url=url, timeout=60, max_retries=2)


def _stop_after(calls: int, heard: list[int]) -> Any:
    def listener(ahead: int) -> None:
        heard.append(ahead)
        if len(heard) >= calls:
            raise Stop

    return listener


@pytest.mark.parametrize("stream", [False, True])
def test_stopping_while_the_model_reads_hangs_up_at_once(server: str, stream: bool) -> None:
    heard: list[int] = []
    with listening(_stop_after(3, heard)), pytest.raises(Stop):
        _client(server).complete(MESSAGES, max_tokens=8, on_text=(lambda _: None) if stream else None)
    assert heard == [0, 0, 0]  # "still your turn", until the caller stopped
    assert _ReadingServer.hung_up.wait(10), "the server never saw the connection end: it would go on reading"
    assert len(_ReadingServer.peers) == 1  # the client's retries did not send the request again


def test_stopping_while_the_model_writes_hangs_up_too(server: str) -> None:
    _ReadingServer.read_seconds, _ReadingServer.piece_gap = 0.0, 5.0
    pieces: list[str] = []

    def on_text(piece: str) -> None:
        pieces.append(piece)
        raise Stop

    with pytest.raises(Stop):
        _client(server).complete(MESSAGES, max_tokens=8, on_text=on_text)
    assert pieces == ['{"saint"']
    assert _ReadingServer.hung_up.wait(10)


def test_keyboard_interrupt_in_a_listener_hangs_up(server: str) -> None:
    def interrupt(_ahead: int) -> None:
        raise KeyboardInterrupt

    with listening(interrupt), pytest.raises(KeyboardInterrupt):
        _client(server).complete(MESSAGES, max_tokens=8)
    assert _ReadingServer.hung_up.wait(10)


def test_no_heartbeat_once_the_text_flows_and_the_answer_is_whole(server: str) -> None:
    _ReadingServer.read_seconds, _ReadingServer.piece_gap = 0.6, 0.4
    log: list[str] = []
    with listening(lambda ahead: log.append(f"wait {ahead}")):
        result = _client(server).complete(MESSAGES, max_tokens=8, on_text=lambda piece: log.append(piece))
    assert result.text == '{"saint": "St. Peter"}'
    first_text = log.index('{"saint"')
    assert first_text > 0 and set(log[:first_text]) == {"wait 0"}  # heartbeats while reading
    assert log[first_text:] == _ReadingServer.pieces  # none while writing: the pieces are the caller's draw points
    assert not _ReadingServer.hung_up.is_set()


def test_each_request_has_a_connection_of_its_own(server: str) -> None:
    """The socket is the handle a stopped call closes, so connections are not kept alive and shared."""
    _ReadingServer.read_seconds = 0.0
    client = _client(server)
    for _ in range(3):
        assert client.complete(MESSAGES, max_tokens=8).text == '{"saint": "St. Peter"}'
    assert len(set(_ReadingServer.peers)) == 3
