"""Many people on one app (AppTest, the tiny index of test_app.py): a session waiting for the model sees its place
and a Cancel button; Cancel stops the run at once, while it waits or while the model writes, gives its place in the
queue back and keeps the steps so far; sessions never see each other's question or trace; saved files never collide.

A click during a run reaches the running script the two ways a Streamlit server sends it, from another thread while
the script runs: with runner.fastReruns on (the default) AppSession asks the running ScriptRunner to stop and starts a
new run with the click (here: request_stop, then the click as AppTest's next run); with it off, the running
ScriptRunner is asked to rerun with the widgets' states and the button's trigger. Either way the script ends at its
next drawing. The page's deltas so far are read from the test's script runner."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.runtime.scriptrunner import RerunData, get_script_run_ctx
from streamlit.testing.v1 import AppTest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.events import BaseRetrieved, LLMCalled, RunFinished, RunStarted
from gear.llm import LLMResult
from gear.llm.queue import ModelQueue
from gear.trace import Trace
from tests.conftest import FakeEncoder
from tests.scripted_llm import QueuedLLM, ScriptedLLM, another_call, passage_title, wait_until
from tests.unit.test_app import DOCS, QUESTION, shown_text, start, statuses, studio  # noqa: F401 - studio is a fixture

WAITING = "waiting for the model: 1 ahead"
CANCELLED = "Cancelled — the steps so far are shown below."


class Session:
    """One app session with a live model behind a queue: the script's context is taken when its run first asks the
    model, so another thread can read what the page drew so far and click its buttons mid-run."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, queue: ModelQueue, **kwargs: Any) -> None:
        self.ctx: Any = None
        self.llm = QueuedLLM(ScriptedLLM(), queue, before_turn=self._take_context, **kwargs)
        monkeypatch.setattr(Engine, "llm", lambda engine, settings=None: self.llm)

    def _take_context(self) -> None:
        self.ctx = self.ctx or get_script_run_ctx()

    def drawn(self) -> str:
        """What the page has sent to the browser in this run so far (the test's LocalScriptRunner keeps it)."""
        if self.ctx is None:
            return ""
        runner = self.ctx._enqueue.__self__
        return " ".join(str(msg) for msg in list(runner.forward_msgs()))

    def widget_id(self, key: str) -> str | None:
        return next((w for w in self.ctx.shared.widget_ids_this_run.snapshot() if w.endswith(f"-{key}")), None)

    def stop(self) -> None:
        """What AppSession does to the running script when its browser sends a click (fastReruns on): the click
        itself then runs as a new run."""
        self.ctx.script_requests.request_stop()

    def click(self, key: str) -> None:
        """What AppSession does with a click while the script runs when fastReruns is off."""
        widget = self.widget_id(key)
        assert widget is not None, f"no {key} button on the page"
        states = WidgetStates()  # a browser sends a button's trigger once: the Ask that started this run is not resent
        states.widgets.extend(w for w in self.ctx.session_state.get_widget_states()
                              if w.id != widget and w.WhichOneof("value") != "trigger_value")
        states.widgets.append(WidgetState(id=widget, trigger_value=True))
        assert self.ctx.script_requests.request_rerun(RerunData(widget_states=states,
                                                                page_script_hash=self.ctx.page_script_hash))


@dataclass
class Meanwhile:
    """`work` run beside the script (as a browser acts while a run goes on); `join` gives what it raised, if
    anything, so a failed check there fails the test."""

    work: Callable[[], None]
    failures: list[BaseException] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.work()
        except BaseException as exc:  # reported by join()
            self.failures.append(exc)

    def join(self) -> list[BaseException]:
        self.thread.join(10)
        return self.failures


def asked(studio: dict) -> AppTest:  # noqa: F811 - the fixture's value
    at = start(studio)
    at.selectbox(key="example").set_value(QUESTION).run()
    return at


