"""The app as a newcomer meets it: labels that say what is true, the demo that explains itself, choices and
runs that survive moving between pages, and the example list that says which questions replay at once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from gear.events import Answered, RunStarted
from gear.trace import Trace
from gear.trace.cost import seconds_words
from studio.core import demos
from tests.unit.test_app import APP, QUESTION, ask_with, origins_line, shown_text, start, studio  # noqa: F401


def fresh(studio: dict) -> AppTest:  # noqa: F811 - the fixture's value
    """A first visit, as a newcomer's browser makes it (the bundled walk-through run is loaded)."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["index_selected"] = "tiny"
    return at.run()


def metric_labels(at: AppTest) -> list[str]:
    return [m.label for m in at.metric]


def test_a_fresh_session_explains_the_walkthrough_it_shows(studio: dict) -> None:  # noqa: F811
    at = fresh(studio)
    assert not at.exception
    caption = " ".join(str(i.value) for i in at.info)
    assert "1929" in caption and "reasoner hallucination" in caption and "Germany" in caption
    trace = Trace.load(demos.EXAMPLES["walkthrough"].path)
    answered = trace.first(Answered)
    assert answered is not None and f"“{answered.answer}”" in caption  # the caption tells what the run shows
    text = shown_text(at)
    assert f"**Final answer:** {answered.answer}" in text and "**gold:** 1929" in text
    assert "the reasoner's answer: Germany" in text  # the reasoner's verdict, labelled as the reasoner's
    # a recorded run says so; its time is not "Time" as if it had just run
    assert "Recorded run" in metric_labels(at) and "Time" not in metric_labels(at)
    assert any(str(c.value).startswith("Recorded run: 57.3 s") for c in at.caption)
    # the sidebar says nothing about "the last run's" answers: this session has made none
    assert origins_line(at) == []
    assert "from the model" in text  # the trace's own cost line, said of when it was recorded
    assert "LLM answers (when it was recorded)" in text


def test_a_run_shown_under_another_index_says_where_it_was_made(studio: dict) -> None:  # noqa: F811
    at = fresh(studio)  # the walk-through's recorded run, with the tiny index chosen
    elsewhere = [str(c.value) for c in at.caption if "This run was made on" in str(c.value)]
    assert elsewhere == [":material/swap_horiz: This run was made on the **walkthrough** index; a question asked now "
                         "goes to **tiny**, the index chosen in the sidebar."]
    ask_with(at, "gear")  # a run made here, on tiny: nothing to say
    at.run()
    assert not [c for c in at.caption if "This run was made on" in str(c.value)]


def test_the_example_the_model_gets_right_replays_on_its_own(studio: dict) -> None:  # noqa: F811
    at = fresh(studio)
    at.button(key="example_musique_wilm_airport").click().run()
    assert not at.exception
    trace: Trace = at.session_state["trace"]
    start_event = trace.first(RunStarted)
    answered = trace.first(Answered)
    assert start_event.question_id == "2hop__357901_62671" and answered.em == 1.0  # picked by its recorded EM
    caption = " ".join(str(i.value) for i in at.info)
    assert "Wilmington International Airport" in caption and "Sumter International Airport" in caption
    text = shown_text(at)
    assert "**Final answer:** Wilmington International Airport" in text
    assert "**gold:** Wilmington International Airport / KILM / ILM" in text
    # its question is in the box, and the index it was run on is picked (the replay itself needs none)
    assert at.text_input(key="question").value == trace.question
    assert at.session_state["index_selected"] == "musique (demo)"
    # replayed from recorded answers: the note says so, with the model's seconds when they were recorded
    cost = trace.cost()
    assert cost.recorded and cost.model_seconds > 0
    assert any(f"{seconds_words(cost.model_seconds)} of model time when they were recorded" in str(c.value)
               for c in at.caption)
    at.button(key="example_walkthrough").click().run()  # and back
    assert at.session_state["index_selected"] == "walkthrough (demo)"


def test_the_typed_question_and_choices_survive_page_changes(studio: dict) -> None:  # noqa: F811
    at = start(studio)
    at.text_input(key="question").input("Which island is Mount Etna on?").run()
    at.selectbox(key="method").set_value("ircot").run()
    at.toggle(key="teaching").set_value(True).run()
    at.switch_page("app_pages/compare.py").run()
    at.text_input(key="cmp_question").input("Where does the Seine flow?").run()
    at.multiselect(key="cmp_methods").set_value(["BM25", "Hybrid"]).run()
    at.slider(key="cmp_k").set_value(7).run()
    for page in ("app_pages/traces.py", "app_pages/index.py", "app_pages/evaluate.py", "app_pages/ask.py"):
        at.switch_page(page).run()
        assert not at.exception, page
    assert at.text_input(key="question").value == "Which island is Mount Etna on?"
    assert not at.button(key="ask").disabled
    assert at.selectbox(key="method").value == "ircot" and at.toggle(key="teaching").value is True
    at.switch_page("app_pages/compare.py").run()
    assert at.text_input(key="cmp_question").value == "Where does the Seine flow?"
    assert at.multiselect(key="cmp_methods").value == ["BM25", "Hybrid"]
    assert at.slider(key="cmp_k").value == 7


