"""The index's own QA set (gear.data.qa_set): saved questions read back as a QA set, a question saved twice is
one record, concurrent saves from threads and from processes all land, a rebuild of the index keeps the file, and
bad input gets one line while what was saved stays."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gear.data.qa_set import (
    QA_FILE,
    GoldRef,
    QASetError,
    load_own_qa,
    new_question,
    qa_path,
    question_id,
    remove_question,
    save_question,
)
from gear.data.questions import load_qa
from gear.data.reading import InputError
from gear.files import atomic_directory

ROOT = Path(__file__).resolve().parents[2]
GOLD_A = GoldRef("Chlorambucil", "Chlorambucil is used to treat chronic lymphocytic leukemia.", 3)
GOLD_B = GoldRef("p53", "Chlorambucil interacts with cytosolic p53.", 7)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """An index folder as far as the QA set cares: a folder with a manifest."""
    folder = tmp_path / "indexes" / "own"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    return folder


def test_a_saved_question_reads_back_and_is_a_qa_set_load_qa_reads(index: Path) -> None:
    q = new_question("What drug treats CLL by interacting with cytosolic p53?", [GOLD_A, GOLD_B],
                     ["chlorambucil", "Leukeran"], source="ask")
    stored, created = save_question(index, q)
    assert created and stored.saved and stored.updated
    [back] = load_own_qa(index)
    assert back.question == q.question and back.gold == (GOLD_A, GOLD_B)
    assert back.answers == ("chlorambucil", "Leukeran") and back.source == "ask" and back.id == q.id
    # the MuSiQue schema: the loader every evaluation uses reads the file as it is, gold by (title, text)
    [record], report = load_qa(qa_path(index))
    assert record.id == q.id and record.answers == ("chlorambucil", "Leukeran")
    assert record.gold == ((GOLD_A.title, GOLD_A.text), (GOLD_B.title, GOLD_B.text))
    assert not report.warnings


def test_saving_the_same_question_again_updates_it(index: Path) -> None:
    first, _ = save_question(index, new_question("Who founded the city?", [GOLD_A]))
    save_question(index, new_question("Other question", [GOLD_B]))
    again, created = save_question(index, new_question("  who founded   the City ", [GOLD_B], ["Romulus"]))
    assert not created
    questions = load_own_qa(index)
    assert [q.question for q in questions] == ["who founded the City", "Other question"]
    assert questions[0].gold == (GOLD_B,) and questions[0].answers == ("Romulus",)
    assert again.id == first.id == questions[0].id and questions[0].saved == first.saved


def test_fields_this_version_does_not_know_are_kept_on_update(index: Path) -> None:
    save_question(index, new_question("Q one", [GOLD_A]))
    data = json.loads(qa_path(index).read_text(encoding="utf-8"))
    data[0]["question_decomposition"] = [{"question": "hop 1"}]
    qa_path(index).write_text(json.dumps(data), encoding="utf-8")
    save_question(index, new_question("Q one", [GOLD_B]))
    assert json.loads(qa_path(index).read_text(encoding="utf-8"))[0]["question_decomposition"] == [
        {"question": "hop 1"}]


def test_remove_by_id_or_by_words(index: Path) -> None:
    a, _ = save_question(index, new_question("Question A", [GOLD_A]))
    save_question(index, new_question("Question B", [GOLD_B]))
    save_question(index, new_question("Question C", [GOLD_B]))
    assert remove_question(index, a.id).question == "Question A"
    assert remove_question(index, "question b?").question == "Question B"
    assert [q.question for q in load_own_qa(index)] == ["Question C"]
    with pytest.raises(QASetError, match="no question with the id or words 'Question A'"):
        remove_question(index, "Question A")


def test_the_id_follows_the_words_not_their_case_or_spacing() -> None:
    assert question_id("Who  is X?") == question_id("who is x") != question_id("who is y")
    assert question_id("Who is X?").startswith("own__")


# -- bad input: one line, nothing lost ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("question", "gold", "message"), [
    ("   ", [GOLD_A], "the question is empty"),
    ("Where?", [], "no gold passage marked"),
    ("Where?", [GoldRef("", "  ")], "gold passage 1 has neither a title nor a text"),
])
def test_a_bad_question_is_refused_in_one_line(question: str, gold: list[GoldRef], message: str) -> None:
    with pytest.raises(QASetError, match=message) as err:
        new_question(question, gold)
    assert "\n" not in str(err.value)


def test_an_unknown_index_is_named(tmp_path: Path) -> None:
    q = new_question("Q", [GOLD_A])
    with pytest.raises(QASetError, match="no such index folder"):
        save_question(tmp_path / "nowhere", q)
    (tmp_path / "plain").mkdir()
    with pytest.raises(QASetError, match=r"not an index folder \(no manifest.json\)"):
        save_question(tmp_path / "plain", q)


@pytest.mark.parametrize(("content", "message"), [
    ("[{\"question\": \"Q\", ", r"invalid JSON at line 1"),
    ("{\"question\": \"Q\"}", "expected a list of questions, found dict"),
    ("[{\"question\": \"Q\"}]", r"record 0 \('Q'\): field 'paragraphs' must be a non-empty list"),
    ("[{\"paragraphs\": []}]", "record 0: field 'question' missing or not text"),
    ("[{\"question\": \"Q\", \"answer\": 3, \"paragraphs\": [{\"title\": \"t\", \"paragraph_text\": \"x\"}]}]",
     r"record 0 \('Q'\): field 'answer' must be text"),
    ("[{\"question\": \"Q\", \"paragraphs\": [{\"title\": \"t\", \"paragraph_text\": \"x\", \"passage_id\": \"7\"}]}]",
     r"paragraphs\[0\]: 'passage_id' must be a whole number"),
])
def test_a_file_that_does_not_parse_is_named_and_never_overwritten(index: Path, content: str, message: str) -> None:
    qa_path(index).write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):  # QASetError is one
        load_own_qa(index)
    for change in (lambda: save_question(index, new_question("New", [GOLD_A])),
                   lambda: remove_question(index, "Q")):
        with pytest.raises(QASetError, match="nothing was changed") as err:
            change()
        assert str(qa_path(index)) in str(err.value) and "\n" not in str(err.value)
    assert qa_path(index).read_text(encoding="utf-8") == content  # what was there is still there


def test_no_file_yet_is_an_empty_set(index: Path) -> None:
    assert load_own_qa(index) == []


# -- concurrent saves ----------------------------------------------------------------------------------------------
def test_concurrent_saves_from_threads_all_land(index: Path) -> None:
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def saver(n: int) -> None:
        try:
            barrier.wait()
            for m in range(5):
                save_question(index, new_question(f"thread {n} question {m}", [GOLD_A if m % 2 else GOLD_B]))
                save_question(index, new_question("the shared one", [GOLD_A], [f"answer {n}"]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=saver, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    questions = load_own_qa(index)
    assert sorted(q.question for q in questions) == sorted(
        [f"thread {n} question {m}" for n in range(8) for m in range(5)] + ["the shared one"])
    assert len({q.id for q in questions}) == len(questions) == 41  # the shared question is one record


SAVER = """
import sys
from pathlib import Path
from gear.data.qa_set import GoldRef, new_question, save_question
index, who = Path(sys.argv[1]), sys.argv[2]
for m in range(15):
    save_question(index, new_question(f"process {who} question {m}", [GoldRef("T", f"text {m}", m)]))
