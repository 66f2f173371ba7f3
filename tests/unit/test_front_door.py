"""`import gear` is the library's front door: the engine, its settings, the trace and every event type, by name,
without loading the engine until it is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gear
from gear import trace
from gear.trace import Event


def test_every_public_name_resolves() -> None:
    assert {"Engine", "Run", "Settings", "Trace", "FinalRanking", "Reasoned", "__version__"} <= set(gear.__all__)
    for name in gear.__all__:
        assert getattr(gear, name) is not None, name
    assert gear.Engine.__module__ == "gear.agent.engine" and gear.Settings.__module__ == "gear.config"
    assert sorted(dir(gear)) == dir(gear) and set(gear.__all__) <= set(dir(gear))


def test_every_event_type_is_at_the_door() -> None:
    """A new event class in gear.trace must be exported here too."""
    events = {name for name in trace.__all__
              if isinstance(getattr(trace, name), type) and issubclass(getattr(trace, name), Event)}
    assert len(events) > 20 and events <= set(gear.__all__)
    assert all(getattr(gear, name) is getattr(trace, name) for name in events)


def test_a_name_that_is_not_there_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Engin'"):
        gear.Engin  # type: ignore[attr-defined]  # noqa: B018


def test_importing_gear_or_its_trace_does_not_load_the_engine() -> None:
    code = ("import sys, gear, gear.trace; "
            "print(sorted(m for m in sys.modules if m in ('gear.agent', 'gear.config', 'gear.store', 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
