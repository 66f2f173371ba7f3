"""Whether a question replays at once or runs live, told before it is asked: a list of example questions says which
answers are recorded (instant) and which the model must compute (≈ a minute or two on a CPU).

The honest test is the run's own first request to the LLM: the method is run up to that request with an LLM that stops
the run there (retrieval only — nothing is asked of any model), and the request's cache entry is looked for where the
configured LLM would look (its record/replay cache and the bundled recordings). A run whose first answer is recorded
was recorded whole with these settings (the later requests follow from the recorded answers); a run without one goes
to the live model from its first step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gear import methods
from gear.agent import steps
from gear.agent.methods import runner
from gear.config import Settings
from gear.llm import LLM, CachedLLM, LLMResult, Message, TextListener
from gear.trace import Trace

if TYPE_CHECKING:
    from gear.agent.engine import Engine


@dataclass(frozen=True)
class Request:
    """One LLM request as a run makes it (what a record/replay cache is keyed by, with the model's name)."""

    messages: list[Message]
    json_schema: dict | None
    max_tokens: int


class _FirstRequest(BaseException):  # a signal that passes through any "except Exception" of a step
    def __init__(self, request: Request) -> None:
        super().__init__("first LLM request reached")
        self.request = request


class _StopAtFirstRequest:
    """An LLM that answers nothing: the first request it is given ends the run that made it."""

    def __init__(self, model: str) -> None:
        self.model = model

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        raise _FirstRequest(Request(messages, json_schema, max_tokens))


def first_request(engine: Engine, question: str, settings: Settings, k: int | None = None) -> Request | None:
    """The first request a run of `settings.expand` on `question` sends to its LLM (None: the run asks none); only
    the run's retrieval is done."""
    method = methods.get(settings.expand)
    if not method.uses_llm(settings):
        return None
    llm = engine.llm(settings)
    ctx = engine.context(settings, Trace(), (), _StopAtFirstRequest(llm.model))
    try:
        outcome = runner(method)(ctx, question, settings.agent_k if k is None else k)
        if method.answers and settings.answer:
            steps.answer(ctx, question, outcome.ranked, (), outcome.iterations)
    except _FirstRequest as stop:
        return stop.request
    return None


def cache_of(llm: LLM) -> CachedLLM | None:
    """The record/replay cache inside an LLM's wrappers (the memo), if it has one."""
    seen = 0
    while not isinstance(llm, CachedLLM) and hasattr(llm, "inner") and seen < 8:
        llm, seen = getattr(llm, "inner"), seen + 1  # noqa: B009 - the wrappers (memo) are not typed as having one
    return llm if isinstance(llm, CachedLLM) else None


def is_recorded(llm: LLM, request: Request) -> bool:
    """Whether the LLM's cache (or the recordings it reads) holds the answer to `request`."""
    cache = cache_of(llm)
    return cache is not None and cache.answers_at_once(request.messages, request.json_schema,
                                                        request.max_tokens) == "record"


def replays_at_once(engine: Engine, question: str, settings: Settings) -> bool | None:
    """True: the run's answers are recorded (it replays at once); False: its LLM computes them live; None: the run
    asks no LLM (it takes seconds either way)."""
    request = first_request(engine, question, settings)
    if request is None:
        return None
    return is_recorded(engine.llm(settings), request)


def replays_at_once_all(engine: Engine, questions: Sequence[str], settings: Settings) -> dict[str, bool | None]:
    """replays_at_once for many questions, their query vectors encoded in one batch first (one at a time, a query
    took ≈0.5 s on a busy 2-core machine; fifty in a batch take about as long as two)."""
    if settings.retriever != "bm25" and methods.get(settings.expand).uses_llm(settings):
        engine.encoder.encode_cached(list(dict.fromkeys(questions)))
    return {q: replays_at_once(engine, q, settings) for q in questions}
