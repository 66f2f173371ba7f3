"""What one question's run produces (Run) and how its stages are timed (Timer): shared by the engine's single-step
methods and the agent loop, so neither has to import the other for them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from gear.events import StageTimed
from gear.trace import Trace
from gear.types import Scored


@dataclass
class Run:
    """The outcome of one question: the ranked passages and the trace of how they were found."""

    ranked: list[Scored]
    trace: Trace
    timings_ms: dict[str, float] = field(default_factory=dict)
    answer: str | None = None

    @property
    def ids(self) -> list[int]:
        return [s.id for s in self.ranked]


class Timer:
    """Accumulates milliseconds per stage and reports each into the trace."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.totals: dict[str, float] = {}

    def stage(self, name: str, iteration: int, start: float) -> float:
        ms = (time.perf_counter() - start) * 1000
        self.totals[name] = self.totals.get(name, 0.0) + ms
        self.trace.emit(StageTimed(iteration, name, ms))
        return time.perf_counter()
