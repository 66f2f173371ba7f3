"""The event vocabulary registers itself: every event class is known to the decoder as it is defined (no list kept by
hand), kinds cannot collide, transient events never load from a file, and the bundled traces still load."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from gear import events as ev
from gear import trace as t
from gear.events import Event
from gear.trace import EVENT_TYPES, Trace, TraceError

BUNDLED = sorted((Path(__file__).resolve().parents[2] / "assets" / "traces").glob("*.json"))


def every_event_class() -> list[type[Event]]:
    found, todo = [], list(Event.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_stored_event_class_is_registered_by_its_kind() -> None:
    classes = [cls for cls in every_event_class() if cls.__module__ == "gear.trace.events"]
    assert {cls.kind: cls for cls in classes if not cls.transient} == EVENT_TYPES
    assert {cls.kind for cls in classes if cls.transient} == {"llm_asking", "llm_text", "llm_waiting"}
    assert ev.RunStarted in EVENT_TYPES.values() and ev.LLMText not in EVENT_TYPES.values()


def test_a_new_event_registers_itself_and_round_trips() -> None:
    try:
        @dataclass(frozen=True)
        class Pondered(Event):
            kind: ClassVar[str] = "test_pondered"
            thought: str
            passages: list[t.PassageView]

        assert EVENT_TYPES["test_pondered"] is Pondered
        trace = Trace([Pondered(2, "hmm", [t.PassageView(1, "T", "x", 0.5, True)])])
        again = Trace.from_json(trace.to_json())
        assert again.events == trace.events
    finally:
        EVENT_TYPES.pop("test_pondered", None)


def test_an_event_without_its_own_kind_or_with_a_taken_one_is_refused() -> None:
    with pytest.raises(TypeError, match="needs its own `kind`"):
        @dataclass(frozen=True)
        class Nameless(ev.Warned):
            pass
    with pytest.raises(TypeError, match="'warned' of Twin is taken by Warned"):
        @dataclass(frozen=True)
        class Twin(Event):
            kind: ClassVar[str] = "warned"
    assert EVENT_TYPES["warned"] is ev.Warned


def test_a_transient_event_in_a_file_is_an_unknown_kind() -> None:
    data = {"format": "gear-trace", "version": 1, "events": [{"kind": "llm_text", "iteration": 1, "step": "read",
                                                               "text": "(a, b, c)"}]}
    with pytest.raises(TraceError, match=r"^x\.json: events\[0\]\.kind: unknown kind 'llm_text'$"):
        Trace.from_dict(data, "x.json")


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_the_bundled_traces_still_load(path: Path) -> None:
    trace = Trace.load(path)
    assert isinstance(trace.events[0], ev.RunStarted) and isinstance(trace.events[-1], ev.RunFinished)
    assert Trace.from_json(trace.to_json()).events == trace.events


def test_there_are_bundled_traces() -> None:
    assert len(BUNDLED) >= 5
