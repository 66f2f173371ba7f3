"""Where a live run is and what it waits for, as one line: a person watching a live run waits ≈15 s for each read
before any text appears, so the app's status line names the step in progress and what it waits for ("Iteration 2 of
up to 4 · gist read · the model is reading 1,300 tokens (≈ 15 s)"). The time is the model's learned speed
(gear.llm.speed.ModelSpeed) applied to what the model has not read yet; `RunProgress` is fed the run's events.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from gear import events as t
from gear import methods
from gear.llm.speed import MODEL_SPEED, ModelSpeed

#: the words a step's name is shown with
STEP_NAMES = {"read (sync)": "sync read", "read (gist)": "gist read", "reason": "reasoner", "rewrite": "rewriter",
              "qa": "QA step", "think": "IRCoT thought", "filter": "recognition filter"}

def step_name(step: str) -> str:
    return STEP_NAMES.get(step, step)


def seconds_text(seconds: float) -> str:
    """"≈ 15 s", "≈ 2 min" — the precision an estimate deserves."""
    if seconds < 60:
        return f"≈ {max(1, round(seconds))} s"
    return f"≈ {round(seconds / 60)} min" if seconds >= 90 else f"≈ {round(seconds)} s"


def iteration_limit(method: methods.Method | None, settings: Mapping[str, Any]) -> int | None:
    """The most iterations a run of `method` takes under `settings` (None: it does not iterate)."""
    if method is None or not method.steps_setting:
        return None
    value = settings.get(method.steps_setting)
    return int(value) if isinstance(value, int | float) else None


#: what the line says of a call that the model is not asked (LLMAsking.answered_by): no estimate to show
ANSWERED_BY = {"record": "answered from the recordings", "memo": "answered by the memo (asked before in this process)"}

#: what a run does after each event, until the next one arrives (events the line does not change for are absent)
NEXT_STEP: dict[type[t.Event], str] = {
    t.IterationStarted: "base retrieval", t.BaseRetrieved: "expanding from the base passages",
    t.ProximalTriples: "tripleLink",
    t.TriplesLinked: "graph expansion (beam search)", t.InitialNodes: "graph expansion (beam search)",
    t.BeamsSearched: "fusion", t.PassagesExpanded: "fusion", t.PassagesFused: "after fusion",
    t.GistUpdated: "reasoner", t.Reasoned: "after the verdict", t.QueryRewritten: "next iteration",
    t.PassagesLinked: "final ranking", t.PPRSeeded: "Personalized PageRank", t.PPRRanked: "after PPR",
    t.PassagesAdded: "IRCoT thought", t.ThoughtWritten: "next retrieval",
}


class RunProgress:
    """Where one run is and what it waits for, as one line, kept up to date by feeding it the run's events (the
    transient ones too: LLMAsking, LLMWaiting, LLMText). Pure text: the app shows it beside Cancel, a CLI could
    print it."""

    def __init__(self, speed: ModelSpeed | None = None, clock: Any = time.monotonic,
                 builds_ppr_graph: bool = False) -> None:
        self.speed = speed or MODEL_SPEED
        self.builds_ppr_graph = builds_ppr_graph  # the run's PPR graph is built on first use (tens of seconds)
        self.clock = clock
        self.method: methods.Method | None = None
        self.settings: Mapping[str, Any] = {}
        self.limit: int | None = None
        self.iteration = 0
        self.step = "starting"
        self.detail = ""
        self.asked: t.LLMAsking | None = None
        self.estimate: float | None = None  # seconds of the call in progress, as the line says
        self.asked_at = 0.0
        self.finished = False

    def update(self, event: t.Event) -> None:
        """Take one event of the run into account."""
        if isinstance(event, t.RunStarted):
            self.method = methods.find(event.method)
            self.settings = event.settings
            self.limit = iteration_limit(self.method, event.settings)
            ppr = self.method is not None and self.method.uses_ppr(event.settings)
            self.step = ("building PPR's entity graph (first use on this index: every entity name encoded once)"
                         if ppr and self.builds_ppr_graph else "PPR fact matching" if ppr else "base retrieval")
            self.detail = ""
        elif isinstance(event, t.IterationStarted):
            self.iteration = event.iteration
            if not self.step.startswith("building PPR"):  # the build comes after the iteration starts
                self.step, self.detail = NEXT_STEP[t.IterationStarted], ""
        elif isinstance(event, t.LLMAsking):
            self.asked, self.asked_at = event, self.clock()
            self.estimate = 0.0 if event.answered_by else self.speed.estimate(event)
            self.step = step_name(event.step)
            self.detail = ANSWERED_BY.get(event.answered_by) or self.reading_text(event)
        elif isinstance(event, t.LLMWaiting):
            self.step = step_name(event.step)
            self.detail = f"waiting for the model: {event.ahead} ahead" if event.ahead > 0 else (
                self.reading_text(self.asked) if self.asked is not None and not self.asked.answered_by else "")
            if event.ahead > 0:
                self.asked_at = self.clock()  # the call's time starts with its turn
        elif isinstance(event, t.LLMText):
            self.step = step_name(event.step)
            self.detail = f"the model is writing ({len(event.text):,} characters so far)"
        elif isinstance(event, t.LLMCalled):
            self.step, self.detail = step_name(event.step), "done"
        elif isinstance(event, t.FinalRanking):
            self.step = "QA step" if self.method is None or self.method.answers else "finishing"
            self.detail = ""
        elif isinstance(event, t.BaseRetrieved) and self.method is not None and self.method.uses_ppr(self.settings):
            self.step, self.detail = "Personalized PageRank", ""  # PPR's base list is its dense seeds
        elif isinstance(event, t.RunFinished):
            self.step, self.detail, self.finished = "finished", "", True
        elif type(event) in NEXT_STEP:
            self.step, self.detail = NEXT_STEP[type(event)], ""

    def reading_text(self, asked: t.LLMAsking) -> str:
        tokens = self.speed.prompt_tokens(asked)
        cached = self.speed.cached_tokens(asked)
        seen = f"{cached:,} already read; " if cached >= 0.05 * tokens and cached > 0 else ""
        speed = self.speed.speed(asked.model)
        assumed = "" if speed.calls else ", assumed speed"
        return f"the model is reading {tokens:,} tokens ({seen}{seconds_text(self.estimate or 0)}{assumed})"

    def line(self) -> str:
        """"Iteration 2 of up to 4 · gist read · the model is reading 1,300 tokens (≈ 15 s)"."""
        parts = []
        if self.iteration and self.limit:
            parts.append(f"Iteration {self.iteration} of up to {self.limit}")
        elif self.iteration and self.method is not None and self.method.multi_step:
            parts.append(f"Iteration {self.iteration}")
        parts.append(self.step)
        if self.detail:
            parts.append(self.detail)
        return " · ".join(parts)
