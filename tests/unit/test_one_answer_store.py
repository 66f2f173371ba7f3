"""One question, one run: asked on the Ask page and with `gear ask` on the same index and settings, the second
replays the first's recorded answers from the one answer store in the data folder, so the two traces are the same
run (events equal apart from timings and answer origins). Asking afresh (`gear ask --live`, "Ask the model again")
is a choice, and the fresh run says where it differs from the recorded one.

The live model here is a scripted one that drifts as llama.cpp can (#7052): asked a QA prompt a second
time, it writes another answer."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from gear.cli import app as cli
from gear.data.corpus import Document
from gear.events import Answered, LLMCalled
from gear.index import build_index
from gear.llm import LLMResult
from gear.trace import Trace
from gear.trace.difference import difference, same_run
from tests.conftest import TINY_DOCS, TINY_TRIPLES, FakeEncoder
from tests.scripted_llm import ScriptedLLM, prompt_kind

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Which sea is the island with Mount Etna the largest island in?"


class DriftingLLM:
    """The scripted model, except that a QA prompt asked again gets another answer (as a prompt read partly from
    llama.cpp's cache may); counts what it was asked."""

    model = "drifting"

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()
        self.inner = ScriptedLLM()

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        prompt = messages[-1]["content"]
        self.asked[prompt] += 1
        if prompt_kind(prompt) == "qa" and self.asked[prompt] > 1:
            text = "Answer: Ionian Sea"
            if on_text is not None:
                on_text(text)
            return LLMResult(text, len(prompt) // 4, 3, 0.01, self.model)
        answer = self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens, on_text=on_text)
        return replace(answer, model=self.model)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """A data folder with the tiny index, the drifting model as the live one, and no answer store named: the
    app and the CLI both use the data folder's."""
    from studio.core import resources

    data = tmp_path / "data"
    index = data / "indexes" / "tiny"
    build_index([Document(t, x) for t, x in TINY_DOCS], [list(t) for t in TINY_TRIPLES], index, FakeEncoder(),
                source={"corpus": "tiny"})
    model = DriftingLLM()
    monkeypatch.setattr("gear.llm.embedded.shared_embedded_llm", lambda **_: model)
    monkeypatch.setitem(resources.ENCODER_FACTORIES, "fake-hash-64", FakeEncoder)
    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: FakeEncoder(name))
    monkeypatch.setenv("GEAR_STUDIO_DATA", str(data))
    monkeypatch.setenv("GEAR_STUDIO_BUILD_DEMOS", "0")
    monkeypatch.setenv("GEAR_LLM", "auto")
    for name in ("GEAR_LLM_CACHE_DIR", "GEAR_LLM_BASE_URL", "OPENAI_API_KEY", "GEAR_PROMPTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GEAR_LLM_BUNDLED_CACHE", str(tmp_path / "no_bundled_answers"))
    return {"data": data, "index": index, "model": model, "tmp": tmp_path}


def ask_in_app(world: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["index_selected"] = "tiny"
    at.session_state["ask_ready"] = True
    at.run()
    at.text_input(key="question").input(QUESTION).run()
    at.button(key="ask").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def first_event_apart(a: Trace, b: Trace) -> str:
    """The first event where two runs part, for a failing assertion's message."""
    from gear.trace.difference import comparable

    for n, (x, y) in enumerate(zip(a.events, b.events, strict=False)):
        if comparable(x) != comparable(y):
            keys = {k for k in comparable(x) if comparable(x).get(k) != comparable(y).get(k)}
            return f"event {n} ({x.kind}) differs in {sorted(keys)}: {comparable(x)} vs {comparable(y)}"[:3000]
    return f"{len(a.events)} events against {len(b.events)}"


def run_gear(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_the_app_and_the_cli_give_one_run_from_one_answer_store(world: dict) -> None:
    at = ask_in_app(world)
    in_app: Trace = at.session_state["trace"]
    asked = sum(world["model"].asked.values())
    assert asked > 0 and in_app.first(Answered).answer == "Mediterranean Sea"
    store = world["data"] / "llm_cache"
    assert len(list(store.glob("*.json"))) == asked  # recorded into the data folder's answer store

    out = world["tmp"] / "cli.json"
    run_gear("ask", str(world["index"]), QUESTION, "--trace", str(out), "--no-stream")
    in_cli = Trace.load(out)
    assert sum(world["model"].asked.values()) == asked  # the CLI asked the model nothing: it replayed
    assert {c.source for c in in_cli.of(LLMCalled)} <= {"record", "memo"}
    assert same_run(in_app, in_cli), first_event_apart(in_app, in_cli)
    assert difference(in_app, in_cli).same


def test_asking_afresh_says_where_the_run_differs(world: dict) -> None:
    ask_in_app(world)
    output = run_gear("ask", str(world["index"]), QUESTION, "--live", "--no-stream")
    assert "answer: Mediterranean Sea (recorded) → Ionian Sea (asked again)" in output
    assert "the same prompt, other text" in output  # the QA call: the model wrote differently
    assert "final ranking: the same" in output
    # the recording stays the run that replays: a plain ask still gives the recorded answer
    again = world["tmp"] / "again.json"
    run_gear("ask", str(world["index"]), QUESTION, "--trace", str(again), "--no-stream")
    assert Trace.load(again).first(Answered).answer == "Mediterranean Sea"


def test_ask_the_model_again_in_the_app(world: dict) -> None:
    at = ask_in_app(world)
    before = sum(world["model"].asked.values())
    at.button(key="ask_again_button").click().run()
    assert not at.exception, at.exception
    assert sum(world["model"].asked.values()) > before  # the model was asked
    note = " ".join(str(w.value) for w in at.warning)
    assert "Asked the model again" in note and "Ionian Sea" in note and "Mediterranean Sea" in note
    assert at.session_state["trace"].first(Answered).answer == "Ionian Sea"


def test_a_recording_in_the_old_user_cache_is_still_read(world: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Answers `gear ask` recorded in ~/.cache/gear/llm before the store was one are served, never rewritten."""
    ask_in_app(world)
    store = world["data"] / "llm_cache"
    old = world["tmp"] / "home" / ".cache" / "gear" / "llm"
    old.mkdir(parents=True)
    for entry in store.glob("*.json"):
        entry.rename(old / entry.name)
    monkeypatch.setenv("HOME", str(world["tmp"] / "home"))
    asked = sum(world["model"].asked.values())
    run_gear("ask", str(world["index"]), QUESTION, "--no-stream")
    assert sum(world["model"].asked.values()) == asked
    assert not list(store.glob("*.json"))  # nothing copied or re-recorded
    assert json.loads(next(old.glob("*.json")).read_text())["model"] == "drifting"
