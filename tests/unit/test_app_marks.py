"""AppTests of marking the right passages of a run (studio/gold/marks.py): a run that does not know
its gold passages gets them from the person — picked among the run's passages or found by searching the index — and
its diagnosis at once; marks change and go; suggestions wait for confirmation; "Save as a test question" writes the
index's own QA set, which Ask's examples and Evaluate then offer. Same tiny index and recorded answers as test_app."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from gear.data.qa_set import load_own_qa
from gear.events import RunStarted
from gear.trace import Trace
from tests.unit.test_app import QUESTION, start, studio  # noqa: F401  (studio: the fixture)
from tests.unit.test_app_diagnosis import captions, frames, markdown, no_raw_html, replay


def free_run(studio: dict) -> Trace:  # noqa: F811
    """The recorded GeAR run with its gold passages and answers taken away: a question typed freely."""
    trace: Trace = studio["trace"]
    s = trace.first(RunStarted)
    return Trace([RunStarted(0, s.question, s.method, s.retriever, s.settings), *trace.events[1:]])


def boxes(at: AppTest, where: str) -> dict[str, object]:
    """The panel's checkboxes of one list ("_run_": the run's passages, "_hit_": the search's), by title."""
    return {str(c.label).split(" · #")[0]: c for c in at.checkbox if c.key and where in c.key}


def stage_rows(at: AppTest) -> list[str]:
    frame = next((f for f in frames(at) if "gold passage" in f.columns and "lost at" in f.columns), None)
    return [] if frame is None else sorted(frame["gold passage"])


def test_mark_two_passages_see_the_diagnosis_and_save_them_as_a_test_question(studio: dict) -> None:  # noqa: F811
    at = replay(studio, free_run(studio), "free")
    assert "Mark the right passages" in markdown(at)
    assert "Nothing to diagnose yet" in captions(at) and stage_rows(at) == []
    run = boxes(at, "_run_")
    assert {"Mount Etna", "Sicily"} <= set(run)
    run["Mount Etna"].check().run()
    assert not at.exception and stage_rows(at) == ["Mount Etna"]  # the diagnosis at once, no LLM asked
    hits = boxes(at, "_hit_")  # the search of the index (BM25 + dense, the question by default)
    assert hits["Mount Etna"].value is True  # one mark, shown in every list
    hits["Sicily"].check().run()
    assert stage_rows(at) == ["Mount Etna", "Sicily"]
    assert "Proposed category" in markdown(at)
    # unmark one, then mark it again
    next(b for b in at.button if b.key and b.key.endswith("_unmark_3")).click().run()
    assert stage_rows(at) == ["Mount Etna"]
    boxes(at, "_run_")["Sicily"].check().run()
    assert stage_rows(at) == ["Mount Etna", "Sicily"]
    # the answer: the answer check, and suggestions to confirm (nothing marked on its own)
    next(t for t in at.text_input if t.key and t.key.endswith("_answer")).input("Mediterranean Sea").run()
    assert "EM" in markdown(at)
    save = next(b for b in at.button if b.key and b.key.endswith("_save"))
    save.click().run()
    assert not at.exception and any("Saved as a test question" in str(s.value) for s in at.success)
    assert "1 of yours" in at.selectbox(key="example").label  # the example list above counts it at once
    [saved] = load_own_qa(studio["index"])
    assert saved.question == QUESTION and saved.source == "ask" and saved.answers == ("Mediterranean Sea",)
    assert [g.title for g in saved.gold] == ["Mount Etna", "Sicily"]
    no_raw_html(at)


def test_suggestions_are_offered_never_marked(studio: dict) -> None:  # noqa: F811
    at = replay(studio, free_run(studio), "free")
    assert "Type the right answer" in captions(at)
    next(t for t in at.text_input if t.key and t.key.endswith("_answer")).input("Mediterranean Sea").run()
    assert "Suggestions" in captions(at) and "holds" in markdown(at) and "Mediterranean Sea" in markdown(at)
    assert stage_rows(at) == []  # the answer alone marks nothing
    sicily = next(b for b in at.button if b.key and b.key.endswith("_suggest_3"))  # Sicily holds the answer
    sicily.click().run()
    assert stage_rows(at) == ["Sicily"]


def test_a_saved_question_is_among_asks_examples_and_on_evaluate(studio: dict) -> None:  # noqa: F811
    from gear.data.qa_set import GoldRef, new_question, save_question

    etna, sicily = (GoldRef(t, x) for t, x in (("Mount Etna", "Mount Etna is an active volcano on the island of "
                                                               "Sicily."),
                                                ("Sicily", "Sicily is the largest island in the Mediterranean Sea.")))
    save_question(studio["index"], new_question("Where is Mount Etna?", [etna, sicily], ["Sicily"]))
    at = start(studio)
    example = at.selectbox(key="example")
    assert "Where is Mount Etna?" in example.options[1] and "★ yours" in example.options[1]
    assert "1 of yours" in example.label
    at.switch_page("app_pages/evaluate.py").run()
    assert not at.exception
    source = next(r for r in at.radio if r.key and r.key.startswith("eval_qa_"))
    assert source.value == "own" and "your own questions (1" in source.format_func("own")


def test_a_run_made_on_another_index_is_not_searched_there(studio: dict, tmp_path) -> None:  # noqa: F811
    trace = free_run(studio)
    moved = Trace([trace.events[0], *(_shifted(e) for e in trace.events[1:])])
    at = replay(studio, moved, "elsewhere")
    assert "was not made on tiny" in captions(at)
    assert not any(c.key and "_hit_" in c.key for c in at.checkbox)  # no search of the wrong index
    save = next(b for b in at.button if b.key and b.key.endswith("_save"))
    assert save.disabled


def _shifted(event):
    """The same event with every passage view's title changed: passages this index does not have under those ids."""
    import dataclasses

    from gear.trace import PassageView

    def fix(value):
        if isinstance(value, PassageView):
            return dataclasses.replace(value, title=value.title + " (elsewhere)")
        if isinstance(value, list):
            return [fix(v) for v in value]
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return dataclasses.replace(value, **{f.name: fix(getattr(value, f.name))
                                                 for f in dataclasses.fields(value) if f.init})
        return value

    return fix(event)


def test_a_run_opened_from_traces_is_marked_on_the_index_it_was_made_on(studio: dict) -> None:  # noqa: F811
    free_run(studio).save(studio["data"] / "traces" / "typed.json")
    at = start(studio)
    at.session_state["index_selected"] = "walkthrough (demo)"  # another index is selected
    at.switch_page("app_pages/traces.py").run()
    at.selectbox(key="tr_choice").set_value("saved · typed.json").run()
    at.button(key="tr_open").click().run()
    assert not at.exception
    assert at.session_state["index_selected"] == "tiny"  # the run's own index, found by its passages
    at.switch_page("app_pages/ask.py")  # AppTest reruns the page it last switched to; the browser stays on Ask
    boxes(at, "_hit_")["Sicily"].check().run()  # the index is searched: a passage marked from there
    assert stage_rows(at) == ["Sicily"]
