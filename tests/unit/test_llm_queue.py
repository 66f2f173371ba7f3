"""Many callers on one model: the queue serves them first come first served, tells each waiter how many calls are ahead
(and 0 when its turn comes), and gives a place back when its waiter leaves (a listener that raises, as Streamlit does on
Cancel) or its call fails. The embedded model takes turns through it; a run tells its trace's listeners about its
waits without storing them; a run that fails or is stopped leaves the model and the engine to the others."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.events import LLMCalled, LLMText, LLMWaiting, RunFinished
from gear.llm import LLMError
from gear.llm.queue import ModelQueue, listening
from gear.trace import Trace
from tests.scripted_llm import QueuedLLM, ScriptedLLM, another_call, wait_until

QUESTION = "Which sea is the island with Mount Etna the largest island in?"
MESSAGES = [{"role": "user", "content": "hello"}]


class Cancelled(BaseException):
    """What Streamlit raises in a script its user cancelled (RerunException, StopException): not an Exception."""


def changes(values: list[int]) -> list[int]:
    """The values a waiter heard, each repeat (one per poll) folded into one."""
    return [v for n, v in enumerate(values) if n == 0 or values[n - 1] != v]


def start(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


# -- the queue --------------------------------------------------------------------------------------------------------
def test_turns_are_first_come_first_served() -> None:
    queue = ModelQueue(1, poll_seconds=0.01)
    served: list[int] = []

    def call(n: int) -> None:
        with queue.turn():
            served.append(n)

    with another_call(queue):
        threads = []
        for n in range(6):
            threads.append(start(lambda n=n: call(n)))
            wait_until(lambda n=n: queue.snapshot() == (1, n + 1))  # in the queue before the next one comes
    for thread in threads:
        thread.join(10)
    assert served == list(range(6))
    assert queue.snapshot() == (0, 0)


def test_a_waiter_hears_how_many_calls_are_ahead_and_when_its_turn_comes() -> None:
    queue = ModelQueue(1, poll_seconds=0.01)
    heard: dict[str, list[int]] = {"second": [], "third": []}
    second_done = threading.Event()

    def call(name: str, hold: threading.Event | None = None) -> None:
        with listening(heard[name].append), queue.turn():
            if hold is not None:
                hold.wait(30)

    with another_call(queue) as first_done:
        second = start(lambda: call("second", second_done))
        wait_until(lambda: queue.snapshot() == (1, 1))
        third = start(lambda: call("third"))
        wait_until(lambda: heard["third"][-1:] == [2])
        first_done.set()
        wait_until(lambda: heard["third"][-1:] == [1])  # the first call is done, the second runs
        second_done.set()
        third.join(10)
        second.join(10)
    assert changes(heard["third"]) == [2, 1, 0]
    assert changes(heard["second"]) == [1, 0]
    assert queue.snapshot() == (0, 0)


def test_a_waiter_whose_listener_raises_leaves_the_queue_and_the_next_moves_up() -> None:
    queue = ModelQueue(1, poll_seconds=0.01)
    cancel = threading.Event()
    outcome: dict[str, str] = {}
    heard: list[int] = []

    def leaving(ahead: int) -> None:
        if cancel.is_set():
            raise Cancelled

    def cancelled_call() -> None:
        try:
            with listening(leaving), queue.turn():
                outcome["b"] = "ran"
        except Cancelled:
            outcome["b"] = "cancelled"

    def later_call() -> None:
        with listening(heard.append), queue.turn():
            outcome["c"] = "ran"

    with another_call(queue) as release:
        b = start(cancelled_call)
        wait_until(lambda: queue.snapshot() == (1, 1))
        c = start(later_call)
        wait_until(lambda: heard[-1:] == [2])
        cancel.set()
        b.join(10)
        assert outcome == {"b": "cancelled"}
        wait_until(lambda: heard[-1:] == [1])  # moved up while the first call still runs
        assert queue.snapshot() == (1, 1)
        release.set()
        c.join(10)
    assert outcome == {"b": "cancelled", "c": "ran"}
    assert changes(heard) == [2, 1, 0]
    assert queue.snapshot() == (0, 0)


@pytest.mark.parametrize("error", [RuntimeError, Cancelled])
def test_a_call_that_fails_inside_its_turn_gives_the_turn_back(error: type[BaseException]) -> None:
    queue = ModelQueue(1, poll_seconds=0.01)
    with pytest.raises(error), queue.turn():
        raise error("model failed")
    assert queue.snapshot() == (0, 0)
    heard: list[int] = []
    with listening(heard.append), queue.turn():
        assert queue.snapshot() == (1, 0)
    assert heard == []  # no wait: nobody was ahead


def test_two_slots_admit_two_calls_at_once() -> None:
    queue = ModelQueue(2, poll_seconds=0.01)
    both_inside = threading.Barrier(2, timeout=10)
    release = threading.Event()
    heard: list[int] = []

    def running() -> None:
        with queue.turn():
            both_inside.wait()  # passes only when the two calls run together
            release.wait(30)

    def waiting() -> None:
        with listening(heard.append), queue.turn():
            pass

    first, second = start(running), start(running)
    wait_until(lambda: queue.snapshot() == (2, 0))
    third = start(waiting)
    wait_until(lambda: heard[-1:] == [2])
    assert queue.snapshot() == (2, 1)
    release.set()
    for thread in (first, second, third):
        thread.join(10)
    assert heard[0] == 2 and heard[-1] == 0
    assert queue.snapshot() == (0, 0)
    with pytest.raises(ValueError):
        ModelQueue(0)


# -- a run's waits, through the trace ---------------------------------------------------------------------------------
@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(), encoder=make_encoder())


def test_a_run_tells_its_listeners_about_waits_and_the_trace_keeps_none(engine: Engine) -> None:
    queue = ModelQueue(1, poll_seconds=0.01)
    settings = Settings(retriever="bm25", expand="gear")
    engine.set_llm(settings, QueuedLLM(ScriptedLLM(), queue))
    trace = Trace()
    waits: list[LLMWaiting] = []
    trace.subscribe(lambda e: waits.append(e) if isinstance(e, LLMWaiting) else None)
    with another_call(queue) as release:
        def release_once_heard() -> None:
            try:
                wait_until(lambda: any(w.ahead == 1 for w in waits), timeout=5)
            finally:
                release.set()

        watcher = start(release_once_heard)
        engine.retrieve(QUESTION, k=4, settings=settings, trace=trace)
        watcher.join(10)
    first = waits[0]
    assert (first.iteration, first.step, first.ahead) == (1, "read (sync)", 1)
    assert [w.ahead for w in waits if w.step == first.step][-1] == 0  # its turn came
    assert {w.step for w in waits} == {first.step}  # the later calls found the model free
    assert trace.of(LLMWaiting) == [] and "llm_waiting" not in trace.to_json()
    assert trace.first(RunFinished) is not None
    assert queue.snapshot() == (0, 0)


class FailingLLM:
    """Fails at the reasoner, after the reader's call succeeded."""

    model = "scripted"

    def complete(self, messages, **kwargs):
        if "# Task Description:" in messages[-1]["content"]:
            raise LLMError("the model server went away")
        return ScriptedLLM().complete(messages, **kwargs)


