"""The live run's status line and its time estimate (gear.llm.speed, the line gear.agent.progress): the speed learned
from live calls, the prompt size announced before each call (LLMAsking, never stored), and the line itself at each
step."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gear import methods
from gear.agent.engine import Engine
from gear.agent.progress import RunProgress, seconds_text
from gear.config import Settings, public_settings
from gear.events import (
    BaseRetrieved,
    FinalRanking,
    GistUpdated,
    IterationStarted,
    LLMAsking,
    LLMCalled,
    LLMText,
    LLMWaiting,
    RunFinished,
    RunStarted,
    TriplesLinked,
)
from gear.llm import CachedLLM, MemoLLM
from gear.llm.speed import (
    DEFAULT_READ_RATE,
    DEFAULT_WRITE_RATE,
    KEEP_SHARE,
    MODEL_SPEED,
    TYPICAL_WRITE,
    ModelSpeed,
    common_head,
    fit,
)
from gear.trace import Trace
from tests.scripted_llm import ScriptedLLM

MODEL = "m"


def live(prompt: int, written: int, read_rate: float = 120.0, write_rate: float = 20.0, step: str = "read (sync)",
         source: str = "model") -> LLMCalled:
    return LLMCalled(1, step, MODEL, prompt, written, prompt / read_rate + written / write_rate, source != "model",
                     source)


def test_before_any_call_the_stated_defaults_hold() -> None:
    speed = ModelSpeed()
    s = speed.speed(MODEL)
    assert (s.read_rate, s.write_rate, s.calls) == (DEFAULT_READ_RATE, DEFAULT_WRITE_RATE, 0)
    asked = LLMAsking(1, "read (gist)", MODEL, 1500, 384)
    expected = 1500 / DEFAULT_READ_RATE + TYPICAL_WRITE["read"] / DEFAULT_WRITE_RATE
    assert speed.estimate(asked) == pytest.approx(expected)


def test_the_speed_is_learned_from_live_calls() -> None:
    speed = ModelSpeed()
    for prompt, written in ((1400, 30), (180, 40), (1300, 90), (250, 12), (1450, 4), (1350, 60)):
        speed.observe(live(prompt, written))
    s = speed.speed(MODEL)
    # six calls against two pseudo-calls of the defaults: near the true 120 / 20 tokens/s (writing is the looser fit)
    assert s.calls == 6
    assert 100 < s.read_rate < 125 and 15 < s.write_rate < 30  # the defaults alone: 85 / 20
    exact = fit([(p, c, p / 120 + c / 20) for p, c in ((1400, 30), (180, 40), (1300, 90))] * 40,
                speed.default)
    assert exact.read_rate == pytest.approx(120, rel=0.03) and exact.write_rate == pytest.approx(20, rel=0.03)


def test_recorded_and_memo_answers_teach_no_speed_but_what_a_step_writes() -> None:
    speed = ModelSpeed()
    speed.observe(live(1400, 300, read_rate=1e6, write_rate=1e6, step="reason", source="record"))
    speed.observe(live(1400, 300, step="reason", source="memo"))
    assert speed.speed(MODEL).calls == 0
    assert speed.written("reason", 160) == 160  # what it wrote (300), capped by the call's max_tokens
    assert speed.written("reason", 512) == 300


def test_the_prompt_estimate_is_corrected_by_the_counted_tokens() -> None:
    speed = ModelSpeed()
    asked = LLMAsking(1, "read (sync)", MODEL, 1000, 384)
    assert speed.prompt_tokens(asked) == 1000
    speed.observe(live(1100, 20), asked)  # the model counted 10 % more than ≈4 characters a token
    assert speed.prompt_tokens(LLMAsking(2, "read (gist)", MODEL, 2000, 384)) == 2200


HEAD = "Your task is to find facts. " * 20  # 560 characters every read starts with
PASSAGES = "Wikipedia Title: Sicily\nSicily is the largest island in the Mediterranean Sea.\n\n" * 30


def test_common_head() -> None:
    assert [common_head(a, b) for a, b in (("", "x"), ("abc", "abd"), ("abc", "abc"), ("abc", "abcdef"),
                                            ("xbc", "abc"))] == [0, 2, 3, 3, 0]
    long = "a" * 10_000
    assert common_head(long + "b", long + "c") == 10_000


def test_the_head_the_server_has_read_counts_once_it_has_shown_a_cache() -> None:
    speed = ModelSpeed()
    first = HEAD + PASSAGES + "Question: where is Etna?"
    again = HEAD + PASSAGES + "Question: which sea?"
    speed.observe(live(600, 20), prompt=first)  # the server reported no cached tokens: it may not cache
    assert speed.cached_head(MODEL, again) == 0
    speed.observe(live(600, 20), cached_prompt_tokens=12, prompt=first)
    assert speed.cached_head(MODEL, again) == len(HEAD + PASSAGES + "Question: wh")
    assert speed.cached_head("another model", again) == 0
    # an earlier prompt other than the last counts only where the server would restore it from its RAM cache
    speed.observe(live(50, 5), cached_prompt_tokens=3, prompt="Reason about the memory.")
    assert speed.cached_head(MODEL, again) == len(HEAD + PASSAGES + "Question: wh")
    short = HEAD + "Wikipedia Title: Other\n"  # shares only HEAD with `first`: under KEEP_SHARE of it
    assert len(short) < KEEP_SHARE * len(first)
    assert speed.cached_head(MODEL, short) == 0
    speed.observe(live(500, 5), cached_prompt_tokens=3, prompt=HEAD + "Wikipedia Title: Malta\n")
    assert speed.cached_head(MODEL, short) == len(HEAD + "Wikipedia Title: ")  # the last prompt always counts


def test_recorded_and_memo_answers_never_reach_the_server_so_leave_no_cache() -> None:
    speed = ModelSpeed()
    speed.observe(live(600, 20), cached_prompt_tokens=12, prompt="unrelated")
    speed.observe(live(600, 20, source="memo"), prompt=HEAD + PASSAGES)
    speed.observe(live(600, 20, source="record"), prompt=HEAD + PASSAGES)
    assert speed.cached_head(MODEL, HEAD + PASSAGES + "Question: ?") == 0


def test_the_reading_speed_is_learned_from_what_the_server_read() -> None:
    speed = ModelSpeed()
    for prompt, cached, written in ((1400, 24, 30), (1500, 1300, 40), (1300, 900, 90), (250, 200, 12)) * 6:
        seconds = (prompt - cached) / 100 + written / 25
        speed.observe(LLMCalled(1, "read (sync)", MODEL, prompt, written, seconds), cached_prompt_tokens=cached)
    s = speed.speed(MODEL)
    assert s.read_rate == pytest.approx(100, rel=0.05) and s.write_rate == pytest.approx(25, rel=0.1)


def test_the_estimate_reads_only_what_the_server_has_not_read() -> None:
    speed = ModelSpeed()
    cold = LLMAsking(2, "read (sync)", MODEL, 1500, 384)
    warm = LLMAsking(2, "read (sync)", MODEL, 1500, 384, cached_tokens=1300)
    assert speed.cached_tokens(warm) == 1300 and speed.cached_tokens(cold) == 0
    written = TYPICAL_WRITE["read"] / DEFAULT_WRITE_RATE
    assert speed.estimate(cold) == pytest.approx(1500 / DEFAULT_READ_RATE + written)
    assert speed.estimate(warm) == pytest.approx(200 / DEFAULT_READ_RATE + written)
    progress = RunProgress(speed, clock=lambda: 0.0)
    progress.update(start(max_iterations=4))
    progress.update(warm)
    assert progress.line() == (f"gist read · the model is reading 1,500 tokens (1,300 already read; "
                               f"{seconds_text(speed.estimate(warm))}, assumed speed)").replace("gist", "sync")
    progress.update(cold)
    assert "already read" not in progress.line()


def test_a_call_the_model_is_not_asked_shows_who_answers_not_an_estimate() -> None:
    progress = RunProgress(ModelSpeed(), clock=lambda: 0.0)
    progress.update(start(max_iterations=4))
    progress.update(IterationStarted(1, "q"))
    progress.update(LLMAsking(1, "read (sync)", MODEL, 1500, 384, answered_by="record"))
    assert progress.line() == "Iteration 1 of up to 4 · sync read · answered from the recordings"
    assert progress.estimate == 0.0
    progress.update(LLMWaiting(1, "read (sync)", 0))
    assert progress.line() == "Iteration 1 of up to 4 · sync read"
    progress.update(LLMAsking(1, "reason", MODEL, 300, 160, answered_by="memo"))
    assert progress.line().endswith("reasoner · answered by the memo (asked before in this process)")


def test_a_rate_the_data_would_make_negative_keeps_the_default() -> None:
    s = fit([(1000, 10, 0.001)] * 5 + [(10, 100, 60.0)] * 5, ModelSpeed().default)
    assert s.read_rate > 0 and s.write_rate > 0


def test_seconds_text() -> None:
    assert [seconds_text(x) for x in (0.2, 14.6, 75, 130)] == ["≈ 1 s", "≈ 15 s", "≈ 75 s", "≈ 2 min"]


def start(method: str = "gear", **settings) -> RunStarted:
    s = public_settings(Settings().with_(expand=method, **settings))
    return RunStarted(0, "q?", method, "hybrid", s)


def test_the_line_names_the_iteration_the_step_and_what_it_waits_for() -> None:
    progress = RunProgress(ModelSpeed(), clock=lambda: 0.0)
    progress.update(start(max_iterations=4))
    assert progress.line() == "base retrieval"
    progress.update(IterationStarted(2, "q2"))
    assert progress.line() == "Iteration 2 of up to 4 · base retrieval"
    progress.update(TriplesLinked(2, []))
    assert progress.line() == "Iteration 2 of up to 4 · graph expansion (beam search)"
    progress.update(LLMAsking(2, "read (gist)", MODEL, 1300, 384))
    seconds = 1300 / DEFAULT_READ_RATE + TYPICAL_WRITE["read"] / DEFAULT_WRITE_RATE
    assert progress.line() == (f"Iteration 2 of up to 4 · gist read · the model is reading 1,300 tokens "
                               f"({seconds_text(seconds)}, assumed speed)")
    assert progress.estimate == pytest.approx(seconds)
    progress.update(LLMWaiting(2, "read (gist)", 2))
    assert progress.line() == "Iteration 2 of up to 4 · gist read · waiting for the model: 2 ahead"
    progress.update(LLMText(2, "read (gist)", "x" * 1234))
    assert progress.line() == "Iteration 2 of up to 4 · gist read · the model is writing (1,234 characters so far)"
    progress.update(GistUpdated(2, [], []))
    assert progress.line() == "Iteration 2 of up to 4 · reasoner"
    progress.update(FinalRanking(2, []))
    assert progress.line().endswith("QA step")
    progress.update(RunFinished(2, 2, 1.0, {}))
    assert progress.finished


def test_a_learned_speed_is_not_called_assumed() -> None:
    speed = ModelSpeed()
    speed.observe(live(1000, 20))
    progress = RunProgress(speed)
    progress.update(start("ircot", ircot_max_steps=3))
    progress.update(IterationStarted(1, "q"))
    progress.update(LLMAsking(1, "think", MODEL, 1200, 96))
    line = progress.line()
    assert line.startswith("Iteration 1 of up to 3 · IRCoT thought · the model is reading 1,200 tokens (≈")
    assert "assumed" not in line


def test_single_step_methods_show_no_iteration_and_ppr_says_its_graph() -> None:
    progress = RunProgress(ModelSpeed())
    progress.update(start("ppr", retriever="dense"))
    assert progress.line() == "PPR fact matching"
    progress.update(IterationStarted(1, "q"))
    assert progress.line() == "base retrieval"
    first = RunProgress(ModelSpeed(), builds_ppr_graph=True)
    first.update(start("ppr", retriever="dense"))
    assert first.line().startswith("building PPR's entity graph (first use")
    first.update(IterationStarted(1, "q"))  # PPR's runner starts its iteration, then builds the graph
    assert first.line().startswith("building PPR's entity graph (first use")
    first.update(BaseRetrieved(1, "q", 5, []))
    assert first.line() == "Personalized PageRank"


def test_expected_run_time_only_for_runs_that_ask_an_llm() -> None:
    speed = ModelSpeed()
    gear = methods.get("gear")
    assert speed.run_seconds(MODEL, gear, Settings()) == pytest.approx(
        gear.typical_tokens[0] / DEFAULT_READ_RATE + gear.typical_tokens[1] / DEFAULT_WRITE_RATE)
    assert speed.run_seconds(MODEL, methods.get("naive"), Settings()) is None
    ppr = methods.get("ppr")
    assert speed.run_seconds(MODEL, ppr, Settings()) is None
    assert speed.run_seconds(MODEL, ppr, Settings(ppr_filter=True)) is not None
    for method in methods.METHODS:  # every method that may ask an LLM says what a question costs
        if method.needs_llm or method.llm_setting:
            assert method.typical_tokens[0] > 0, method.name


def test_each_llm_call_is_announced_before_the_model_starts_and_never_stored(tiny_index: Path, make_encoder,
                                                                               tmp_path: Path) -> None:
    engine = Engine.open(tiny_index, Settings(), encoder=make_encoder())
    settings = Settings().with_(retriever="bm25", expand="gear", llm="replay", llm_cache_dir=tmp_path)
    order: list[str] = []

    class Announced(ScriptedLLM):
        model = "scripted, with a prompt cache"

        def complete(self, messages, **kwargs):
            order.append("model")
            return replace(super().complete(messages, **kwargs), cached_prompt_tokens=3)  # as llama-server reports

    engine.set_llm(settings, CachedLLM(Announced(), tmp_path, "record"))
    trace = Trace()
    asked: list[LLMAsking] = []

    def listen(event) -> None:
        if isinstance(event, LLMAsking):
            asked.append(event)
            order.append("asked")

    trace.subscribe(listen)
    engine.retrieve("Which sea is the island with Mount Etna the largest island in?", k=4, settings=settings,
                    trace=trace)
    calls = trace.of(LLMCalled)
    # every call is announced, and the model starts only right after an announcement; a request asked again in the
    # same recording is served from what it recorded (gear.llm.replay.CachedLLM), so the model is not started for it
    assert calls and order.count("asked") == len(calls)
    assert order.count("model") == sum(c.source == "model" for c in calls) > 0
    assert all(order[i - 1] == "asked" for i, step in enumerate(order) if step == "model")
    assert [a.step for a in asked] == [c.step for c in calls]
    for a, c in zip(asked, calls, strict=True):  # ≈4 characters a token: within a factor of two of the count
        assert a.model == Announced.model and a.max_tokens > 0
        assert 0.5 < a.prompt_tokens / max(1, c.prompt_tokens) < 2 or c.prompt_tokens == 0
    # the first call cannot know of a cache; a later read starts as the reads before it did, which the server holds
    assert asked[0].cached_tokens == 0
    reads = [a for a in asked if a.step.startswith("read") and a.answered_by != "record"]  # those the model reads
    assert len(reads) > 1 and all(0 < a.cached_tokens <= a.prompt_tokens for a in reads[1:])
    assert all(a.cached_tokens == 0 for a in asked if a.answered_by == "record")  # served from the recording
    assert "llm_asking" not in trace.to_json()


def test_each_call_is_announced_with_who_will_answer_it(tiny_index: Path, make_encoder, tmp_path: Path) -> None:
    engine = Engine.open(tiny_index, Settings(), encoder=make_encoder())
    settings = Settings().with_(retriever="bm25", expand="gear", llm="replay", llm_cache_dir=tmp_path)
    engine.set_llm(settings, MemoLLM(CachedLLM(ScriptedLLM(), tmp_path / "user", "auto", read_dirs=[tmp_path / "r"])))
    question = "Which sea is the island with Mount Etna the largest island in?"
    for answered in ("model", "memo"):  # live, then the same run again: every answer from the memo
        trace = Trace()
        asked: list[LLMAsking] = []
        trace.subscribe(lambda e, into=asked: into.append(e) if isinstance(e, LLMAsking) else None)
        engine.retrieve(question, k=4, settings=settings, trace=trace)
        calls = trace.of(LLMCalled)
        assert calls and [a.answered_by or "model" for a in asked] == [c.source for c in calls]
        assert {c.source for c in calls} >= {answered}
    assert {c.source for c in calls} == {"memo"}


def test_a_run_teaches_its_engines_speed_and_nothing_else(tiny_index: Path, make_encoder, tmp_path: Path) -> None:
    """The speed is the engine's (Engine.speed, handed to each run's context), not a global the run writes: an engine
    given its own learns from its runs' live calls, and the process's shared one (MODEL_SPEED) stays as it was."""
    own = ModelSpeed()
    engine = Engine.open(tiny_index, Settings(), encoder=make_encoder(), speed=own)
    settings = Settings().with_(retriever="bm25", expand="gear", llm="replay", llm_cache_dir=tmp_path)

    class Timed(ScriptedLLM):
        model = "scripted, timed"

        def complete(self, messages, **kwargs):
            return replace(super().complete(messages, **kwargs), seconds=0.5, source="model")

    engine.set_llm(settings, Timed())
    shared_before = MODEL_SPEED.speed(Timed.model)
    run = engine.retrieve("Which sea is the island with Mount Etna the largest island in?", k=4, settings=settings)
    assert own.speed(Timed.model).calls == len(run.trace.of(LLMCalled)) > 0
    assert MODEL_SPEED.speed(Timed.model) == shared_before and shared_before.calls == 0
    assert Engine.open(tiny_index, encoder=make_encoder()).speed is MODEL_SPEED  # by default the process's shared one


def test_the_apps_live_times_come_from_the_engines_own_speeds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ask's example list ("live · ≈ 2 min"), its note and the status line of a live run read the speeds of the
    engine that runs the question, not the process's shared table (an engine may be given its own)."""
    import studio.core.example_marks as question_marks
    from gear.config import Settings
    from studio.views.trace import StatusLine

    own = ModelSpeed()
    for prompt, written in ((1000, 100), (2000, 50), (500, 200), (1500, 150)):  # a slow model: 10 tok/s read, 1 written
        own.observe(live(prompt, written, read_rate=10.0, write_rate=1.0))

    class Llm:
        model = MODEL

    class FakeEngine:
        speed = own

        def llm(self, settings: object) -> Llm:
            return Llm()

    monkeypatch.setattr(question_marks, "engine_ready", lambda index: True)
    monkeypatch.setattr(question_marks, "engine_for", lambda index: FakeEngine())
    monkeypatch.setattr(question_marks, "_recorded", lambda *a: {})
    settings = Settings(_env_file=None).with_(expand="gear", llm="local")
    found = question_marks.example_marks(Path("/nowhere"), ("q?",), settings)
    shared = MODEL_SPEED.run_seconds(MODEL, methods.get("gear"), settings)
    assert found.speed is own and found.marks["q?"] != f"live · {seconds_text(shared or 0)}"
    assert found.marks["q?"] == f"live · {seconds_text(own.run_seconds(MODEL, methods.get('gear'), settings) or 0)}"
    assert "measured on 4 live calls" in question_marks.marks_note(found.marks, MODEL, found.speed)
    assert StatusLine(object(), speed=own).progress.speed is own
