"""Whether a question replays at once or runs live, told before it is asked: a list of example questions says which
answers are recorded (instant) and which the model must compute (≈ a minute or two on a CPU).

The honest test is the run's own first request to the LLM: the engine runs the method (Engine.retrieve, the one place a
run is made) with an LLM that stops the run at that request (retrieval only — nothing is asked of any model), and the
request's cache entry is looked for where the configured LLM would look (its record/replay cache and the bundled
recordings). A run whose first answer is recorded replays from the recordings as far as they go: usually the whole
run (the later requests follow from the recorded answers), but a run that was cut short when it was recorded (a
Cancel, a crash) has its later requests unrecorded, and those go to the live model when they are reached (and are
recorded then) — `recorded_run` says so ("the recorded run is incomplete"). A run without a recorded first answer
goes to the live model from its first step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gear import methods
from gear.config import Settings
from gear.llm import LLM, LLMError, LLMResult, Message, TextListener, cache_of, recorded_llm
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
    """The first request a run of `settings.method` on `question` sends to its LLM (None: the run asks none); only
    the run's retrieval is done (the engine's own run, stopped at that request)."""
    if not methods.get(settings.method).uses_llm(settings):
        return None
    try:
        engine.retrieve(question, k=methods.DEPTH if k is None else k, settings=settings, trace=Trace(),
                        llm=_StopAtFirstRequest(engine.llm(settings).model))
    except _FirstRequest as stop:
        return stop.request
    return None


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
    if settings.retriever != "bm25" and methods.get(settings.method).uses_llm(settings):
        engine.encoder.encode_cached(list(dict.fromkeys(questions)))
    return {q: replays_at_once(engine, q, settings) for q in questions}


def recorded_run(engine: Engine, question: str, settings: Settings, *, k: int, gold: Sequence[int] = (),
                 question_id: str = "", answers: Sequence[str] = ()) -> tuple[Trace | None, str]:
    """The run the recordings hold for this question and these settings, replayed from them alone (no model asked):
    what a fresh run is compared with. (None, why) when there is none: the method asks no LLM, the LLM reads no
    recordings, its first request was never recorded, or a later one was not (a run cut short)."""
    method = methods.get(settings.method)
    if not method.uses_llm(settings):
        return None, "this method asks no LLM"
    replay = recorded_llm(engine.llm(settings))
    if replay is None:
        return None, "this LLM keeps no recordings"
    request = first_request(engine, question, settings, k)
    if request is None or not is_recorded(replay, request):
        return None, "nothing was recorded for this question with these settings"
    try:
        run = engine.retrieve(question, k=k, settings=settings, gold=gold, question_id=question_id,
                              answers=answers, llm=replay)
    except LLMError as exc:
        return None, f"the recorded run is incomplete ({exc})"
    return run.trace, ""
