"""What a run cost: the tokens and seconds its LLM answers took the model when it wrote them, and the run's own time.

A replayed run asks no model, yet it stands for a run that did: its answers come from recordings (or from this
process's memo of an earlier run), each keeping the tokens and seconds the model spent on it. So the cost of a run is
what its answers cost when they were written — counted once per request, as the model saw each request once — with
`recorded` saying how many were not asked now, and the run's own seconds beside it. Every page and command that shows
a run's cost (the trace view, Compare, Traces, the evaluation report, `gear compare`) reads it from here, through
`Trace.cost()`.
"""

from __future__ import annotations

from dataclasses import dataclass


def seconds_words(seconds: float) -> str:
    """"199 s", "8.4 s", "0.05 s": as many digits as the size needs."""
    if seconds >= 10:
        return f"{seconds:,.0f} s"
    if seconds >= 1:
        return f"{seconds:.1f} s"
    return f"{seconds:.2f} s"


@dataclass(frozen=True)
class RunCost:
    """The cost of one run's LLM answers when the model wrote them (each request once), how many of those answers
    were recorded rather than asked now, and the run's own wall time (None for a run that did not finish)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0  # the model's time for the answers, when it wrote them
    requests: int = 0  # distinct LLM requests of the run
    recorded: int = 0  # of them, answered by a recording or by the memo of an earlier run: not asked now
    seconds: float | None = None  # the run's own time, start to finish

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def replayed(self) -> bool:
        """Whether every answer was recorded: the run as a whole stands for one made earlier."""
        return self.requests > 0 and self.recorded == self.requests

    def origin(self) -> str:
        """"recorded", "live", "recorded + live" (some of each), or "" for a run that asks no LLM."""
        if not self.requests:
            return ""
        if self.replayed:
            return "recorded"
        return "recorded + live" if self.recorded else "live"

    def words(self) -> str:
        """One sentence: "6,575 tokens and 199 s of model time when recorded; this replay took 0.05 s", "1,210
        tokens and 20 s of model time", "no LLM call; 0.3 s"."""
        took = f"{seconds_words(self.seconds)}" if self.seconds is not None else ""
        if not self.requests:
            return "no LLM call" + (f"; {took}" if took else "")
        paid = f"{self.tokens:,} tokens and {seconds_words(self.model_seconds)} of model time"
        if self.replayed:
            return f"{paid} when recorded" + (f"; this replay took {took}" if took else "")
        if self.recorded:
            return (f"{paid} ({self.recorded} of {self.requests} answers recorded)"
                    + (f"; this run took {took}" if took else ""))
        return paid + (f"; the run took {took}" if took else "")
