"""A replayed run keeps its cost: the tokens and seconds its answers took the model when they were recorded, each
request once, whoever answers now (a recording, or this process's memo of an earlier run) — in the trace, the
evaluation report, `gear eval`'s cost line and `gear compare`'s pairing — beside the replay's own seconds."""

from __future__ import annotations

import json
from pathlib import Path

from gear.config import Settings
from gear.data.questions import Question
from gear.eval.pairing import pair_reports
from gear.eval.report import cost_words, evaluate
from gear.eval.report_file import decode_report
from gear.events import LLMCalled, RunFinished, RunStarted
from gear.llm import CachedLLM, LLMResult, MemoLLM
from gear.trace import RunCost, Trace
from tests.scripted_llm import ScriptedLLM
from tests.unit.test_eval_protocol import tiny_engine

QUESTION = "Which sea is the island with Mount Etna the largest island in?"
SECONDS = 7.5  # what each recorded answer took the model


class SlowScripted(ScriptedLLM):
    """The scripted model, each answer costing SECONDS (as a live model's would)."""

    def complete(self, messages, **kwargs) -> LLMResult:  # type: ignore[no-untyped-def]
        result = super().complete(messages, **kwargs)
        return LLMResult(result.text, result.prompt_tokens, result.completion_tokens, SECONDS, result.model)


def call(request: str, source: str, prompt: int = 100, seconds: float = 2.0) -> LLMCalled:
    return LLMCalled(1, "read", "m", prompt, 10, seconds, source != "model", source, request)


def test_each_request_counts_once_whoever_answers_it() -> None:
    trace = Trace([RunStarted(0, "q", "gear", "hybrid", {}), call("a", "model"), call("a", "memo"), call("b", "record"),
                   call("c", "memo", prompt=50, seconds=1.0), RunFinished(1, 1, 250.0)])
    cost = trace.cost()
    # "a" asked of the model and repeated (the memo's repeat was paid once); "b" recorded; "c" from an earlier run
    assert cost == RunCost(250, 30, 5.0, 3, 2, 0.25)
    assert trace.tokens() == (250, 30) and cost.origin() == "recorded + live"
    assert cost.words() == "280 tokens and 5.0 s of model time (2 of 3 answers recorded); this run took 0.25 s"
    # a trace from before calls named their request: the memo's calls were repeats, as it counted them then
    old = Trace([call("", "model"), call("", "memo"), call("", "record")])
    assert old.tokens() == (200, 20) and old.cost().recorded == 1
    assert Trace([RunFinished(1, 1, 40.0)]).cost().words() == "no LLM call; 0.04 s"


def test_a_replayed_run_costs_what_its_recording_cost(tmp_path: Path) -> None:
    engine = tiny_engine()
    settings = Settings().with_(method="gear", retriever="hybrid", max_iterations=2)
    cache = tmp_path / "llm_cache"
    engine.set_llm(settings, MemoLLM(CachedLLM(SlowScripted(), cache, "record")))
    recorded = engine.retrieve(QUESTION, settings=settings).trace.cost()
    assert recorded.requests > 0 and recorded.recorded == 0 and recorded.origin() == "live"
    assert recorded.model_seconds == SECONDS * recorded.requests
    entries = [json.loads(p.read_text()) for p in cache.glob("*.json")]
    assert len(entries) == recorded.requests and {e["seconds"] for e in entries} == {SECONDS}

    engine.set_llm(settings, MemoLLM(CachedLLM.replay_only(cache)))
    first = engine.retrieve(QUESTION, settings=settings).trace  # from the recordings
    again = engine.retrieve(QUESTION, settings=settings).trace  # from the memo of the first replay
    firsts = {c.request: c.source for c in reversed(first.of(LLMCalled))}  # each request's first answer
    assert set(firsts.values()) == {"record"} and {c.source for c in again.of(LLMCalled)} == {"memo"}
    for trace in (first, again):
        cost = trace.cost()
        assert (cost.tokens, cost.model_seconds, cost.requests) == (recorded.tokens, recorded.model_seconds,
                                                                     recorded.requests)
        assert cost.replayed and cost.origin() == "recorded" and cost.seconds is not None
        assert cost.words().startswith(f"{recorded.tokens:,} tokens and {SECONDS * recorded.requests:.0f} s of "
                                       "model time when recorded; this replay took ")

    # an evaluation of the replayed run (the memo answers every call now): its report keeps the recorded cost
    question = Question("q1", QUESTION, ("Mediterranean Sea",), (("Mount Etna", None), ("Sicily", None)))
    report = evaluate(engine, [question], settings).to_dict()
    row = report["per_question"][0]
    assert row["prompt_tokens"] + row["completion_tokens"] == recorded.tokens
    assert row["model_seconds"] == recorded.model_seconds and row["recorded_calls"] == recorded.requests
    assert report["recorded_questions"] == 1 and report["model_seconds_per_question"] == recorded.model_seconds
    words = cost_words(report)
    assert words.startswith(f"{recorded.tokens:,} tokens, {recorded.model_seconds:.0f} s recorded · replay ")
    # and so does the report read back from its file, as Evaluate and gear compare read it (every field checked)
    assert cost_words(decode_report(json.loads(json.dumps(report)), "report.json")) == words
    # gear compare and the Evaluate page's pairing say it beside the replay's own seconds
    pairing = pair_reports(report, report, 5)
    assert pairing.questions[0].time_words("a").endswith(f" (recorded {recorded.model_seconds:.0f})")
    assert pairing.questions[0].tokens_a == recorded.tokens


def test_a_report_of_runs_without_an_llm_says_no_cost() -> None:
    engine = tiny_engine()
    question = Question("q1", QUESTION, ("Mediterranean Sea",), (("Mount Etna", None),))
    report = evaluate(engine, [question], Settings().with_(method="naive", retriever="hybrid")).to_dict()
    assert cost_words(report) == "" and report["per_question"][0]["model_seconds"] == 0.0
    # a report made before reports kept the model's seconds: its tokens and its own time
    old = {"seconds_per_question": {"mean": 81.2, "p50": 80.0}, "tokens_per_question": 6587.0}
    assert cost_words(old) == "6,587 tokens, 81 s"


def test_a_question_run_once_per_cut_off_pays_each_request_once(tmp_path: Path) -> None:
    """The paper's protocol runs SyncGE once per cut-off; on the tiny index the k = 10 and k = 15 runs read the same 8
    passages, so the second asks nothing new: the question costs what the model answered, once per request (as the
    recorded reports counted it)."""
    engine = tiny_engine()
    settings = Settings().with_(method="sync", retriever="hybrid")
    cache = tmp_path / "llm_cache"
    engine.set_llm(settings, MemoLLM(CachedLLM(SlowScripted(), cache, "record")))
    question = Question("q1", QUESTION, ("Mediterranean Sea",), (("Mount Etna", None), ("Sicily", None)))
    row = evaluate(engine, [question], settings, (5, 10, 15), protocol="paper").to_dict()["per_question"][0]
    entries = [json.loads(p.read_text()) for p in cache.glob("*.json")]  # each request the model answered, once
    assert row["llm_calls"] > len(entries)  # the runs asked some requests again
    assert row["prompt_tokens"] == sum(e["prompt_tokens"] for e in entries)
    assert row["completion_tokens"] == sum(e["completion_tokens"] for e in entries)
    assert row["model_seconds"] == SECONDS * len(entries) and row["recorded_calls"] == 0
