"""A demo index being built shows its progress as soon as it is chosen, in place of another
index's result, and a question asked meanwhile waits in line, says so, and runs when the build ends."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gear.config import Settings
from gear.events import RunStarted
from studio.core import demos, resources
from tests.conftest import FakeEncoder
from tests.unit.test_app import DOCS, QUESTION, TRIPLES, shown_text, start, studio  # noqa: F401


@pytest.fixture
def held_demo(studio: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> threading.Event:  # noqa: F811
    """A "musique" demo made of the tiny corpus, not built yet, whose build waits until the returned event is set
    (the embedder is the fake one; the build runs on the app's background builder, as a real one does)."""
    import gear.index

    files = tmp_path / "tiny_demo"
    files.mkdir()
    (files / "corpus.json").write_text(json.dumps([{"title": t, "text": x} for t, x in DOCS]), encoding="utf-8")
    (files / "openie.json").write_text(json.dumps({"docs": [
        {"title": t, "text": x, "extracted_triples": [list(tr) for tr in trs]}
        for (t, x), trs in zip(DOCS, TRIPLES, strict=True)]}), encoding="utf-8")
    (files / "qa.json").write_text((studio["index"] / "qa.json").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setitem(demos.DEMOS, "musique", demos.Demo("musique", "tiny", files / "corpus.json",
                                                         files / "openie.json", files / "qa.json"))
    release = threading.Event()
    build = gear.index.build_index

    def held(*args, **kwargs):
        assert release.wait(60), "the test never released the build"
        return build(*args, **kwargs)

    monkeypatch.setattr(gear.index, "build_index", held)
    monkeypatch.setitem(resources.ENCODER_FACTORIES, Settings().embedder, FakeEncoder)
    resources._encoder.clear()
    monkeypatch.setattr(resources, "_builds", {})
    monkeypatch.setattr(resources, "_queue", [])
    monkeypatch.setattr(resources, "_builder", [])
    # its own build lock: a demo build another test left running (a real one takes minutes) must not hold this one up
    monkeypatch.setattr(demos, "_build_lock", threading.Lock())
    yield release
    with resources._builds_lock:  # nothing more starts; what is under way ends while this test's demos, data
        resources._queue.clear()  # folder and encoder are still in force (after them a queued "musique" is the
    release.set()                 # real one, built into the checkout's data/ with the real embedder)
    for thread in resources._builder:
        thread.join(120)


def built(name: str) -> None:
    deadline = time.time() + 60
    while not demos.is_built(name):
        assert time.time() < deadline, "the demo build never ended"
        assert not (resources._builds.get(name) and resources._builds[name].error), resources._builds[name].error
        time.sleep(0.05)


def choose(at: AppTest, label: str) -> AppTest:
    at.sidebar.selectbox[0].set_value(label).run()
    assert at.sidebar.selectbox[0].value == label
    return at


def test_a_question_asked_while_the_index_builds_waits_and_runs_when_it_is_built(
        studio: dict, held_demo: threading.Event) -> None:  # noqa: F811
    at = start(studio)
    at.selectbox(key="example").set_value(QUESTION).run()
    at.button(key="ask").click().run()  # a run on the tiny index: its result is on screen
    assert at.session_state["trace"].question == QUESTION
    at = choose(at, "musique (demo)")
    assert not at.exception
    # automatic builds are off here (GEAR_STUDIO_BUILD_DEMOS=0): the page says the index is not built, and offers to
    assert "not built yet" in shown_text(at)
    # the tiny index's result gives way: it is not a result of the index chosen
    assert "Final ranking" not in shown_text(at)
    at.selectbox(key="method").set_value("naive").run()  # a method without an LLM: the question was never recorded
    at.text_input(key="question").input("Where does the Seine flow?").run()
    at.button(key="ask").click().run()  # asking starts the build, and the question waits for it
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = shown_text(at)
    assert "Your question waits in line" in text and "Where does the Seine flow?" in text
    assert "Building the musique demo index" in text
    assert at.session_state["trace"].question == QUESTION  # nothing ran yet
    at.run()  # any rerun while it builds (another click, the progress's poll) keeps the question waiting
    assert "Your question waits in line" in shown_text(at)
    held_demo.set()
    built("musique")
    at.run()  # the progress's poll sees the index built and reruns the page: the waiting question runs
    assert not at.exception and not at.error, [e.value for e in at.error]
    trace = at.session_state["trace"]
    assert trace.question == "Where does the Seine flow?" and trace.first(RunStarted).method == "naive"
    assert "Final ranking" in shown_text(at)
    assert "Your question waits in line" not in shown_text(at)
    at.run()  # and only once
    assert at.session_state["trace"] is trace


def test_choosing_a_demo_that_is_being_built_shows_its_progress_at_once(
        studio: dict, held_demo: threading.Event, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("GEAR_STUDIO_BUILD_DEMOS", "1")
    at = start(studio)
    at = choose(at, "musique (demo)")
    text = shown_text(at)
    assert "Building the musique demo index" in text and "not built yet" not in text
    assert [p.proto.text for p in at.get("progress")]  # the bar says where the build is
    assert resources._builds["musique"].error is None and not demos.is_built("musique")  # queued without an Ask
    assert "Your question waits in line" not in text


def test_a_waiting_question_can_be_taken_out_of_line(studio: dict, held_demo: threading.Event) -> None:  # noqa: F811
    at = choose(start(studio), "musique (demo)")
    at.text_input(key="question").input("Where does the Seine flow?").run()
    at.button(key="ask").click().run()
    assert "Your question waits in line" in shown_text(at)
    at.button(key="ask_drop_waiting").click().run()
    assert "Your question waits in line" not in shown_text(at)
    held_demo.set()
    built("musique")
    at.run()
    assert "trace" not in at.session_state or at.session_state["trace"] is None  # nothing ran


def test_a_demo_built_on_demand_waits_until_it_is_chosen(
        studio: dict, held_demo: threading.Event, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A large demo few will open (HotpotQA's) is not built when the app starts, only when a page opens it."""
    assert not demos.DEMOS["hotpotqa"].at_start  # the real entry
    monkeypatch.setenv("GEAR_STUDIO_BUILD_DEMOS", "1")
    monkeypatch.setitem(demos.DEMOS, "musique", dataclasses.replace(demos.DEMOS["musique"], at_start=False))
    at = start(studio)
    assert "musique" not in resources._builds and "musique" not in resources._queue
    at = choose(at, "musique (demo)")
    assert "Building the musique demo index" in shown_text(at)
    assert resources._builds["musique"].error is None
    held_demo.set()
    built("musique")
    at.run()
    assert not at.exception and "Building the musique demo index" not in shown_text(at)
