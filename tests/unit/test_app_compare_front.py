"""Compare as a newcomer meets it: its question list says which questions replay at once, as the
Ask page's does; titles that several passages share are told apart; PPR's entity graph is built with the index, or in
the background when the index is opened, so a comparison never stops to build it."""

from __future__ import annotations

from pathlib import Path

from gear import viz
from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.corpus import Document
from gear.index import build_index
from gear.trace import PassageView
from tests.conftest import TINY_DOCS, TINY_TRIPLES, FakeEncoder
from tests.unit.test_app import QUESTION, start, studio  # noqa: F401


def compare_options(at) -> list[str]:
    return list(at.selectbox(key="cmp_example").options)


def test_the_compare_question_list_marks_what_replays_at_once(studio: dict) -> None:  # noqa: F811
    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    at.run()  # the index and embedder load in the background: the marks come once they are ready
    assert not at.exception and not at.error, [e.value for e in at.error]
    # the default methods: GeAR and IRCoT ask the LLM, and both runs of this question are recorded
    assert compare_options(at) == [f"recorded · instant · {QUESTION}"]
    assert any("1 of 1 recorded" in str(c.value) for c in at.caption)
    at.multiselect(key="cmp_methods").set_value(["BM25", "Hybrid + NaiveGE", "PPR (HippoRAG 2)"]).run()
    assert compare_options(at) == [f"no LLM · seconds · {QUESTION}"]
    at.multiselect(key="cmp_methods").set_value(["Hybrid", "GeAR (hybrid)", "IRCoT (hybrid)"]).run()
    at.selectbox(key="prompts").set_value("small").run()  # GeAR was recorded with the paper's prompts only
    assert compare_options(at) == [f"live: GeAR not recorded · {QUESTION}"]  # (IRCoT's prompts are its own)


def test_titles_several_passages_share_are_told_apart() -> None:
    ecb = [PassageView(10, "European Central Bank", "The ECB is the central bank of the euro."),
           PassageView(11, "European Central Bank", "Its Governing Council sets the interest rates of the euro area."),
           PassageView(12, "Debt", "Debt is money owed.", gold=True)]
    other = [PassageView(12, "Debt", "Debt is money owed.", gold=True),
             PassageView(10, "European Central Bank", "The ECB is the central bank of the euro.")]
    rows = viz.side_by_side({"Hybrid": ecb, "PPR": other}, 3)
    assert rows[0] == {"rank": 1, "Hybrid": "European Central Bank — The ECB is the central bank of the euro.",
                       "PPR": "★ Debt"}
    assert rows[1]["Hybrid"] == "European Central Bank — Its Governing Council sets the interest rates o…"
    assert rows[1]["PPR"] == rows[0]["Hybrid"]  # the same passage reads the same in every column
    assert len({rows[0]["Hybrid"], rows[1]["Hybrid"]}) == 2
    # a title only one passage has stays short
    assert viz.side_by_side({"A": [PassageView(1, "Sicily", "Sicily is an island.")]}, 1)[0]["A"] == "Sicily"


def test_an_index_built_with_its_ppr_graph_answers_ppr_without_building_it(tmp_path: Path) -> None:
    out = tmp_path / "index"
    build_index([Document(t, x) for t, x in TINY_DOCS], [list(t) for t in TINY_TRIPLES], out, FakeEncoder(),
                ppr_threshold=Settings().ppr_synonym_threshold)
    assert sorted(p.name.split("-")[0] for p in (out / "ppr").iterdir()) == ["entity_vectors", "synonyms"]
    encoder = FakeEncoder()
    engine = Engine.open(out, Settings(), encoder=encoder)
    ppr = engine.ppr_index(Settings())
    assert ppr.cost.cached == {"entity vectors": True, "synonym edges": True}
    assert encoder.encoded_texts == []  # no entity name encoded at the first PPR question


def test_opening_an_index_makes_its_ppr_graph_ready_in_the_background(studio: dict) -> None:  # noqa: F811
    import time

    from studio.core import resources

    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    engine = resources.engine_for(studio["index"])
    deadline = time.time() + 30
    while not engine.has_ppr_index(Settings()):  # nobody asked for PPR: the page's opening did
        assert time.time() < deadline, "PPR's graph was not made ready"
        time.sleep(0.05)
    at.run()
    assert not any("PPR's entity graph is being made ready" in str(c.value) for c in at.caption)


def test_the_demo_index_is_built_first_and_its_ppr_graph_in_the_background(tmp_path: Path, monkeypatch) -> None:
    """On a first start a question waits for the demo's build: PPR's graph is not part of it (the app makes it ready
    in the background once the index is opened: test_opening_an_index_makes_its_ppr_graph_ready_in_the_background)."""
    from studio.core import demos

    seen: dict = {}

    def build(*args, **kwargs):
        seen.update(kwargs)

    monkeypatch.setenv("GEAR_STUDIO_DATA", str(tmp_path))
    monkeypatch.setattr("gear.index.build_index", build)
    demos.ensure_demo_index("walkthrough", encoder=FakeEncoder())
    assert seen and seen.get("ppr_threshold") is None


