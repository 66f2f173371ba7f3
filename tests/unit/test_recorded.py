"""Whether a question replays at once: the run's first LLM request, found without asking any model, looked up where
the configured LLM would look (gear.agent.recorded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.agent.recorded import first_request, replays_at_once
from gear.config import Settings
from gear.events import LLMCalled
from gear.llm import CachedLLM
from gear.llm.replay import cache_key
from gear.trace import Trace
from tests.scripted_llm import ScriptedLLM

QUESTION = "Which sea is the island with Mount Etna the largest island in?"
OTHER = "Who wrote the first published computer program?"


class Recording:
    """ScriptedLLM that remembers every request it was given."""

    model = "scripted"

    def __init__(self) -> None:
        self.inner, self.requests = ScriptedLLM(), []

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None):
        self.requests.append((messages, json_schema, max_tokens))
        return self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens, on_text=on_text)


@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(), encoder=make_encoder())


@pytest.mark.parametrize("method", ["gear", "sync", "ircot"])
def test_the_first_request_is_the_one_the_run_sends(engine: Engine, tmp_path: Path, method: str) -> None:
    settings = Settings().with_(retriever="bm25", expand=method, llm="replay", llm_cache_dir=tmp_path)
    model = Recording()
    engine.set_llm(settings, CachedLLM(model, tmp_path, "record"))
    probe = first_request(engine, QUESTION, settings)
    assert model.requests == []  # nothing was asked to find it
    engine.retrieve(QUESTION, k=settings.agent_k, settings=settings)
    assert probe is not None
    assert (probe.messages, probe.json_schema, probe.max_tokens) == model.requests[0]


def test_recorded_questions_replay_at_once_and_others_run_live(engine: Engine, tmp_path: Path) -> None:
    mine, bundled = tmp_path / "mine", tmp_path / "bundled"
    record = Settings().with_(retriever="bm25", expand="gear", llm="replay", llm_cache_dir=bundled)
    engine.set_llm(record, CachedLLM(ScriptedLLM(), bundled, "record"))
    engine.retrieve(QUESTION, k=10, settings=record)
    # the app's default: the user's cache first, the bundled recordings read but never written
    auto = Settings().with_(retriever="bm25", expand="gear", llm="auto", llm_cache_dir=mine,
                            llm_bundled_cache=bundled)
    engine.set_llm(auto, CachedLLM(ScriptedLLM(), mine, "auto", read_dirs=(bundled,)))
    assert replays_at_once(engine, QUESTION, auto) is True
    assert replays_at_once(engine, OTHER, auto) is False
    assert replays_at_once(engine, QUESTION, auto.with_(max_iterations=1, beam_width=3)) is True  # same first read
    assert replays_at_once(engine, QUESTION, auto.with_(prompts="small")) is False  # another prompt: not recorded
    assert replays_at_once(engine, QUESTION, auto.with_(expand="naive")) is None  # asks no LLM
    # and the claim holds: the recorded question's run asks the live model nothing
    trace = Trace()
    engine.retrieve(QUESTION, k=10, settings=auto, trace=trace)
    assert {c.source for c in trace.of(LLMCalled)} <= {"record", "memo"}
    assert not list(mine.glob("*.json"))


def test_a_cache_entry_is_looked_for_under_the_llms_own_model_name(engine: Engine, tmp_path: Path) -> None:
    settings = Settings().with_(retriever="bm25", expand="sync", llm="replay", llm_cache_dir=tmp_path)
    engine.set_llm(settings, CachedLLM(ScriptedLLM(), tmp_path, "auto"))
    probe = first_request(engine, QUESTION, settings)
    assert probe is not None
    key = cache_key("scripted", probe.messages, probe.json_schema, probe.max_tokens)
    assert replays_at_once(engine, QUESTION, settings) is False
    (tmp_path / f"{key}.json").write_text("{}", encoding="utf-8")
    assert replays_at_once(engine, QUESTION, settings) is True


def test_many_questions_at_once_say_what_each_alone_says(engine: Engine, tmp_path: Path) -> None:
    from gear.agent.recorded import replays_at_once_all

    settings = Settings().with_(retriever="hybrid", expand="gear", llm="replay", llm_cache_dir=tmp_path)
    engine.set_llm(settings, CachedLLM(ScriptedLLM(), tmp_path, "auto"))
    engine.retrieve(QUESTION, k=10, settings=settings)  # records QUESTION's answers
    together = replays_at_once_all(engine, [QUESTION, OTHER], settings)
    assert together == {QUESTION: True, OTHER: False}
    assert together == {q: replays_at_once(engine, q, settings) for q in (QUESTION, OTHER)}
