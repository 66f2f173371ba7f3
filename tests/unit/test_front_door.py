"""`import gear` is the library's front door: the engine, its settings, the run and the trace by name, every event type
under `gear.events`, without loading the engine until it is used; the event names the door held before still resolve,
with a DeprecationWarning."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import gear
from gear import events, trace
from gear.events import Event


def test_every_public_name_resolves_without_a_warning() -> None:
    assert set(gear.__all__) == {"Engine", "Run", "Settings", "Trace", "TraceError", "events", "__version__"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in gear.__all__:
            assert getattr(gear, name) is not None, name
    assert gear.Engine.__module__ == "gear.agent.engine" and gear.Settings.__module__ == "gear.config"
    assert gear.Run.__module__ == "gear.agent.run" and gear.Trace is trace.Trace and gear.events is events
    assert sorted(dir(gear)) == dir(gear) and set(gear.__all__) <= set(dir(gear))


def test_every_event_type_is_in_gear_events_and_only_there() -> None:
    """A new event class (gear.trace.events) is named by gear.events; gear.trace hands on the Trace and the views."""
    from gear.trace import events as defined_in

    defined = {name for name, value in vars(defined_in).items()
               if isinstance(value, type) and issubclass(value, Event)}
    assert len(defined) > 20 and defined == set(events.__all__)
    assert all(getattr(events, name) is getattr(defined_in, name) for name in defined)
    assert not defined & set(trace.__all__)


@pytest.mark.parametrize("name", ["FinalRanking", "Event"])
def test_an_event_named_from_gear_trace_still_resolves_and_says_where_it_moved(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"gear\.trace\.{name} moved to gear\.events\.{name}"):
        old = getattr(trace, name)
    assert old is getattr(events, name)
    with pytest.raises(AttributeError, match="has no attribute 'Trac'"):
        trace.Trac  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize("name", ["FinalRanking", "Reasoned", "Event", "PPRRanked"])
def test_an_event_at_the_old_door_still_resolves_and_says_where_it_moved(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=rf"gear\.{name} moved to gear\.events\.{name}"):
        old = getattr(gear, name)
    assert old is getattr(events, name)
    with pytest.warns(DeprecationWarning):  # told at every use, not only the first
        getattr(gear, name)


def test_a_name_that_is_not_there_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Engin'"):
        gear.Engin  # type: ignore[attr-defined]  # noqa: B018


def test_importing_gear_or_its_trace_does_not_load_the_engine() -> None:
    code = ("import sys, gear, gear.trace, gear.events; "
            "print(sorted(m for m in sys.modules if m in ('gear.agent', 'gear.config', 'gear.store', 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
