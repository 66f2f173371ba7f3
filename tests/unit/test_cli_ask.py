"""`gear ask` prints every step as it happens: the model's text streams to stderr while it is written, the
narration (with each LLM call's origin) to stdout."""

from __future__ import annotations

import io

from rich.console import Console

from gear.cli import query
from gear.events import LLMCalled, LLMText, LLMWaiting, Reasoned


def test_narrator_streams_model_text_and_narrates_calls(monkeypatch) -> None:
    err, out = io.StringIO(), io.StringIO()
    monkeypatch.setattr(query, "console", Console(file=err, width=200))
    monkeypatch.setattr(query, "out", Console(file=out, width=200))
    listen = query.narrator(stream=True)
    for text in ('{"facts": [', '{"facts": [["Bremen Cathedral", ', '{"facts": [["Bremen Cathedral", "[b]x"]]}'):
        listen(LLMText(1, "read (sync)", text))
    listen(LLMCalled(1, "read (sync)", "m", 1539, 16, 20.5, True, "memo"))
    listen(Reasoned(1, False, "Germany", "", "raw", [3], "verdict rejected: not grounded in the gist memory: x"))
    streamed = err.getvalue()
    assert streamed.count("read (sync) ▸") == 1  # one heading per step, then only the new text
    assert '{"facts": [["Bremen Cathedral", "[b]x"]]}' in streamed.replace("\n", "")  # markup-like text kept as text
    narration = out.getvalue()
    assert "1,539 + 16 tokens" in narration and "memo" in narration
    assert "verdict rejected: not grounded in the gist memory" in narration


def test_narrator_without_streaming_prints_no_model_text(monkeypatch) -> None:
    err, out = io.StringIO(), io.StringIO()
    monkeypatch.setattr(query, "console", Console(file=err, width=200))
    monkeypatch.setattr(query, "out", Console(file=out, width=200))
    listen = query.narrator(stream=False)
    listen(LLMText(1, "reason", '{"answerable": false}'))
    assert err.getvalue() == ""


def test_narrator_says_when_the_model_is_busy_once_per_change(monkeypatch) -> None:
    err, out = io.StringIO(), io.StringIO()
    monkeypatch.setattr(query, "console", Console(file=err, width=200))
    monkeypatch.setattr(query, "out", Console(file=out, width=200))
    listen = query.narrator(stream=True)
    for ahead in (2, 2, 2, 1, 1, 0):  # one event per poll of the queue
        listen(LLMWaiting(1, "read (sync)", ahead))
    listen(LLMWaiting(1, "reason", 1))  # a later call waits again
    waits = [" ".join(line.split()) for line in err.getvalue().splitlines() if "waiting" in line]
    assert waits == ["read (sync): waiting for the model: 2 ahead", "read (sync): waiting for the model: 1 ahead",
                     "reason: waiting for the model: 1 ahead"]
    assert out.getvalue() == ""  # stdout keeps the narration of what the run did