def test_a_waiting_session_sees_its_place_and_a_cancel_button_then_runs(studio: dict,  # noqa: F811
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    queue = ModelQueue(1, poll_seconds=0.02)
    session = Session(monkeypatch, queue)
    at = asked(studio)
    seen: dict[str, bool] = {}
    with another_call(queue) as release:
        def watch() -> None:
            try:
                wait_until(lambda: WAITING in session.drawn())
                seen["cancel"] = session.widget_id("ask_cancel") is not None
            finally:
                release.set()

        watcher = Meanwhile(watch)
        at.button(key="ask").click().run()
        assert watcher.join() == []
    assert seen == {"cancel": True}
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.session_state["trace"].first(RunFinished) is not None
    assert "waiting for the model" not in shown_text(at)  # cleared when its turn came
    assert [b.key for b in at.button if b.key == "ask_cancel"] == []  # the run is over: nothing to cancel
    assert queue.snapshot() == (0, 0)


def cancel_in(session: Session, fast_reruns: bool) -> None:
    """Click Cancel on the running page (from another thread) as the server does with or without fastReruns."""
    if fast_reruns:
        session.stop()
    else:
        session.click("ask_cancel")


def after_cancel(at: AppTest, fast_reruns: bool) -> None:
    """With fastReruns the click runs after the stopped run: the Cancel button was on the page when it stopped."""
    if fast_reruns:
        at.button(key="ask_cancel").click().run()


@pytest.mark.parametrize("fast_reruns", [True, False], ids=["fast-reruns", "rerun-request"])
def test_cancel_while_waiting_leaves_the_queue_at_once_and_keeps_the_steps_so_far(
        studio: dict, monkeypatch: pytest.MonkeyPatch, fast_reruns: bool) -> None:  # noqa: F811
    queue = ModelQueue(1, poll_seconds=0.02)
    session = Session(monkeypatch, queue)
    at = asked(studio)
    left: list[tuple[int, int]] = []
    with another_call(queue) as release:
        def cancel() -> None:
            try:
                wait_until(lambda: WAITING in session.drawn())
                cancel_in(session, fast_reruns)
                wait_until(lambda: queue.snapshot() == (1, 0))  # its place is gone while the other call still runs
                left.append(queue.snapshot())
            finally:
                release.set()

        clicker = Meanwhile(cancel)
        at.button(key="ask").click().run()
        assert clicker.join() == []
    assert left == [(1, 0)]
    after_cancel(at, fast_reruns)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [w.value for w in at.warning] == [CANCELLED]
    trace: Trace = at.session_state["trace"]
    assert trace.first(RunStarted) is not None and trace.first(BaseRetrieved) is not None
    assert trace.first(RunFinished) is None and trace.of(LLMCalled) == []
    assert at.session_state["trace_source"] == "live run, cancelled"
    assert statuses(at) == ["Iteration 1"]  # the steps so far are drawn
    assert session.llm.written == 0
    # the session goes on: the next question runs to its end, and the note is gone
    at.button(key="ask").click().run()
    assert at.session_state["trace"].first(RunFinished) is not None
    assert CANCELLED not in [w.value for w in at.warning]
    assert queue.snapshot() == (0, 0)


@pytest.mark.parametrize("fast_reruns", [True, False], ids=["fast-reruns", "rerun-request"])
def test_cancel_while_the_model_writes_stops_the_generation(studio: dict, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
                                                            fast_reruns: bool) -> None:
    queue = ModelQueue(1, poll_seconds=0.02)
    session = Session(monkeypatch, queue, pieces=60, delay=0.05)  # 3 s of writing per call if nobody stops it
    at = asked(studio)

    def cancel() -> None:
        wait_until(lambda: session.llm.written >= 3)
        cancel_in(session, fast_reruns)

    clicker = Meanwhile(cancel)
    at.button(key="ask").click().run()
    assert clicker.join() == []
    assert queue.snapshot() == (0, 0)
    after_cancel(at, fast_reruns)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [w.value for w in at.warning] == [CANCELLED]
    assert 3 <= session.llm.written < 30  # stopped within a few pieces of the click
    assert at.session_state["trace"].of(LLMCalled) == []
    assert queue.snapshot() == (0, 0)


def cancel_while_waiting(at: AppTest, session: Session, *, run: str, cancel: str) -> None:
    """Click `run` while another call holds the model; from another thread, once the page shows its place and the
    `cancel` button, stop the run (as a Cancel click does with fastReruns) and see its place leave the queue."""
    queue = session.llm.queue
    with another_call(queue) as release:
        def stop() -> None:
            try:
                wait_until(lambda: WAITING in session.drawn())
                assert session.widget_id(cancel) is not None
                session.stop()
                wait_until(lambda: queue.snapshot() == (1, 0))  # its place is gone while the other call runs
            finally:
                release.set()

        clicker = Meanwhile(stop)
        at.button(key=run).click().run()
        assert clicker.join() == []


def test_compare_shows_the_wait_and_a_cancel_keeps_the_methods_done(studio: dict,  # noqa: F811
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    queue = ModelQueue(1, poll_seconds=0.02)
    session = Session(monkeypatch, queue)
    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    at.multiselect(key="cmp_methods").set_value(["Hybrid", "GeAR (hybrid)", "BM25"]).run()
    cancel_while_waiting(at, session, run="cmp_run", cancel="cmp_cancel")
    at.button(key="cmp_cancel").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [w.value for w in at.warning] == ["Cancelled — the methods finished so far are shown below."]
    assert list(at.session_state["cmp_results"][2]) == ["Hybrid"]  # GeAR was waiting; BM25 never started
    at.button(key="cmp_run").click().run()  # the page goes on: a full comparison, no note
    assert list(at.session_state["cmp_results"][2]) == ["Hybrid", "GeAR (hybrid)", "BM25"]
    assert [w.value for w in at.warning] == [] and queue.snapshot() == (0, 0)


class ExtractingLLM:
    """Answers an extraction prompt with one triple from the passage's title; counts the passages asked."""

    model = "scripted-extraction"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        title = passage_title(messages)
        self.asked.append(title)
        text = json.dumps({"named_entities": [title, "Sicily"], "triples": [[title, "near", "Sicily"]]})
        return LLMResult(text, prompt_tokens=50, completion_tokens=10, seconds=0.01, model=self.model)


def index_page(studio: dict, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
               **llm: Any) -> tuple[AppTest, Session, ExtractingLLM]:
    """The Index page with a three-passage corpus uploaded and no OpenIE file: Build extracts with a queued model."""
    from gear.extract import bridge
    from studio.core import resources

    monkeypatch.setitem(resources.ENCODER_FACTORIES, Settings().embedder, FakeEncoder)
    session = Session(monkeypatch, ModelQueue(1, poll_seconds=0.02), **llm)
    extracting = session.llm.inner = ExtractingLLM()
    monkeypatch.setattr(bridge, "llm_from_settings", lambda settings: session.llm)
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    at.text_input(key="ix_name").input("extracted").run()
    corpus = json.dumps([{"title": t, "text": x} for t, x in DOCS[:3]]).encode()
    at.file_uploader(key="ix_corpus").set_value([("corpus.json", corpus, "application/json")]).run()
    return at, session, extracting


def cancelled_page(at: AppTest, studio: dict, kept: str) -> None:  # noqa: F811
    at.button(key="ix_cancel").click().run()  # the click runs after the stopped run (fastReruns)
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = (f"Extraction cancelled: {kept} kept in the journal beside the index; build again to go on from there."
            if kept else "Extraction cancelled before its first passage was finished: build again to start it.")
    assert [w.value for w in at.warning if w.value.startswith("Extraction cancelled")] == [said]
    assert not (studio["data"] / "indexes" / "extracted" / "manifest.json").exists()


def built_page(at: AppTest, studio: dict) -> None:  # noqa: F811
    from gear.index import Manifest

    assert not at.exception and not at.error, [e.value for e in at.error]
    assert not [w for w in at.warning if w.value.startswith("Extraction cancelled")]
    assert Manifest.read(studio["data"] / "indexes" / "extracted").n_passages == 3
    assert [b.key for b in at.button if b.key == "ix_cancel"] == []
    assert any(re.match(r"Index extracted is ready \(built in \d+ s\) and selected", s.value) for s in at.success)


def test_index_extraction_waiting_for_the_model_shows_its_place_and_can_cancel(
        studio: dict, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """LLM extraction on the Index page waits its turn like a question: its place and a Cancel button are shown;
    Cancel leaves the queue at once and builds nothing."""
    at, session, extracting = index_page(studio, monkeypatch)
    queue = session.llm.queue
    cancel_while_waiting(at, session, run="ix_build", cancel="ix_cancel")
    cancelled_page(at, studio, kept="")
    assert extracting.asked == [] and queue.snapshot() == (0, 0)
    at.button(key="ix_build").click().run()  # nobody else at the model now
    built_page(at, studio)
    assert len(extracting.asked) == 3 and queue.snapshot() == (0, 0)


def test_index_extraction_cancelled_while_the_model_writes_keeps_the_finished_passages(
        studio: dict, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Cancel while the model writes the second passage stops it there (not after it); the next build asks only the
    passages the journal lacks."""
    at, session, extracting = index_page(studio, monkeypatch, pieces=20, delay=0.05)  # 1 s of writing per passage

    def cancel() -> None:
        wait_until(lambda: session.llm.written >= 23)  # the first passage written, the second begun
        session.stop()

    clicker = Meanwhile(cancel)
    at.button(key="ix_build").click().run()
    assert clicker.join() == []
    assert 23 <= session.llm.written < 40  # stopped within a few pieces of the click
    cancelled_page(at, studio, kept="1 of 3 passages is")
    first = list(extracting.asked)
    assert len(first) == 2 and session.llm.queue.snapshot() == (0, 0)
    at.button(key="ix_build").click().run()
    built_page(at, studio)
    assert extracting.asked[2:] == [first[1], *[t for t, _ in DOCS[:3] if t not in first]]  # not the first again


def test_two_sessions_keep_their_own_question_settings_and_trace(studio: dict) -> None:  # noqa: F811
    a = asked(studio)
    a.button(key="ask").click().run()
    assert a.session_state["trace"].question == QUESTION
    b = start(studio)
    assert "trace" not in b.session_state and not b.text_input(key="question").value
    assert "Ask a question, or replay a saved trace." in [i.value for i in b.info]
    b.selectbox(key="method").set_value("ppr").run()
    b.text_input(key="question").input("Where does the Seine flow?").run()
    b.button(key="ask").click().run()
    assert not b.exception and not b.error, [e.value for e in b.error]
    assert b.session_state["trace"].question == "Where does the Seine flow?"
    assert b.session_state["trace"].first(RunStarted).method == "ppr"
    a.run()
    assert a.session_state["trace"].question == QUESTION and a.text_input(key="question").value == QUESTION
    assert a.selectbox(key="method").value == "gear"
    assert a.session_state["trace"].first(RunStarted).method == "gear"
    # b's question is nowhere on a's page (the corpus's own "The Seine flows …" may be, in a's passage lists)
    assert QUESTION in shown_text(a) and "Where does the Seine flow?" not in shown_text(a)


def test_saved_traces_of_one_question_in_one_second_never_collide(studio: dict,  # noqa: F811
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from studio.core import saves

    monkeypatch.setattr(saves.time, "strftime", lambda fmt, *args: "20250101-120000")
    trace = studio["trace"]
    names = {saves.save_name(trace) for _ in range(200)}
    assert len(names) == 200 and all(n.startswith("20250101-120000_which-sea-is-the-island") for n in names)
    trace.save(studio["data"] / "traces" / "run.json")
    for _ in range(2):  # two sessions saving the same run in the same second
        at = start(studio)
        at.selectbox(key="trace_pick").set_value("saved: run").run()
        at.button(key="replay_pick").click().run()
        at.button(key="save_trace").click().run()
        assert not at.exception
    saved = sorted(p.name for p in (studio["data"] / "traces").glob("20250101-120000_*.json"))
    assert len(saved) == 2
    assert all(Trace.load(studio["data"] / "traces" / name).question == QUESTION for name in saved)


def test_a_trace_download_survives_a_rerun(studio: dict) -> None:  # noqa: F811
    """The browser fetches a download after the click; a rerun that renamed the file (a new random suffix) dropped
    the one being fetched, and the load test's download was cancelled. One name per trace, and no rerun on click."""
    studio["trace"].save(studio["data"] / "traces" / "run.json")
    at = start(studio)
    at.selectbox(key="trace_pick").set_value("saved: run").run()
    at.button(key="replay_pick").click().run()
    first = at.get("download_button")[0].proto
    at.toggle(key="teaching").set_value(True).run()
    at.toggle(key="teaching").set_value(False).run()
    again = at.get("download_button")[0].proto
    assert not at.exception
    assert first.url == again.url and first.url.endswith(".json")
    assert again.ignore_rerun


def test_an_index_name_being_built_by_another_session_is_refused(studio: dict) -> None:  # noqa: F811
    from studio.pages.index import claim_name

    with claim_name("uploaded") as first:
        with claim_name("uploaded") as second, claim_name("other") as other:
            assert first and not second and other
        at = start(studio)
        at.switch_page("app_pages/index.py").run()
        at.text_input(key="ix_name").input("uploaded").run()
        at.file_uploader(key="ix_corpus").set_value([("corpus.json", b"[]", "application/json")]).run()
        at.button(key="ix_build").click().run()
        assert not at.exception
        assert any("Another session is building" in e.value for e in at.error)
        assert not (studio["data"] / "indexes" / "uploaded").exists()
    with claim_name("uploaded") as again:
        assert again  # given back when its build ended


def test_a_visitors_endpoint_never_gets_the_servers_api_key(monkeypatch) -> None:
    """The sidebar lets anyone type an OpenAI-compatible base URL: the key configured on the server goes only to the
    server's own endpoint; "auto" keeps that endpoint for what is not recorded; "local" is the embedded model."""
    from gear.config import Settings
    from studio.core.sidebar import _finish_settings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-secret-123456")
    monkeypatch.setenv("GEAR_LLM_BASE_URL", "http://127.0.0.1:8080/v1")
    base = Settings(_env_file=None)
    own = _finish_settings(base, {"llm": "openai", "llm_base_url": "http://127.0.0.1:8080/v1"}, "openai")
    assert own.llm_api_key is not None and own.llm_api_key.get_secret_value() == "sk-server-secret-123456"
    other = _finish_settings(base, {"llm": "openai", "llm_base_url": "https://evil.example/v1"}, "openai")
    assert other.llm_base_url == "https://evil.example/v1" and other.llm_api_key is None
    auto = _finish_settings(base, {"llm": "auto"}, "auto")
    assert auto.llm_base_url == "http://127.0.0.1:8080/v1"
    local = _finish_settings(base, {"llm": "local"}, "local")
    assert local.llm_base_url is None