def test_every_finished_run_is_listed_in_traces_key_columns_first(studio: dict) -> None:  # noqa: F811
    at = ask_with(start(studio), "gear")
    at = ask_with(at, "naive")
    at.switch_page("app_pages/compare.py").run()
    at.multiselect(key="cmp_methods").set_value(["BM25"]).run()
    at.button(key="cmp_run").click().run()
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.columns[:7]) == ["question", "R@5", "R@10", "answer", "EM", "tokens", "tags"]
    mine = table[table["where"] == "this session"]
    assert len(mine) == 3 and set(mine["question"]) == {QUESTION}
    assert list(mine["method"]) == ["bm25/none", "hybrid/naive", "hybrid/gear"]  # newest first
    assert list(mine["EM"]) == ["—", "—", "1"]  # the GeAR run answered; the others gave no answer ("—", never "None")
    # a run of this session opens in the Ask view as it ran
    session_rows = [o for o in at.selectbox(key="tr_choice").options if o.startswith("this session")]
    at.selectbox(key="tr_choice").set_value(session_rows[-1]).run()  # the oldest: the GeAR run
    at.button(key="tr_open").click().run()
    assert not at.exception
    assert at.session_state["trace"].first(RunStarted).method == "gear"
    assert "Time" in metric_labels(at)


def test_the_history_keeps_the_last_fifty_runs(studio: dict) -> None:  # noqa: F811
    from studio.core import keys, session

    at = start(studio)
    trace = Trace([RunStarted(0, "q", "none", "bm25", {})])
    at.session_state[keys.HISTORY] = [session.HistoryRun("Ask", float(n), trace)
                                         for n in range(session.HISTORY_LIMIT)]
    at = ask_with(at, "naive")
    runs = at.session_state[keys.HISTORY]
    assert len(runs) == session.HISTORY_LIMIT and runs[0].finished == 1.0 and runs[-1].trace.question == QUESTION


def test_labels_say_what_is_true(studio: dict) -> None:  # noqa: F811
    from studio.core.sidebar import LLM_KINDS

    at = start(studio)
    # the LLM picker's choices fit the sidebar (the old ones were cut: "recorded answers, else the live m…")
    assert all(len(label) <= 26 for label in LLM_KINDS.values())
    at.switch_page("app_pages/compare.py").run()
    sliders = [s.label for s in at.slider]  # the page's and the sidebar's
    assert "Passages shown of each ranking" in sliders  # the single-step methods retrieve 15 here as on every page
    assert "k of GeAR and IRCoT (passages per retrieval)" in sliders
    assert len([label for label in sliders if label.startswith("k")]) == 1
    assert any("retrieve 15 passages, as on the Ask page" in str(c.value) for c in at.caption)
    at.slider(key="cmp_k").set_value(20).run()  # deeper than every other page: said
    assert any("retrieve 20 passages here, deeper than the 15" in str(c.value) for c in at.caption)
    at.switch_page("app_pages/index.py").run()
    uploader = next(u for u in at.get("file_uploader") if "OpenIE" in u.proto.label)
    assert "optional" in uploader.proto.label


