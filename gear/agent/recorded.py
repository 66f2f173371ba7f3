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
from gear.data.questions import Question
from gear.eval.protocol import runs_per_cutoff, traced_k
from gear.eval.sweep import CellProbe
from gear.events import FinalRanking
from gear.llm import LLM, LLMError, LLMResult, Message, TextListener, cache_of, fresh_llm, recorded_llm
from gear.llm.speed import TYPICAL_WRITE
from gear.trace import Trace
from gear.trace.difference import RunDifference, difference

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


@dataclass(frozen=True)
class AskAgain:
    """"Ask the model again" (the Ask page's button, `gear ask --live`) made ready: the model to ask afresh, and the
    recorded run the fresh one is compared with (None, and why, when there is none)."""

    llm: LLM
    recorded: Trace | None
    why: str

    def difference(self, fresh: Trace) -> RunDifference | None:
        """Where the fresh run parts from the recorded one; None when there is no recorded run."""
        return difference(self.recorded, fresh) if self.recorded is not None else None


def ask_again(engine: Engine, question: str, settings: Settings, *, k: int, gold: Sequence[int] = (),
              question_id: str = "", answers: Sequence[str] = ()) -> AskAgain:
    """The model asked afresh for this question (gear.llm.fresh_llm: raises LLMError for an LLM that serves
    recordings only), and the run the recordings hold, to compare the fresh run with once the caller has made it
    (Engine.retrieve with `llm=`, drawn or printed as it goes)."""
    llm = fresh_llm(engine.llm(settings))
    recorded, why = recorded_run(engine, question, settings, k=k, gold=gold, question_id=question_id,
                                 answers=answers)
    return AskAgain(llm, recorded, why)


# -- how far the recordings carry a run (a `gear sweep` cell's probe) -------------------------------------------------
@dataclass(frozen=True)
class Reach:
    """How far one run replays from the recordings: the requests answered before the first that none holds, where
    that request is made ("" when every request is recorded), and its size in tokens (≈4 characters a token)."""

    recorded: int
    live_from: str
    request_tokens: int = 0


class _RecordedOnly:
    """The recordings served alone; the first request they do not hold ends the run that made it."""

    def __init__(self, replay: LLM) -> None:
        self.inner = replay
        self.model = replay.model
        self.answered = 0

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        request = Request(messages, json_schema, max_tokens)
        if not is_recorded(self.inner, request):
            raise _FirstRequest(request)
        self.answered += 1
        return self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens)


def recorded_reach(engine: Engine, question: str, settings: Settings, k: int | None = None) -> Reach | None:
    """How far a run of `settings.method` on `question` replays from the recordings its LLM reads, found by running it
    over them alone (no model asked; a run replayed whole costs its retrieval). None: the run asks no LLM."""
    if not methods.get(settings.method).uses_llm(settings):
        return None
    replay = recorded_llm(engine.llm(settings))
    if replay is None:
        return Reach(0, "the first request")
    served, trace = _RecordedOnly(replay), Trace()
    try:
        engine.retrieve(question, k=settings.agent_k if k is None else k, settings=settings, trace=trace, llm=served)
    except _FirstRequest as stop:
        size = sum(len(m.get("content") or "") for m in stop.request.messages) // 4
        if trace.first(FinalRanking) is not None:
            where = "the answer"
        elif served.answered == 0:
            where = "the first request"
        else:
            where = f"iteration {max(trace.iterations(), default=1)}"
        return Reach(served.answered, where, size)
    return Reach(served.answered, "")


def probe_cell(engine: Engine, questions: Sequence[Question], settings: Settings, ks: Sequence[int],
               protocol: str) -> CellProbe:
    """What an evaluation of `questions` with `settings` (gear.eval.report.evaluate: its runs per question) will ask
    of the model: the runs that replay whole, in part, or not at all, and the model time the rest is expected to take
    at the model's learned speed (gear.llm.speed; the typical tokens of a question of the method, the size of the
    first unrecorded request for a run that meets the model only at its answer)."""
    method = methods.get(settings.method)
    run_ks = list(ks) if runs_per_cutoff(settings.method, protocol) else [traced_k(ks)]
    runs = [(q, None if method.multi_step else k) for q in questions for k in run_ks]
    if not method.uses_llm(settings):
        return CellProbe(len(runs), asks_llm=False)
    if settings.retriever != "bm25":
        engine.encoder.encode_cached(list(dict.fromkeys(q.question for q in questions)))
    probe = CellProbe(len(runs))
    speed, model = engine.speed, engine.llm(settings).model
    whole = speed.run_seconds(model, method, settings) or 0.0
    cap = getattr(settings, method.steps_setting, 0) if method.steps_setting else 0
    for question, k in runs:
        reach = recorded_reach(engine, question.question, settings, k)
        if reach is None or not reach.live_from:
            probe.replayed += 1
        elif reach.live_from == "the first request":
            probe.live += 1
            probe.estimate_s += whole
        else:
            probe.partly += 1
            probe.live_from[reach.live_from] = probe.live_from.get(reach.live_from, 0) + 1
            if reach.live_from == "the answer":
                probe.estimate_s += speed.speed(model).seconds(reach.request_tokens, TYPICAL_WRITE["qa"])
            else:  # the iterations from the one that meets the model to the cap, at the typical question's pace
                n = int(reach.live_from.rsplit(" ", 1)[-1])
                probe.estimate_s += whole * (cap - n + 1) / cap if cap else whole
    return probe
