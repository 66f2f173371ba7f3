"""Turns at a model that serves one call at a time (the embedded llama.cpp context; a local server), first come first
served, with each waiter told how many calls are ahead of it.

A plain lock would do the serving, but not the telling: in a classroom several app sessions press Ask at once, and a
silent spinner is indistinguishable from a hang. The waiter's listener is taken from a context variable (set by the
caller with `listening`), so backends keep their `complete` signature and the engine decides what a wait looks like
(the app: "waiting for the model: 2 ahead" and a Cancel button; the CLI: a line on stderr). The listener is called
outside the queue's lock and again every `poll_seconds` while waiting: if it raises (Streamlit stops a script that
way when its user cancels), the ticket leaves the queue and the exception goes on to the caller.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

WaitListener = Callable[[int], None]  # receives the number of calls ahead (running + queued before this one)
HEARTBEAT_SECONDS = 0.25  # how often a waiting caller hears its listener (a point where it may stop)

_listener: ContextVar[WaitListener | None] = ContextVar("gear_llm_wait_listener", default=None)


@contextmanager
def listening(listener: WaitListener | None) -> Iterator[None]:
    """Report this thread's waits for a model turn to `listener` while inside the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def current_listener() -> WaitListener | None:
    """The listener in context now (a caller that sets its own can pass waits on to this one)."""
    return _listener.get()


class ModelQueue:
    """FIFO admission of at most `slots` concurrent calls."""

    def __init__(self, slots: int = 1, *, poll_seconds: float = HEARTBEAT_SECONDS) -> None:
        if slots < 1:
            raise ValueError("a model queue needs at least one slot")
        self.slots = slots
        self.poll_seconds = poll_seconds
        self._cond = threading.Condition()
        self._waiting: deque[object] = deque()
        self._running = 0

    def snapshot(self) -> tuple[int, int]:
        """(calls running, calls waiting) now."""
        with self._cond:
            return self._running, len(self._waiting)

    def _ahead(self, ticket: object) -> int | None:
        """Calls ahead of `ticket`, or None when it may run now (and then it is admitted). Caller holds the lock."""
        position = self._waiting.index(ticket)
        if position == 0 and self._running < self.slots:
            self._waiting.popleft()
            self._running += 1
            return None
        return self._running + position

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Wait for a turn, reporting the calls ahead to the listener in context on every poll (and 0 once admitted
        after a wait), and hold the turn inside the block."""
        ticket = object()
        listener = _listener.get()
        admitted = False
        with self._cond:
            self._waiting.append(ticket)
        try:
            waited = False
            while True:
                with self._cond:
                    ahead = self._ahead(ticket)
                    if ahead is None:
                        admitted = True
                        break
                    if listener is None:
                        self._cond.wait(self.poll_seconds)
                        continue
                # outside the lock, every poll: it may be slow, or raise to cancel (a heartbeat, so a cancelled
                # caller notices within poll_seconds even when nobody ahead moves)
                listener(ahead)
                waited = True
                with self._cond:
                    if self._waiting[0] is not ticket or self._running >= self.slots:
                        self._cond.wait(self.poll_seconds)
            if waited and listener is not None:
                listener(0)  # "your turn": the waiter's display can clear
            yield
        finally:
            with self._cond:
                if admitted:
                    self._running -= 1
                else:
                    self._waiting.remove(ticket)
                self._cond.notify_all()