"""


def test_concurrent_saves_from_processes_all_land(index: Path) -> None:
    save_question(index, new_question("saved before", [GOLD_A]))
    procs = [subprocess.Popen([sys.executable, "-c", SAVER, str(index), str(n)], cwd=ROOT) for n in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    questions = {q.question for q in load_own_qa(index)}
    assert questions == {"saved before"} | {f"process {n} question {m}" for n in range(3) for m in range(15)}


def test_rebuilding_the_index_keeps_the_own_qa_set_and_a_save_made_meanwhile(index: Path) -> None:
    save_question(index, new_question("saved before the rebuild", [GOLD_A]))

    def write(tmp: Path) -> None:
        tmp.mkdir()
        (tmp / "manifest.json").write_text("{\"rebuilt\": true}", encoding="utf-8")
        # a person saves while the new index is being written (another session)
        save_question(index, new_question("saved during the rebuild", [GOLD_B]))

    atomic_directory(index, write, keep=(QA_FILE,))
    assert json.loads((index / "manifest.json").read_text(encoding="utf-8")) == {"rebuilt": True}
    assert [q.question for q in load_own_qa(index)] == ["saved before the rebuild", "saved during the rebuild"]


def test_build_index_keeps_the_own_qa_set(tiny_index: Path, tiny_docs, tiny_triples, fake_encoder) -> None:
    from gear.index import build_index

    save_question(tiny_index, new_question("Who played for Michigan State?", [GOLD_A]))
    build_index(tiny_docs[:3], tiny_triples[:3], tiny_index, fake_encoder)
    assert [q.question for q in load_own_qa(tiny_index)] == ["Who played for Michigan State?"]


def test_a_save_waiting_for_the_lock_while_the_index_is_swapped_lands_in_the_new_index(index: Path) -> None:
    """What a rebuild does under the lock (gear.files.atomic_directory): the folder is swapped for a new one. A save
    that waited for the lock meanwhile takes the new folder's lock and writes there, not into the folder swapped
    away (which is deleted)."""
    from gear.files import directory_lock

    save_question(index, new_question("saved before", [GOLD_A]))
    old = index.with_name("old")
    errors: list[BaseException] = []

    def save() -> None:
        try:
            save_question(index, new_question("saved while swapping", [GOLD_B]))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with directory_lock(index):
        waiting = threading.Thread(target=save)
        waiting.start()
        waiting.join(0.3)  # it waits for the lock (the swap below happens while it does, or before it starts)
        index.rename(old)
        index.mkdir()
        (index / "manifest.json").write_text("{}", encoding="utf-8")
        (index / QA_FILE).write_bytes((old / QA_FILE).read_bytes())  # what atomic_directory(keep=…) carries over
    waiting.join()
    assert not errors
    assert [q.question for q in load_own_qa(index)] == ["saved before", "saved while swapping"]
    assert [q.question for q in load_own_qa(old)] == ["saved before"]
    assert not (index / ".lock").exists()  # no lock file outlives its writer (the old folder's goes with it)
