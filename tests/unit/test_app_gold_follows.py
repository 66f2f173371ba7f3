"""No verdict without evidence, and counts that follow the gold: with no gold passage known there is
no category — only "mark the right passages" — and "dataset issue: no gold passage in the index" only when the
question names a gold passage the index lacks; the Ask page's recall, the Traces list (R@5, R@10, EM) and its
diagnosis follow the gold as it is marked, saved, changed or removed (studio/core/run_gold.py). Same tiny index and
recorded answers as test_app."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from gear.data.qa_set import GoldRef, new_question, remove_question, save_question
from gear.diagnosis import diagnose
from gear.diagnosis.gold_marks import diagnose_marked, with_gold
from gear.events import FinalRanking
from gear.measures import recall_at
from gear.trace import Trace
from tests.unit.test_app import QUESTION, start, studio  # noqa: F401  (studio: the fixture)
from tests.unit.test_app_diagnosis import captions, frames, markdown, replay
from tests.unit.test_app_marks import boxes, free_run

ETNA, SICILY = 2, 3  # the tiny index's gold passages of QUESTION


def final_ids(trace: Trace) -> list[int]:
    final = trace.first(FinalRanking)
    assert final is not None
    return [p.id for p in final.passages]


def recall_metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric if str(m.label).startswith("R@")}


def pct(trace: Trace, gold: list[int], k: int) -> str:
    return f"{100 * recall_at(final_ids(trace), gold, k):.0f}%"


# -- the diagnosis: no verdict without evidence -----------------------------------------------------------------------
def test_a_typed_answer_alone_proposes_no_category(studio: dict) -> None:  # noqa: F811
    free = free_run(studio)
    d = diagnose_marked(free, [], ["Mediterranean Sea"])
    assert d.category is None and d.second is None
    assert d.evidence == ["no gold passage known: mark the passages that hold the answer"]
    assert diagnose(free).category is None


def test_dataset_issue_only_for_a_named_gold_passage_the_index_lacks(studio: dict) -> None:  # noqa: F811
    free = free_run(studio)
    d = diagnose(with_gold(free, [], ["Mediterranean Sea"]), missing_gold=["Atlantis"])
    assert d.category == "dataset" and "'Atlantis'" in d.evidence[0] and "in the index" in d.evidence[0]
    partly = diagnose(with_gold(free, [ETNA], ["Mediterranean Sea"]), missing_gold=["Atlantis"])
    assert partly.category != "dataset" or "Atlantis" not in " ".join(partly.evidence)
    assert any("lacks 1 named gold passage ('Atlantis')" in n for n in partly.notes)


# -- Ask ---------------------------------------------------------------------------------------------------------------
def test_ask_before_any_gold_says_mark_the_passages_and_no_category(studio: dict) -> None:  # noqa: F811
    at = replay(studio, free_run(studio), "free")
    assert recall_metrics(at) == {} and "Recall: no gold passage known yet" in captions(at)
    next(t for t in at.text_input if t.key and t.key.endswith("_answer")).input("Mediterranean Sea").run()
    assert not at.exception
    words = markdown(at) + captions(at)
    assert "Proposed category" not in words and "dataset issue" not in words
    assert "No error category is proposed before a gold passage is known" in captions(at)


def test_asks_recall_follows_the_marks(studio: dict) -> None:  # noqa: F811
    free = free_run(studio)
    at = replay(studio, free, "free")
    boxes(at, "_run_")["Mount Etna"].check().run()
    assert not at.exception
    assert recall_metrics(at) == {"R@5": pct(free, [ETNA], 5), "R@10": pct(free, [ETNA], 10)}
    assert "(against the gold passages marked below)" in captions(at)
    boxes(at, "_run_")["Sicily"].check().run()
    assert recall_metrics(at) == {"R@5": pct(free, [ETNA, SICILY], 5), "R@10": pct(free, [ETNA, SICILY], 10)}
    for pid in (ETNA, SICILY):  # every mark removed: no gold, no recall
        next(b for b in at.button if b.key and b.key.endswith(f"_unmark_{pid}")).click().run()
    assert recall_metrics(at) == {} and "Recall: no gold passage known yet" in captions(at)


# -- Traces ------------------------------------------------------------------------------------------------------------
def listed(at: AppTest) -> dict:
    table = at.dataframe[0].value
    row = table[table["file"] == "free.json"]
    assert len(row) == 1
    return row.iloc[0].to_dict()


def gold_ref(pid: int) -> GoldRef:
    from tests.unit.test_app import DOCS

    return GoldRef(DOCS[pid][0], DOCS[pid][1], pid)


def test_the_traces_list_follows_the_gold_saved_changed_and_removed(studio: dict) -> None:  # noqa: F811
    free = free_run(studio)
    free.save(studio["data"] / "traces" / "free.json")
    at = start(studio)
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception
    row = listed(at)
    assert row["R@5"] is None or row["R@5"] != row["R@5"]  # None (NaN in a frame): no gold known
    index = studio["index"]
    save_question(index, new_question(QUESTION, [gold_ref(ETNA), gold_ref(SICILY)],
                                      ["Mediterranean Sea"]))
    at.run()
    row = listed(at)
    assert row["R@5"] == round(100 * recall_at(final_ids(free), [ETNA, SICILY], 5))
    assert row["R@10"] == round(100 * recall_at(final_ids(free), [ETNA, SICILY], 10)) and row["EM"] == "1"
    # the diagnosis over the folder counts it now
    at.selectbox(key="tr_diag_folder").set_value("saved").run()
    questions = next(f for f in frames(at) if "proposed" in f.columns)
    assert list(questions["question"]) == [QUESTION] and questions["found"].iloc[0].endswith("/2")
    # changed: one gold passage, one the run never showed (it counts, and is lost at the first stage)
    unseen = GoldRef("Atlantis", "Atlantis is a sunken island.")
    save_question(index, new_question(QUESTION, [gold_ref(ETNA), unseen], ["Mediterranean Sea"]))
    at.run()
    row = listed(at)
    assert row["R@10"] == round(100 * recall_at(final_ids(free), [ETNA, -1], 10))
    questions = next(f for f in frames(at) if "proposed" in f.columns)
    assert questions["found"].iloc[0].endswith("/2")
    remove_question(index, QUESTION)
    at.run()
    row = listed(at)
    assert row["R@5"] is None or row["R@5"] != row["R@5"]


def test_the_traces_list_follows_marks_made_on_ask(studio: dict) -> None:  # noqa: F811
    free = free_run(studio)
    at = replay(studio, free, "free")  # saved as traces/free.json and replayed on Ask
    boxes(at, "_run_")["Mount Etna"].check().run()
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception
    assert listed(at)["R@10"] == round(100 * recall_at(final_ids(free), [ETNA], 10))
