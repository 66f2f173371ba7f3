"""An own corpus of text files as a new user brings it: each file titled by its name as words,
the file kept as the passage's source in the index's manifest; which files are cut into several passages, said
before Build; and the time left estimated from the model's known pace before the run has measured its own."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from gear.data.corpus import Document
from gear.data.text_files import load_any_corpus, source_files, title_of_file
from gear.extract.progress import Pace
from gear.index import build_index
from studio.core.safe import esc_md
from studio.pages.index_uploads import cut_files_note, title_rule
from tests.conftest import FakeEncoder
from tests.unit.test_extract_progress import Clock

LONG = " ".join(f"Sentence {n} is about The Red House." for n in range(30))  # 210 words: two passages


@pytest.mark.parametrize(("name", "title"), [
    ("The_Red_House.txt", "The Red House"), ("Mark_Haddon.md", "Mark Haddon"), ("notes.txt", "notes"),
    ("Jean-Paul_Sartre.txt", "Jean-Paul Sartre"), ("__draft__.txt", "draft"), ("___.txt", "___"),
    ("two  spaces_ here.txt", "two spaces here")])
def test_a_text_files_title_is_its_name_as_words(name: str, title: str) -> None:
    assert title_of_file(name) == title


def test_the_index_keeps_each_titles_files(tmp_path: Path) -> None:
    folder = tmp_path / "books"
    folder.mkdir()
    (folder / "The_Red_House.txt").write_text(LONG, encoding="utf-8")
    (folder / "Mark_Haddon.txt").write_text("Mark Haddon wrote The Red House.", encoding="utf-8")
    docs, _ = load_any_corpus(folder)
    assert [d.title for d in docs] == ["Mark Haddon", "The Red House", "The Red House"]
    assert source_files(docs) == {"Mark Haddon": ["Mark_Haddon.txt"], "The Red House": ["The_Red_House.txt"]}
    assert source_files([Document("Sicily", "an island")]) == {}  # a JSON record's title is its own
    manifest = build_index(docs, [[] for _ in docs], tmp_path / "index", FakeEncoder())
    assert manifest.source["files"]["The Red House"] == ["The_Red_House.txt"]
    saved = json.loads((tmp_path / "index" / "manifest.json").read_text(encoding="utf-8"))
    assert saved["source"]["files"] == source_files(docs)


def upload(name: str, text: str | bytes) -> SimpleNamespace:
    data = text.encode() if isinstance(text, str) else text
    return SimpleNamespace(name=name, size=len(data), getvalue=lambda: data)


def test_the_files_cut_into_several_passages_are_named_with_why_before_build() -> None:
    files = [upload("The_Red_House.txt", LONG), upload("Mark_Haddon.txt", "Mark Haddon wrote it."),
             upload("corpus.json", json.dumps([{"title": "a", "text": LONG}])), upload("bad.txt", b"\xff\xfe")]
    note = cut_files_note(files)
    assert note.startswith(f"1 of 2 text files is cut into several passages: {esc_md('The_Red_House.txt')} → 2 "
                           "passages.")  # the unreadable one is left to the build's checks
    assert "at most ≈120 words" in note and "3 passages from these 2 files (1 kept whole)" in note
    assert cut_files_note(files[1:]) == ""  # nothing cut: nothing said
    assert "“The_Red_House.txt” → “The Red House”" in title_rule()


def test_no_time_left_is_said_until_the_run_has_measured_the_models_pace() -> None:
    """An assumed pace stayed "≈ 2 min left" for over two minutes on a busy machine: the first number comes from the
    model's pace measured on this run (its second passage: the first one also loads the model), said as such."""
    clock = Clock()
    pace = Pace(clock)
    first = pace.update(0, 21, 0)
    assert first.seconds_left is None and first.per_minute is None
    assert first.line() == "0 / 21 passages · measuring the pace… · 0 triples so far"
    clock.now = 150
    assert pace.again(every=0).line() == first.line()  # type: ignore[union-attr]
    clock.now = 160
    pace.update(1, 21, 3)
    clock.now = 166
    measured = pace.update(2, 21, 6)
    assert measured.per_minute == pytest.approx(10.0) and measured.seconds_left == pytest.approx(19 * 6.0)
    assert measured.line() == "2 / 21 passages · 10.0 passages/min · ≈ 2 min left · 6 triples so far"


def test_streamlits_upload_limit_is_the_apps_largest() -> None:
    """The server refuses what no uploader would read; each uploader's own caption says its limit (max_upload_size):
    "25MB per file" under "Corpus (at most 25 MB in all)", not Streamlit's default 500 MB."""
    import tomllib

    from studio.pages.index_uploads import LIMITS

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == max(limit.mb for limit in LIMITS.values())
