"""What one run of a method may use, and what its runner gives back.

The engine builds a RunContext for every run (Engine.retrieve) and hands it to the method's runner (gear.methods names
it): the index's backend, the encoder behind a cached `encode`, the LLM when the method asks one, the beam-search
scorer and parameters, the PPR graph on demand, the trace, the gold passages, the settings, and the engine's record of
the model's speed (which each LLM call teaches and the next call's announcement reads). Runners see nothing else of the
engine, so they cannot reach past what a run needs, and the engine owns the run's life around them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from gear.agent.asks import Ask
from gear.agent.run import Timer
from gear.config import BeamSettings, Settings
from gear.events import LLMAsking, LLMCalled, LLMText, LLMWaiting, Warned
from gear.llm import LLM, Message, answered_at_once, current_listener, estimate_tokens, listening, request_key
from gear.llm.speed import ModelSpeed
from gear.retrieve.beam import BeamParams
from gear.retrieve.ppr import PPRIndex
from gear.retrieve.scoring import SequenceScorer
from gear.store.base import SearchBackend
from gear.trace import Trace
from gear.types import Scored

Encode = Callable[[Sequence[str]], np.ndarray]  # texts → unit vectors (one row each), through the encoder's cache


@dataclass
class Outcome:
    """A runner's own part of a run: its ranking and the iterations it took. The engine writes the rest (the final
    ranking, the answer, the finish and the Run record)."""

    ranked: list[Scored]
    iterations: int = 1


def beam_params(settings: BeamSettings) -> BeamParams:
    """Algorithm 1's parameters from the settings (γ as in force: 2b unless set)."""
    return BeamParams(settings.beam_width, settings.beam_length, settings.max_neighbours, settings.effective_gamma,
                      settings.diversity)


@dataclass
class RunContext:
    """One run's view of an opened index. `gold` marks passages in the trace's events and nothing else; `llm` is
    None for a run that asks no LLM (the method's record says when it does)."""

    settings: Settings
    trace: Trace
    gold: frozenset[int]
    backend: SearchBackend
    encode: Encode
    make_scorer: Callable[[], SequenceScorer]  # score(q, T) for Diverse Triple Beam Search, exact or fast
    ppr_index: Callable[[], PPRIndex]  # the index's PPR graph for these settings, built on first use
    ppr_ready: Callable[[], bool]  # whether that graph is built already (a first build is timed on its own)
    speed: ModelSpeed  # the engine's: what the model's server has read, and how fast it reads and writes
    llm: LLM | None = None
    timer: Timer = field(init=False)
    last_read: list[int] = field(default_factory=list)  # the run's previous read, as shown (read_order "cache")

    def __post_init__(self) -> None:
        self.timer = Timer(self.trace)

    @cached_property
    def scorer(self) -> SequenceScorer:
        return self.make_scorer()

    @cached_property
    def beam(self) -> BeamParams:
        return beam_params(self.settings)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    def base_retrieve(self, query: str, k: int, query_vector: np.ndarray | None = None) -> list[Scored]:
        """h^k_base(q, C): BM25 needs no query vector; dense and hybrid encode the query unless it is given."""
        retriever = self.settings.retriever
        qv = None if retriever == "bm25" else (query_vector if query_vector is not None else self.encode_query(query))
        if qv is not None and qv.ndim == 1:
            qv = qv[None, :]
        return self.backend.search_passages([query], k, retriever, qv)[0]

    def ask(self, ask: Ask, iteration: int) -> str:
        """One LLM call: a wait for the model's turn and the text as it is written go to the trace's listeners
        (nothing here catches what a listener raises: that is how the app cancels a run), its cost is recorded."""
        if self.llm is None:
            raise RuntimeError(f"{ask.step}: this run was given no LLM (its method's record in gear.methods says it "
                               "asks none)")
        messages: list[Message] = [{"role": "user", "content": ask.prompt}]
        instant = answered_at_once(self.llm, messages, ask.schema, ask.max_tokens)  # the memo or a recording
        head = 0 if instant else self.speed.cached_head(self.llm.model, ask.prompt)  # what the server has read
        asking = LLMAsking(iteration, ask.step, self.llm.model, estimate_tokens(ask.prompt), ask.max_tokens,
                           estimate_tokens(ask.prompt[:head]), instant or "")
        self.trace.emit_transient(asking)  # what the run waits for, before the model starts (gear.agent.progress)
        written: list[str] = []

        def stream(piece: str) -> None:
            written.append(piece)
            self.trace.emit_transient(LLMText(iteration, ask.step, "".join(written)))

        outer = current_listener()  # e.g. the Evaluate page, which sees no trace of the runs it makes

        def wait(ahead: int) -> None:
            self.trace.emit_transient(LLMWaiting(iteration, ask.step, ahead))
            if outer is not None:
                outer(ahead)

        with listening(wait):
            result = self.llm.complete(messages, json_schema=ask.schema, max_tokens=ask.max_tokens, on_text=stream)
        called = LLMCalled(iteration, ask.step, result.model, result.prompt_tokens, result.completion_tokens,
                           result.seconds, result.cached, result.source,
                           request_key(self.llm, messages, ask.schema, ask.max_tokens), result.text)
        self.speed.observe(called, asking, result.cached_prompt_tokens, ask.prompt)  # speed for the next estimates
        self.trace.emit(called)
        return result.text

    def warn(self, iteration: int, messages: Sequence[str], where: str) -> None:
        for message in messages:
            self.trace.emit(Warned(iteration, f"{where}: {message}"))


Runner = Callable[[RunContext, str, int], Outcome]  # (context, question, k) → the runner's part of the run
