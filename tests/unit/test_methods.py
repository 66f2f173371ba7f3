"""The method registry (gear.methods): every registered method runs through the engine on the tiny index, its record
tells the truth (LLM use, answering, iterations, the settings it reads), its label shows wherever labels show, and no
other place in the code spells out the method list."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from streamlit.testing.v1 import AppTest

from gear import methods, viz
from gear.agent import steps
from gear.agent.engine import Engine
from gear.agent.methods import RUNNERS, runner
from gear.cli.app import MethodOpt
from gear.config import Settings
from gear.diagnosis.registry import FAMILIES
from gear.events import Answered, FinalRanking, IterationStarted, LLMCalled, RunFinished, RunStarted, StageTimed
from gear.trace import Trace
from tests.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Which sea is the island with Mount Etna the largest island in?"
GOLD = [2, 3]  # Mount Etna, Sicily
PEER_KNOBS = {"ircot_retriever": "ppr", "ppr_filter": True}  # variants that reach every knob a method may read


@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(), encoder=make_encoder())


def run(engine: Engine, settings: Settings, trace: Trace | None = None) -> Any:
    engine.set_llm(settings, ScriptedLLM())
    return engine.retrieve(QUESTION, k=4, settings=settings, gold=GOLD, answers=["Mediterranean Sea"], trace=trace)


def test_names_are_unique_and_valid_settings() -> None:
    assert len(methods.NAMES) == len(set(methods.NAMES)) == len(methods.METHODS)
    for m in methods.METHODS:
        assert Settings(method=m.name).method == m.name == Settings(expand=m.name).method
        assert set(m.settings) <= set(Settings.model_fields), m.name
        assert not m.llm_setting or m.llm_setting in Settings.model_fields


def test_an_unknown_method_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown method 'pagerank'; choose one of none, naive, sync, gear, ppr"):
        Settings(expand="pagerank")
    with pytest.raises(methods.UnknownMethod):
        methods.get("pagerank")
    assert methods.find("pagerank") is None


@pytest.mark.parametrize("method", methods.METHODS, ids=lambda m: m.name)
def test_every_runner_is_a_function_of_the_agent(method: methods.Method) -> None:
    found = runner(method)
    assert callable(found) and found.__module__ == f"gear.agent.methods.{method.runner}"


def test_every_runner_module_serves_a_method_and_a_wrong_name_says_which_exist() -> None:
    assert set(RUNNERS) == {m.runner for m in methods.METHODS}
    assert set(FAMILIES) == {m.name for m in methods.METHODS}
    with pytest.raises(LookupError, match=r"no runner module 'pagerank' in gear\.agent\.methods"):
        runner(dataclasses.replace(methods.get("ppr"), runner="pagerank"))


@pytest.mark.parametrize("method", methods.METHODS, ids=lambda m: m.name)
def test_every_method_runs_through_the_engine_as_its_record_says(engine: Engine, method: methods.Method) -> None:
    for changes in ({}, PEER_KNOBS):
        settings = Settings(expand=method.name, retriever="hybrid").with_(**changes)
        result = run(engine, settings)
        trace = result.trace
        start, finish = trace.first(RunStarted), trace.first(RunFinished)
        assert start is not None and start.method == method.name
        assert trace.events[0] is start and trace.events[-1] is finish
        assert finish is not None and set(finish.recall) == {"5", "10", "15"}
        ranking = trace.first(FinalRanking)
        assert ranking is not None and [p.id for p in ranking.passages] == result.ids != []
        assert bool(trace.of(LLMCalled)) == method.uses_llm(settings), changes
        assert (trace.first(Answered) is not None) == method.answers == (result.answer is not None)
        assert set(result.timings_ms) == {e.stage for e in trace.of(StageTimed)} | {"total"}  # each timed stage
        assert ("qa" in result.timings_ms) == method.answers
        if not method.multi_step:
            assert trace.iterations() == [1] and finish.iterations == 1
        assert finish.iterations == max(trace.iterations())


def test_a_method_that_declares_no_llm_is_given_none(engine: Engine) -> None:
    """PPR without its filter runs with no LLM at all: a configured one that fails on any call is never reached."""

    class Refusing:
        model = "refusing"

        def complete(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("PPR without the filter asked the LLM")

    settings = Settings(expand="ppr")
    engine.set_llm(settings, Refusing())  # type: ignore[arg-type]
    assert not methods.get("ppr").uses_llm(settings)
    assert engine.retrieve(QUESTION, k=4, settings=settings).ids


class RecordingSettings(Settings):
    """Settings that note every field read (the LLM's own configuration aside)."""

    reads: ClassVar[set[str]] = set()

    def __getattribute__(self, name: str) -> Any:
        if name in type(self).model_fields and not name.startswith("llm"):
            RecordingSettings.reads.add(name)
        return super().__getattribute__(name)


@pytest.mark.parametrize("method", methods.METHODS, ids=lambda m: m.name)
def test_a_method_reads_exactly_the_settings_it_declares(engine: Engine, method: methods.Method) -> None:
    """What the runner reads (and the QA step after it, for a method that answers, with the engine's `answer`
    switch) is what the record declares, over the variants that reach every knob; `retriever` is recorded for every
    run."""
    read: set[str] = set()
    for changes in ({}, PEER_KNOBS):
        settings = RecordingSettings.model_validate(Settings(expand=method.name).with_(**changes).model_dump())
        ctx = engine.context(settings, Trace(), GOLD, ScriptedLLM())  # type: ignore[arg-type]
        RecordingSettings.reads.clear()
        outcome = runner(method)(ctx, QUESTION, 4)
        if method.answers:
            steps.answer(ctx, QUESTION, outcome.ranked, ["Mediterranean Sea"], outcome.iterations)
            RecordingSettings.reads.add("answer")
        read |= RecordingSettings.reads
    assert read | {"retriever"} == set(method.settings) | {"retriever"}


def draw_trace(trace: object) -> None:  # run as a script by AppTest: no names from this module
    from studio.views.trace import TraceView

    TraceView().replay(trace)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", methods.METHODS, ids=lambda m: m.name)
def test_a_method_is_named_by_its_label_wherever_labels_show(engine: Engine, method: methods.Method) -> None:
    from studio.core import sidebar

    result = run(engine, Settings(expand=method.name))
    at = AppTest.from_function(draw_trace, args=(result.trace,), default_timeout=30).run()
    assert not at.exception
    assert any(f"method **{method.label}**" in c.value for c in at.caption)
    assert viz.report_label({"method": method.name, "retriever": "hybrid"}) == ("Hybrid" + method.report_name).strip()
    assert sidebar.METHOD_CHOICES[method.name] == method.choice
    assert {label for label, (_, name) in sidebar.PRESETS.items() if name == method.name} == {
        label for label, _ in method.presets} != set()
    assert method.name in MethodOpt.__metadata__[0].help


def test_a_trace_of_an_unregistered_method_still_draws_with_its_name_escaped() -> None:
    trace = Trace([RunStarted(0, "q", "<b>mine</b>", "bm25", {}), IterationStarted(1, "q")])
    at = AppTest.from_function(draw_trace, args=(trace,), default_timeout=30).run()
    assert not at.exception
    assert any("method **&#60;b&#62;mine&#60;/b&#62;**" in c.value for c in at.caption)


def _house() -> Any:
    spec = importlib.util.spec_from_file_location("house", ROOT / "bench" / "house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("house", module)
    spec.loader.exec_module(module)
    return module


def test_the_method_list_is_spelled_once() -> None:
    """bench/house.py finds every literal naming two methods or more, and every if-chain over method names, in
    gear/, studio/, app_pages/ and app.py: only the registry may."""
    lists, _ = _house().method_list_places()
    assert lists == ["gear/methods.py:METHODS (gear, ircot, naive, none, ppr, sync)"]


def test_the_run_is_finished_in_one_place() -> None:
    assert _house().run_finish_blocks() == ["gear/agent/engine.py:retrieve"]