def test_a_choice_made_before_the_marks_changed_still_names_its_question() -> None:
    """Streamlit hands back the label a list showed when its labels changed between the click and the next run (the
    marks arrived, or an estimate moved): the question box gets the question, never "recorded · instant · …"."""
    from studio.core.example_marks import chosen_question

    questions = ["Who?", "Who is the spouse of the director of Jump for Glory?"]
    assert chosen_question(questions[1], questions) == questions[1]
    assert chosen_question(f"recorded · instant · {questions[1]}", questions) == questions[1]
    assert chosen_question(f"live: GeAR · ≈ 2 min, IRCoT · ≈ 57 s · {questions[0]}", questions) == questions[0]
    assert chosen_question("a question typed freely", questions) == "a question typed freely"


def test_building_ppr_graph_lets_a_question_use_the_encoder_in_between() -> None:
    """The PPR graph's names are encoded in turns: a question's encoding (another caller of the shared encoder) is
    served between two batches, not after all of them."""
    import threading

    import numpy as np

    from gear.index.build import in_turns

    lock, calls = threading.Lock(), []
    started = threading.Event()

    def encode(texts):
        with lock:
            calls.append("question" if texts == ["q"] else "names")
            started.set()
            threading.Event().wait(0.002)  # the model's time on one batch
            return np.zeros((len(texts), 4), np.float32)

    names = [f"entity {n}" for n in range(128 * 40)]
    builder = threading.Thread(target=lambda: in_turns(encode)(names))
    builder.start()
    started.wait(5)
    encode(["q"])
    builder.join(10)
    assert calls.count("names") == 40 and "question" in calls
    assert calls.index("question") < len(calls) - 1  # served while the names were still being encoded


def test_after_another_index_is_chosen_the_question_box_holds_the_pick_shown(studio: dict) -> None:  # noqa: F811
    """Choosing another index changes the QA-set list, and Streamlit shows its first question
    without calling the list's on_change: the Question box stayed on the other index's question (or empty) and
    Compare stayed disabled until another question was picked. The box follows the pick shown."""
    import json
    import shutil

    other = studio["data"] / "indexes" / "other"
    shutil.copytree(studio["data"] / "indexes" / "tiny", other)
    asked = "Which river flows through Paris?"
    (other / "qa.json").write_text(json.dumps([{"id": "1hop__2", "question": asked, "answer": "Seine",
                                                "paragraphs": []}]), encoding="utf-8")
    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    assert at.text_input(key="cmp_question").value == QUESTION
    at.session_state["index_selected"] = "other"  # what the sidebar's Index list sets
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="cmp_example").value == asked
    assert at.text_input(key="cmp_question").value == asked
    assert not at.button(key="cmp_run").disabled
    # a question typed into the box stays while the pick does not change
    at.text_input(key="cmp_question").input("Where does the Seine flow?").run()
    at.run()
    assert at.text_input(key="cmp_question").value == "Where does the Seine flow?"
    at.session_state["index_selected"] = "tiny"
    at.run()
    assert at.text_input(key="cmp_question").value == QUESTION
    # a comparison made on tiny is not shown as other's: it is named, and comes back with its index
    at.multiselect(key="cmp_methods").set_value(["BM25"]).run()
    at.button(key="cmp_run").click().run()
    assert any("Answer, recall and cost per method" in str(h.value) for h in at.subheader)
    at.session_state["index_selected"] = "other"
    at.run()
    # both ways: other's box holds the question typed there, and tiny's comparison is named, not drawn
    assert at.text_input(key="cmp_question").value == "Where does the Seine flow?"
    assert any("Your last comparison ran on the **tiny** index" in str(i.value) for i in at.info)
    assert not any("Answer, recall and cost per method" in str(h.value) for h in at.subheader)
    at.session_state["index_selected"] = "tiny"
    at.run()
    assert at.text_input(key="cmp_question").value == QUESTION
    assert any("Answer, recall and cost per method" in str(h.value) for h in at.subheader)


def test_compare_offers_the_indexs_own_questions_with_their_gold(studio: dict) -> None:  # noqa: F811
    """An own index's questions (saved with their gold passages) are offered as the QA set's are, typed in too, and
    recall is shown for them; R@k of a question without gold is "—", never "None"."""
    from gear.data.qa_set import GoldRef, new_question, save_question

    own = "Which island is Mount Etna on?"
    save_question(studio["index"], new_question(own, [GoldRef("Mount Etna", "Mount Etna is an active volcano on the "
                                                                            "island of Sicily.")], ["Sicily"]))
    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    options = compare_options(at)
    assert options[0].startswith("★ yours") and options[0].endswith(own) and options[1].endswith(QUESTION)
    assert "1 of yours, 1 from the QA set" in at.selectbox(key="cmp_example").label
    at.multiselect(key="cmp_methods").set_value(["BM25", "Hybrid"]).run()
    at.text_input(key="cmp_question").input("which island is mount etna on").run()  # typed, not picked
    at.button(key="cmp_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = next(df.value for df in at.dataframe if "LLM calls" in df.value.columns).set_index("method")
    assert table.loc["BM25", "R@5"] == "100"  # its one gold passage, Mount Etna, is in BM25's top 5
    assert not any("Gold passages unknown" in str(c.value) for c in at.caption)
    at.text_input(key="cmp_question").input("What grows in gardens?").run()  # no gold: "—"
    at.button(key="cmp_run").click().run()
    table = next(df.value for df in at.dataframe if "LLM calls" in df.value.columns).set_index("method")
    assert set(table["R@5"]) == {"—"} and "None" not in table.to_string()