def test_a_built_index_is_selected_and_the_message_points_nowhere_false(studio: dict,  # noqa: F811
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from gear.config import Settings
    from studio.core import resources
    from tests.conftest import FakeEncoder
    from tests.unit.test_app import DOCS, TRIPLES

    monkeypatch.setitem(resources.ENCODER_FACTORIES, Settings().embedder, FakeEncoder)
    corpus = json.dumps([{"title": t, "text": x} for t, x in DOCS[:3]]).encode()
    openie = json.dumps({"docs": [{"title": t, "text": x, "extracted_triples": [list(tr) for tr in trs]}
                                  for (t, x), trs in zip(DOCS[:3], TRIPLES[:3], strict=True)]}).encode()
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    at.text_input(key="ix_name").input("mine").run()
    at.file_uploader(key="ix_corpus").set_value([("corpus.json", corpus, "application/json")]).run()
    at.file_uploader(key="ix_openie").set_value(("openie.json", openie, "application/json")).run()
    at.button(key="ix_build").click().run()
    assert not at.exception
    message = " ".join(str(s.value) for s in at.success)
    assert re.search(r"mine is ready \(built in \d+ s\) and selected", message)
    assert "pick it in the sidebar" not in message
    at.switch_page("app_pages/ask.py").run()
    assert at.sidebar.selectbox[0].value == "mine"


def test_extraction_names_the_llm_in_words() -> None:
    from gear.config import Settings
    from studio.core.sidebar import llm_words

    assert llm_words(Settings(llm="auto")).startswith("the embedded model (Qwen2.5-Coder-1.5B), reusing")
    assert llm_words(Settings(llm="openai", llm_model="m", llm_base_url="http://h/v1")) == "m at http://h/v1"
    assert "auto" not in llm_words(Settings(llm="auto"))


def test_the_example_list_marks_recorded_questions(studio: dict, tmp_path: Path) -> None:  # noqa: F811
    at = start(studio)
    at.run()  # the index and embedder load in the background: the marks come once they are ready
    at.run()
    options = at.selectbox(key="example").options
    assert f"recorded · instant · {QUESTION}" in options, options
    note = " ".join(str(c.value) for c in at.caption)
    assert "1 of 1 recorded" in note
    # a method whose first request was never recorded is not called recorded
    at.selectbox(key="prompts").set_value("small").run()
    options = at.selectbox(key="example").options
    assert f"not recorded (replay only) · {QUESTION}" in options, options
    at.selectbox(key="method").set_value("naive").run()
    assert f"no LLM · seconds · {QUESTION}" in at.selectbox(key="example").options


def test_the_app_draws_no_emoji() -> None:
    """Icons are Streamlit's bundled Material icons (":material/…:", drawn from a font served by the app itself) or
    plain text: an emoji is an empty box in a browser without an emoji font (the page titles, navigation and buttons
    were)."""
    root = Path(__file__).resolve().parents[2]
    sources = [root / "app.py", *sorted((root / "app_pages").glob("*.py")), *sorted((root / "studio").rglob("*.py"))]

    def emoji(ch: str) -> bool:  # ★ ✓ ✗ are in DejaVu and Liberation, as text
        return ord(ch) >= 0x1F000 or ch == "\ufe0f" or (0x2600 <= ord(ch) <= 0x27BF and ch not in "★✓✗")

    found = [(p.name, n, ch) for p in sources for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             for ch in line if emoji(ch)]
    assert found == []


def test_an_llm_that_cannot_be_made_leaves_the_list_unmarked(studio: dict, tmp_path: Path,  # noqa: F811
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty_cache"
    empty.mkdir()
    monkeypatch.setenv("GEAR_LLM_CACHE_DIR", str(empty))  # replay from an empty cache: no LLM can be made
    at = start(studio)
    at.run()
    assert not at.exception and not at.error
    assert all(not o.startswith(("recorded", "live")) for o in at.selectbox(key="example").options)
    assert any("Cannot tell which examples are recorded" in str(c.value) for c in at.caption)


def test_teaching_mode_keeps_the_outcome_for_the_last_step(studio: dict) -> None:  # noqa: F811
    """The diagnosis of where the gold was lost (the run's ending) waits for the last step or a
    click; at the last step Next is disabled instead of looking active and doing nothing."""
    def seen(at: AppTest) -> str:
        return (shown_text(at) + " ".join(str(h.value) for h in at.subheader)).lower()

    at = fresh(studio)  # the walk-through's recorded run
    at.toggle(key="teaching").set_value(True).run()
    assert not at.exception
    outcome = "where was the gold lost"
    assert outcome not in seen(at)
    assert not any("Croatia" in str(i.value) for i in at.info)  # nor the example's caption, which tells the answer
    assert at.button(key="teach_outcome").label == "Show the outcome now"
    steps = 0
    while not at.button(key="teach_step_next").disabled:
        at.button(key="teach_step_next").click().run()
        steps += 1
        assert steps < 40
        shown = seen(at)
        last = at.button(key="teach_step_next").disabled
        assert (outcome in shown) == last, steps  # not before the last step, and there
    assert any("Croatia" in str(i.value) for i in at.info)  # the last step: the example's caption too
    bar = at.get("progress")[0].proto.text
    assert bar.startswith(f"Step {steps + 1} of {steps + 1}")
    at.run()  # the last step stays the last
    assert at.get("progress")[0].proto.text == bar and at.button(key="teach_step_next").disabled
    at.button(key="teach_step_back").click().run()
    assert outcome not in seen(at) and not at.button(key="teach_step_next").disabled
    at.button(key="teach_outcome").click().run()  # asked for: shown before the end
    assert outcome in seen(at)


def test_the_ask_question_box_follows_the_index(studio: dict) -> None:  # noqa: F811
    """A new index chosen on Ask showed the demo's question, ready to ask on an index that does not hold it: the box
    belongs to the index it was typed on, and comes back with it."""
    import shutil

    shutil.copytree(studio["data"] / "indexes" / "tiny", studio["data"] / "indexes" / "other")
    at = start(studio)
    at.text_input(key="question").input("Which island is Mount Etna on?").run()
    at.session_state["index_selected"] = "other"  # what the sidebar's Index list sets
    at.run()
    assert not at.exception
    assert at.text_input(key="question").value == "" and at.button(key="ask").disabled
    at.text_input(key="question").input("Where does the Seine flow?").run()
    at.session_state["index_selected"] = "tiny"
    at.run()
    assert at.text_input(key="question").value == "Which island is Mount Etna on?"
    at.session_state["index_selected"] = "other"
    at.run()
    assert at.text_input(key="question").value == "Where does the Seine flow?"
