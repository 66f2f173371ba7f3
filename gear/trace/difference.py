"""Two runs of one question, side by side: the same run, or where they part.

A question asked in the app and in `gear ask` on the same index with the same settings must give the same run — the
recordings make it so. A run asked afresh of the model may not: llama.cpp writes other text at temperature 0 when
part of a prompt comes from its cache (docs/reproducibility.md). So a fresh run is compared with the recorded
one and the difference is said where it starts: the first LLM call whose text differs (same prompt, other text: the
model; other prompt: an earlier difference), the answer, and the first rank where the final rankings part.

"The same run" means every event equal apart from timings and from where each answer came from (the model, a
recording or the memo): a replayed run and the live run it was recorded from are the same run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from gear.trace import Trace
from gear.trace.events import Answered, Event, FinalRanking, LLMCalled, RunStarted

#: fields that say how long something took or who answered, not what the run did
TIMING_FIELDS = frozenset({"seconds", "ms", "total_ms"})
ORIGIN_FIELDS = frozenset({"cached", "source"})
#: settings that say where answers are looked up and recorded, not how the run goes
ORIGIN_SETTINGS = frozenset({"llm", "llm_cache_dir", "llm_bundled_cache"})


def comparable(event: Event) -> dict[str, Any]:
    """An event as a dict without its timings and answer origins."""
    data = {"kind": event.kind, **dataclasses.asdict(event)}
    out = {k: v for k, v in data.items() if k not in TIMING_FIELDS | ORIGIN_FIELDS}
    if isinstance(event, RunStarted):
        out["settings"] = {k: v for k, v in event.settings.items() if k not in ORIGIN_SETTINGS}
    return out


def same_run(a: Trace, b: Trace) -> bool:
    """Every event equal apart from timings and answer origins."""
    return len(a.events) == len(b.events) and all(
        comparable(x) == comparable(y) for x, y in zip(a.events, b.events, strict=True))


@dataclass(frozen=True)
class CallDifference:
    """The first LLM call two runs answered differently."""

    number: int  # its place among the run's LLM calls, from 1
    iteration: int
    step: str
    same_prompt: bool  # the same request: the model wrote other text for it (an earlier difference otherwise)
    texts: tuple[str, str]
    tokens: tuple[int, int]  # completion tokens of each


@dataclass(frozen=True)
class RunDifference:
    """How run b differs from run a (a: the recorded run, b: the one asked afresh, by default)."""

    same: bool
    answers: tuple[str | None, str | None]
    iterations: tuple[int, int]
    first_rank: int | None  # the first rank where the final rankings differ, from 1 (None: the same ranking)
    titles: tuple[tuple[str, ...], tuple[str, ...]]  # the final rankings' top titles, from first_rank on
    first_call: CallDifference | None
    calls: tuple[int, int]
    unknown_calls: bool = False  # a trace from before calls recorded their text: call-level difference unknown

    def lines(self, a: str = "recorded", b: str = "asked again") -> list[str]:
        """The difference in words (plain text: the caller escapes it for where it is shown)."""
        if self.same:
            return [f"The same run: the {b} run equals the {a} one, call by call (every answer, every ranking)."]
        out: list[str] = []
        if self.answers[0] != self.answers[1]:
            out.append(f"answer: {self.answers[0] or '—'} ({a}) → {self.answers[1] or '—'} ({b})")
        else:
            out.append(f"answer: the same ({self.answers[0] or '—'})")
        if self.iterations[0] != self.iterations[1]:
            out.append(f"iterations: {self.iterations[0]} ({a}) → {self.iterations[1]} ({b})")
        if self.first_rank is None:
            out.append("final ranking: the same")
        else:
            left, right = (", ".join(t[:3]) or "—" for t in self.titles)
            out.append(f"final ranking: parts at rank {self.first_rank}: {left} ({a}) → {right} ({b})")
        call = self.first_call
        if call is not None:
            why = ("the same prompt, other text: the model wrote differently" if call.same_prompt else
                   "another prompt: an earlier difference changed what it was asked")
            out.append(f"first differing call: #{call.number}, iteration {call.iteration} {call.step} ({why}; "
                       f"{call.tokens[0]} → {call.tokens[1]} tokens written)")
        elif self.unknown_calls:
            out.append("first differing call: unknown (a trace from before calls recorded their text)")
        out.append(f"LLM calls: {self.calls[0]} ({a}) → {self.calls[1]} ({b})")
        return out


def difference(a: Trace, b: Trace) -> RunDifference:
    """Where run b parts from run a."""
    answers = tuple(x.answer if x is not None else None for x in (a.first(Answered), b.first(Answered)))
    rankings = [[p.title for p in f.passages] if (f := t.first(FinalRanking)) is not None else [] for t in (a, b)]
    first_rank = next((n + 1 for n, (x, y) in enumerate(zip(rankings[0], rankings[1], strict=False)) if x != y),
                      None if len(rankings[0]) == len(rankings[1]) else min(map(len, rankings)) + 1)
    calls = (a.of(LLMCalled), b.of(LLMCalled))
    unknown = any(not c.request for c in (*calls[0], *calls[1]))
    first_call = None
    if not unknown:
        for n, (x, y) in enumerate(zip(*calls, strict=False)):
            if x.request != y.request or x.text != y.text:
                first_call = CallDifference(n + 1, y.iteration, y.step, x.request == y.request, (x.text, y.text),
                                            (x.completion_tokens, y.completion_tokens))
                break
    return RunDifference(
        same=same_run(a, b),
        answers=(answers[0], answers[1]),
        iterations=(len(a.iterations()), len(b.iterations())),
        first_rank=first_rank,
        titles=(tuple(rankings[0][(first_rank or 1) - 1:]), tuple(rankings[1][(first_rank or 1) - 1:])),
        first_call=first_call,
        calls=(len(calls[0]), len(calls[1])),
        unknown_calls=unknown,
    )