def cancel_on_text(event: object) -> None:
    if isinstance(event, LLMText):
        raise Cancelled  # a Streamlit listener drawing the text of a cancelled session


@pytest.mark.parametrize(("inner", "listener", "error"), [(FailingLLM(), None, LLMError),
                                                          (ScriptedLLM(), cancel_on_text, Cancelled)])
def test_a_run_that_fails_or_is_stopped_leaves_the_model_and_engine_to_the_others(
        engine: Engine, inner: Any, listener: Any, error: type[BaseException]) -> None:
    queue = ModelQueue(1, poll_seconds=0.01)
    mine = Settings(retriever="bm25", expand="gear")
    # another session's settings (another LLM configuration, the same model behind it), on the same engine
    theirs = mine.with_(prompts="small", llm_model="scripted-small")
    engine.set_llm(mine, QueuedLLM(inner, queue, pieces=3))
    engine.set_llm(theirs, QueuedLLM(ScriptedLLM(), queue))
    trace = Trace()
    if listener is not None:
        trace.subscribe(listener)
    with pytest.raises(error):
        engine.retrieve(QUESTION, k=4, settings=mine, trace=trace)
    assert queue.snapshot() == (0, 0)
    run = engine.retrieve(QUESTION, k=4, settings=theirs)
    assert run.trace.first(RunFinished) is not None and run.trace.of(LLMCalled)
    assert run.trace.first(LLMCalled).model == "scripted"


def test_a_caller_without_the_trace_hears_the_waits_too(engine: Engine) -> None:
    """The Evaluate page sees no trace of the runs `evaluate` makes: it sets its own listener around them, and each
    step passes its waits on to it as well as to the trace."""
    queue = ModelQueue(1, poll_seconds=0.01)
    settings = Settings(retriever="bm25", expand="gear")
    engine.set_llm(settings, QueuedLLM(ScriptedLLM(), queue))
    heard: list[int] = []
    with another_call(queue) as release:
        def release_once_heard() -> None:
            try:
                wait_until(lambda: 1 in heard, timeout=5)
            finally:
                release.set()

        watcher = start(release_once_heard)
        with listening(heard.append):
            engine.retrieve(QUESTION, k=4, settings=settings, trace=Trace())
        watcher.join(10)
    assert heard[0] == 1 and heard[-1] == 0
    assert queue.snapshot() == (0, 0)
