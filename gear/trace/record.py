"""The Trace: the ordered events of one run, streamed to listeners as they are recorded, saved and read back through
the one decoder (gear.trace.schema)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from gear.files import atomic_write_text
from gear.trace import schema
from gear.trace.cost import RunCost
from gear.trace.events import EVENT_TYPES, Event, IterationStarted, LLMCalled, RunFinished, RunStarted
from gear.trace.schema import FORMAT, FORMAT_VERSION

__all__ = ["Listener", "Trace"]


E = TypeVar("E", bound=Event)
Listener = Callable[[Event], None]


class Trace:
    """An ordered list of events; listeners see each event as it is recorded."""

    def __init__(self, events: list[Event] | None = None) -> None:
        self.events: list[Event] = list(events or [])
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, event: Event) -> None:
        self.events.append(event)
        for listener in self._listeners:
            listener(event)

    def emit_transient(self, event: Event) -> None:
        """Show an event to the listeners without recording it (streamed text: the final text is in the record; a
        wait for the model: the stage's time includes it)."""
        for listener in self._listeners:
            listener(event)

    # -- queries ------------------------------------------------------------------------------------------------------
    def of(self, cls: type[E], iteration: int | None = None) -> list[E]:
        return [e for e in self.events if isinstance(e, cls) and (iteration is None or e.iteration == iteration)]

    def first(self, cls: type[E], iteration: int | None = None) -> E | None:
        found = self.of(cls, iteration)
        return found[0] if found else None

    def iterations(self) -> list[int]:
        return sorted({e.iteration for e in self.events if isinstance(e, IterationStarted)})

    @property
    def question(self) -> str:
        start = self.first(RunStarted)
        return start.question if start else ""

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def llm_sources(self) -> dict[str, int]:
        """How many LLM calls each source answered: "model", "record" (recorded answers), "memo"."""
        counts = {"model": 0, "record": 0, "memo": 0}
        for call in self.of(LLMCalled):
            source = call.source or ("record" if call.cached else "model")  # traces from before `source`
            counts[source] = counts.get(source, 0) + 1
        return counts

    def paid_calls(self) -> list[LLMCalled]:
        """The run's LLM answers, each request once: a request repeated within the run (the memo answers it) was paid
        for the first time only, while an answer recorded, or given by the memo to an earlier run, stands for the
        model's work then."""
        paid: list[LLMCalled] = []
        seen: set[str] = set()
        for call in self.of(LLMCalled):
            if call.request:
                if call.request in seen:
                    continue
                seen.add(call.request)
            elif call.source == "memo":  # a trace from before calls named their request: the memo's were repeats
                continue
            paid.append(call)
        return paid

    def cost(self) -> RunCost:
        """What the run's LLM answers cost the model when it wrote them (gear.trace.cost), each request once; the
        run's own time beside it."""
        paid = self.paid_calls()
        recorded = sum(1 for c in paid if (c.source or ("record" if c.cached else "model")) != "model")
        finish = self.first(RunFinished)
        return RunCost(sum(c.prompt_tokens for c in paid), sum(c.completion_tokens for c in paid),
                       sum(c.seconds for c in paid), len(paid), recorded,
                       finish.total_ms / 1000 if finish is not None else None)

    def tokens(self, iteration: int | None = None, step: str | None = None) -> tuple[int, int]:
        """(prompt, completion) tokens the run's LLM answers cost when the model wrote them, each request once (as
        Trace.cost counts them), of one iteration or one step when given."""
        calls = [c for c in self.paid_calls() if iteration in (None, c.iteration) and step in (None, c.step)]
        return sum(c.prompt_tokens for c in calls), sum(c.completion_tokens for c in calls)

    # -- JSON ---------------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": FORMAT_VERSION,
                "events": [{"kind": e.kind, **dataclasses.asdict(e)} for e in self.events]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=1)

    @classmethod
    def from_dict(cls, data: Any, source: str = "trace") -> Trace:
        """A trace file's data, every field checked by gear.trace.schema; TraceError names the field that fails."""
        return cls(schema.decode(data, source, EVENT_TYPES))

    @classmethod
    def from_json(cls, text: str, source: str = "trace") -> Trace:
        return cls(schema.decode_json(text, source, EVENT_TYPES))

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> Trace:
        """A saved trace (untrusted: its size, nesting and every field checked before it is used)."""
        return cls(schema.load(Path(path), EVENT_TYPES))
