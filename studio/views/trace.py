"""A run must look the same whether it is watched live or replayed from a saved trace, so one view draws a Trace
event by event, either as the run's listener or over a saved file. Untrusted text goes through st.dataframe /
escaped markdown only."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import streamlit as st

from gear import events as ev
from gear import methods
from gear import trace as t
from gear.agent.progress import RunProgress
from gear.llm.speed import ModelSpeed
from gear.viz.lesson import folding
from studio.core.safe import esc_md
from studio.core.widgets import GRAPH_HEIGHT, View, answer_origins, heading, iframe, table, triple_rows
from studio.views import gear_steps, peer_steps

__all__ = ["GRAPH_HEIGHT", "StatusLine", "TraceView", "answer_origins", "heading", "iframe", "show_wait", "table",
           "triple_rows"]


def show_wait(box: Any, e: ev.LLMWaiting) -> None:
    """A run's place in the model's queue, in `box` (a placeholder), cleared when its turn comes. Called on every
    poll of the queue, changed or not: each draw is a point where Streamlit can stop the script, so Cancel (or
    leaving the page) takes the run out of the queue at once."""
    if e.ahead > 0:
        box.caption(f":material/hourglass_top: {esc_md(e.step)} — waiting for the model: {e.ahead} ahead")
    else:
        box.empty()


class StatusLine:
    """One line in `box` saying where a run is and what it waits for (gear.agent.progress.RunProgress), redrawn as the
    run's events arrive — at most a few times a second while the model writes."""

    def __init__(self, box: Any, prefix: str = "", speed: ModelSpeed | None = None,
                 builds_ppr_graph: bool = False) -> None:
        self.box, self.prefix = box, prefix
        self.progress = RunProgress(speed, builds_ppr_graph=builds_ppr_graph)  # the engine's measured speeds
        self.drawn_at = 0.0
        self.text = ""

    def __call__(self, event: ev.Event) -> None:
        self.progress.update(event)
        now = time.perf_counter()
        if isinstance(event, ev.LLMText) and now - self.drawn_at < 0.5:
            return
        self.drawn_at = now
        self.text = self.prefix + self.progress.line()
        # our own words only (step names from the runners, method labels from the registry): no escaping, so the
        # line reads as written ("waiting for the model: 1 ahead")
        self.box.markdown(f":material/progress_activity: **{self.text}**")


class TraceView:
    """Renders events into Streamlit containers: one st.status per iteration, then a results section."""

    def __init__(self, *, live: bool = False, graph_height: int = GRAPH_HEIGHT, key: str = "view",
                 ran_here: bool | None = None, status: StatusLine | None = None) -> None:
        self.live, self.graph_height, self.key = live, graph_height, key
        self.ran_here = live if ran_here is None else ran_here
        self.status_line = status  # live runs: the line at the top saying what the run waits for
        self.events: list[ev.Event] = []
        self.status: Any = None
        self.body: Any = None  # what goes inside the running iteration's status (entered instead of the status: a
        # status used as a context manager marks itself complete on exit, so the running one showed a ✓)
        self.final: Any = None
        self.iteration = 0
        self.gold_known = False
        self.writing: Any = None  # the box showing the model's wait or its text while it writes (live runs)
        self.written_at = 0.0

    # -- driving ------------------------------------------------------------------------------------------------------
    def replay(self, trace: t.Trace) -> None:
        """Draw a recorded run. An iteration that repeats an earlier one (gear.viz.lesson.folding) is said once and
        not drawn again; its events still count in the run's numbers (tokens, calls, time)."""
        fold = folding(trace)
        for n, event in enumerate(trace):
            if n in fold.notes:
                self._finish_status()
                st.info(esc_md(fold.notes[n].text), icon=":material/repeat:")
            if n in fold.skipped:
                self.events.append(event)
                continue
            self(event)
        self.close()

    def __call__(self, event: ev.Event) -> None:
        if self.status_line is not None:
            self.status_line(event)
        if isinstance(event, ev.LLMAsking):
            return
        if isinstance(event, ev.LLMText):
            self.stream(event)
            return
        if isinstance(event, ev.LLMWaiting):
            self.wait(event)
            return
        if self.writing is not None:
            self.writing.empty()
            self.writing = None
        self.events.append(event)
        if isinstance(event, ev.RunStarted):
            self.gold_known = bool(event.gold_passage_ids)
            self.run_started(event)
            return
        if isinstance(event, ev.IterationStarted):
            self._finish_status()
            self.iteration = event.iteration
            label = f"Iteration {event.iteration}" + (" — running…" if self.live else "")
            self.status = st.status(label, expanded=True, state="running" if self.live else "complete")
            self.body = self.status.container()
        if isinstance(event, (ev.PassagesLinked, ev.FinalRanking, ev.Answered, ev.RunFinished)):
            self._finish_status()
            if self.final is None:
                self.final = st.container(border=True)
                self.final.subheader("Result")
            with self.final:
                self.draw(event)
            return
        with self._current():
            self.draw(event)

    def _current(self) -> Any:
        """Where a step's output goes: the running iteration, or once the result has begun, the result box (the
        QA call's LLM line and warnings come after the final ranking and belong with it)."""
        if self.final is not None:
            return self.final
        return self.body if self.status is not None else st.container()

    def _box(self) -> Any:
        """The placeholder for what the model is doing now (waiting, writing), in the current iteration."""
        if self.writing is None:
            with self._current():
                self.writing = st.empty()
        return self.writing

    def wait(self, e: ev.LLMWaiting) -> None:
        """The session's place in the model's queue, where the model's text will show (see show_wait)."""
        if e.ahead > 0 or self.writing is not None:
            show_wait(self._box(), e)

    def stream(self, e: ev.LLMText) -> None:
        """The model's text as it is written (the reader's triples appear while the model writes them); updated at
        most a few times a second, and cleared when the step's result arrives."""
        import time

        now = time.perf_counter()
        if self.writing is not None and now - self.written_at < 0.25:
            return
        self.written_at = now
        with self._box().container():
            st.caption(f":material/edit_note: {esc_md(e.step)} — the model is writing…")
            st.code(e.text[-1500:], language=None, wrap_lines=True)

    def _finish_status(self) -> None:
        if self.status is not None:
            self.status.update(label=f"Iteration {self.iteration}", state="complete", expanded=True)
            self.status = self.body = None

    def close(self) -> None:
        self._finish_status()

    # -- one event ---------------------------------------------------------------------------------------------------
    def run_started(self, e: ev.RunStarted) -> None:
        known = methods.find(e.method)
        method = known.label if known else esc_md(e.method)  # a trace from elsewhere may name any method
        retriever = known.retriever_shown(e.retriever, e.settings) if known else e.retriever
        st.markdown(f"**Question:** {esc_md(e.question)}")
        facts = [f"method **{method}**", f"retriever **{esc_md(retriever)}**"]
        if e.answers:
            facts.append("gold answer **" + esc_md(" / ".join(e.answers[:3])) + "**")
        if e.gold_passage_ids:
            facts.append(f"{len(e.gold_passage_ids)} gold passages (★)")
        st.caption(" · ".join(facts))

    def draw(self, e: ev.Event) -> None:
        """Draw one event in the current container: GeAR's steps (studio.views.gear_steps) and the peers'."""
        fn = DRAW.get(type(e))
        if fn is not None:
            fn(e, self)


DRAW: dict[type[ev.Event], Callable[[Any, View], None]] = {**gear_steps.DRAW, **peer_steps.DRAW}
