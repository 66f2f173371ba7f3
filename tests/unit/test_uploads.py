"""Bad uploads explain themselves in the person's words: each input below is refused — or built,
with a warning — by the same check the Index page runs (studio.pages.index_uploads.check_uploads), and the message is
pinned word for word: the upload's own name, the full reason, and the formats it could have been in. The last tests run
the page itself: the status box shows the failure, the formats are drawn, nothing is written."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from gear.data.reading import CORPUS_FORMATS, OPENIE_FORMATS, QA_FORMATS, InputError
from studio.core.safe import WORD_JOINER
from studio.pages.index_uploads import MB, check_uploads
from tests.unit.test_app import start, studio  # noqa: F401

CORPUS = [{"title": "Bremen Cathedral", "text": "Bremen Cathedral is dedicated to St. Peter."},
          {"title": "St. Peter's Basilica", "text": "St. Peter's Basilica stands in Vatican City."},
          {"title": "Vatican City", "text": "Vatican City became a country in 1929."}]
OPENIE = {"docs": [{"title": d["title"], "text": d["text"],
                    "extracted_triples": [[d["title"], "mentioned in", "the walk-through"]]} for d in CORPUS]}


@dataclass
class Upload:
    """What Streamlit hands the page for an uploaded file."""

    name: str
    data: bytes
    size_override: int | None = None

    @property
    def size(self) -> int:
        return self.size_override if self.size_override is not None else len(self.data)

    def getvalue(self) -> bytes:
        if self.size_override is not None:
            raise AssertionError("a file over the limit is refused before it is read")
        return self.data


def js(name: str, value: object) -> Upload:
    return Upload(name, json.dumps(value).encode())


def refused(tmp_path: Path, corpus: list[Upload], openie: Upload | None = None, qa: Upload | None = None
            ) -> InputError:
    with pytest.raises(InputError) as err:
        check_uploads(tmp_path, corpus, openie, qa)
    assert str(tmp_path) not in str(err.value)  # the upload's own name, never its temporary copy's path
    return err.value


# the table of the closing note: input → the message the page shows under "Not built: FILE needs fixing"
REFUSALS = [
    ("an empty file", [Upload("empty.json", b"")], None, None,
     "empty.json: the file is empty", CORPUS_FORMATS),
    ("binary data", [Upload("photo.json", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")], None, None,
     "photo.json: not a text file (binary data: a NUL byte at byte 8); expected UTF-8 text", CORPUS_FORMATS),
    ("Latin-1 text", [Upload("notes.txt", "Le café de Brême.\n".encode("latin-1"))], None, None,
     "notes.txt: not UTF-8 text: byte 0xe9 at byte 6 (line 1) is not UTF-8 (invalid continuation byte); save the "
     "file as UTF-8 and upload it again", CORPUS_FORMATS),
    ("UTF-16 text", [Upload("notes.txt", "Bremen Cathedral.\n".encode("utf-16"))], None, None,
     "notes.txt: is UTF-16 text; save it as UTF-8 and upload it again", CORPUS_FORMATS),
    ("a 50 MB corpus", [Upload("big.json", b"", 50 * MB)], None, None,
     "big.json: 50.0 MB; the app builds an index from at most 25 MB of corpus (about 49,000 passages of "
     "MuSiQue's size). Build a larger one on the command line, which resumes where it stopped (`gear index CORPUS "
     "--openie OPENIE.json --out {indexes}/NAME`): it then appears in every page's Index list.", CORPUS_FORMATS),
    ("a corpus of one empty passage", [js("one.json", [{"title": "Bremen Cathedral", "text": ""}])], None, None,
     "one.json: no passage with text, so nothing to index — record 0 ('Bremen Cathedral'): field 'text' empty, "
     "skipped", CORPUS_FORMATS),
    ("broken JSON", [Upload("broken_corpus.json",
                            b'[{"title": "Bremen Cathedral",\n  "text": "dedicated to St. Peter.}]\n')], None, None,
     "broken_corpus.json: invalid JSON at line 2, column 37 near “…t\": \"dedicated to St. Peter.}]”: a string "
     "runs on past the end of its line (a missing \"?) or holds a raw control character (write a line break as \\n) "
     "(the parser says: Invalid control character at)", CORPUS_FORMATS),
    ("an unclosed list", [Upload("cut.json", b'[{"title": "a", "text": "b"},')], None, None,
     "cut.json: invalid JSON at line 1, column 30 near “[{\"title\": \"a\", \"text\": \"b\"},”: a value is "
     "missing or is not JSON (a trailing comma, a single-quoted string or an unquoted word?) (the parser says: "
     "Expecting value)",
     CORPUS_FORMATS),
    ("valid JSON of the wrong shape", [js("export.json", {"data": CORPUS, "version": "1.0"})], None, None,
     "export.json: JSON of another shape (an object with keys 'data', 'version'); a corpus is a list of {title, "
     "text} records or a {title: [sentences]} object. Its 'data' holds a list of 3 objects: if those are the "
     "passages, upload that list alone.", CORPUS_FORMATS),
    ("a list of strings", [js("lines.json", ["Bremen Cathedral is dedicated to St. Peter."])], None, None,
     "lines.json: JSON of another shape (a list of 1 string); a corpus is a list of {title, text} records or a "
     "{title: [sentences]} object.", CORPUS_FORMATS),
    ("a QA set uploaded as the corpus", [js("dev.json", [{"id": "q", "question": "Who?", "paragraphs": []}])],
     None, None,
     "dev.json: JSON of another shape (a list of 1 object); a corpus is a list of {title, text} records or a "
     "{title: [sentences]} object. It looks like a QA set (its records have a 'question'): upload it as the QA set.",
     CORPUS_FORMATS),
    ("an OpenIE file for another corpus", [js("corpus.json", CORPUS)],
     js("openie_other.json", {"docs": [{"title": "Paris", "text": "Paris is the capital of France.",
                                        "extracted_triples": [["Paris", "capital of", "France"]]}]}), None,
     "openie_other.json: none of its 1 records matches a passage of the corpus (by title and text; its first is "
     "'Paris'): it was made for another corpus. Upload the OpenIE file made from this corpus, or none (the LLM then "
     "extracts the triples)", OPENIE_FORMATS),
    ("a QA file whose gold names no passage", [js("corpus.json", CORPUS)], js("openie.json", OPENIE),
     js("qa.json", [{"id": "2hop__1", "question": "Which sea is Sicily in?", "answer": "Mediterranean Sea",
                     "paragraphs": [{"title": "Sicily", "paragraph_text": "Sicily is an island.",
                                     "is_supporting": True}]}]),
     "qa.json: none of its 1 questions has a gold passage in the corpus (question 2hop__1's gold passage 'Sicily' "
     "is not among its passages, matched by title and text): is it the QA set of another corpus?", QA_FORMATS),
    ("a QA file that is not a list", [js("corpus.json", CORPUS)], js("openie.json", OPENIE),
     js("qa.json", {"docs": []}),
     "qa.json: expected a list of questions, got an object with keys 'docs'. It looks like an OpenIE file (it has a "
     "'docs' list).", QA_FORMATS),
    ("several files, one broken", [js("part1.json", CORPUS[:2]), Upload("part2.json", b"[{")], None, None,
     "part2.json: invalid JSON at line 1, column 3 near “[{”: a key is not in double quotes, or a comma is left "
     "before a closing } (the parser says: Expecting property name enclosed in double quotes)", CORPUS_FORMATS),
]


@pytest.mark.parametrize(("case", "corpus", "openie", "qa", "message", "formats"), REFUSALS,
                         ids=[case[0] for case in REFUSALS])
def test_a_bad_upload_is_refused_with_its_reason_in_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str,
                                                         corpus, openie, qa, message: str, formats) -> None:
    monkeypatch.setenv("GEAR_STUDIO_DATA", str(tmp_path / "data"))
    from studio.core import paths

    err = refused(tmp_path / "copies", corpus, openie, qa)
    assert str(err) == message.replace("{indexes}", paths.shown(paths.indexes_dir()))
    assert err.formats == formats  # shown under the message, each with its two-line example
    assert all(f.example.count("\n") == 1 for f in err.formats)


def test_several_json_files_are_one_corpus(tmp_path: Path) -> None:
    upload = check_uploads(tmp_path, [js("part1.json", CORPUS[:2]), js("part2.json", CORPUS[2:]),
                                      Upload("notes.md", b"# Notes\n\nThe walk-through asks about Bremen.\n")],
                           js("openie.json", OPENIE), None)
    assert [d.title for d in upload.docs] == [d["title"] for d in CORPUS] + ["notes"]
    assert upload.triples is not None and [len(t) for t in upload.triples] == [1, 1, 1, 0]
    assert upload.report.warnings == ["openie.json: 1 of 4 passages have no OpenIE record and get no triples"]


def test_duplicate_titles_build_with_a_warning_that_says_what_it_costs(tmp_path: Path) -> None:
    dup = [{"title": "Bremen", "text": "Bremen is a city."}, {"title": "Bremen", "text": "Bremen has a cathedral."},
           {"title": "Bremen", "text": "Bremen is a city."}]
    upload = check_uploads(tmp_path, [js("dup.json", dup)], None, None)
    assert [d.text for d in upload.docs] == ["Bremen is a city.", "Bremen has a cathedral."]
    assert upload.report.warnings == [
        "dup.json: 1 title is shared by different passages (e.g. 'Bremen' ×2): gold passages named by title alone "
        "(HotpotQA, 2Wiki QA sets) cannot be told apart; QA sets that give the text (MuSiQue, HippoRAG) can",
        "dup.json: duplicate passage 'Bremen' skipped"]


def test_a_qa_set_with_some_gold_outside_the_corpus_is_kept_with_a_warning(tmp_path: Path) -> None:
    qa = [{"id": "1", "question": "Which saint?", "paragraphs": [
        {"title": CORPUS[0]["title"], "paragraph_text": CORPUS[0]["text"], "is_supporting": True}]},
          {"id": "2", "question": "Which sea?", "paragraphs": [
              {"title": "Sicily", "paragraph_text": "Sicily is an island.", "is_supporting": True}]}]
    upload = check_uploads(tmp_path, [js("corpus.json", CORPUS)], js("openie.json", OPENIE), js("qa.json", qa))
    assert upload.questions == 1
    assert upload.report.warnings == [
        "qa.json: 1 of 2 questions have no gold passage in the corpus: their recall is not measured"]


# -- the page --------------------------------------------------------------------------------------------------------
def build_on_page(studio: dict, name: str, corpus: list[Upload], openie: Upload | None = None):  # noqa: F811
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    at.text_input(key="ix_name").input(name).run()
    at.file_uploader(key="ix_corpus").set_value([(u.name, u.data, "application/json") for u in corpus]).run()
    if openie is not None:
        at.file_uploader(key="ix_openie").set_value((openie.name, openie.data, "application/json")).run()
    at.button(key="ix_build").click().run()
    assert not at.exception
    return at


def as_read(markdown: object) -> str:
    """What a reader sees of a label or message that names a file: its Markdown source escaped
    (studio.core.safe.esc_md)."""
    return html.unescape(str(markdown)).replace(WORD_JOINER, "")


def statuses(at) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []

    def walk(node) -> None:
        if type(node).__name__ == "Status":
            found.append((as_read(node.label), node.proto.expandable.type if hasattr(node.proto, "expandable") else ""))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return found


def test_the_page_shows_a_refusal_in_the_status_box_with_the_formats(studio: dict) -> None:  # noqa: F811
    broken = Upload("broken_corpus.json", b'[{"title": "Bremen Cathedral",\n  "text": "dedicated to St. Peter.}]\n')
    at = build_on_page(studio, "broken", [broken])
    assert [label for label, _ in statuses(at)] == ["Not built: broken_corpus.json needs fixing"]
    errors = [as_read(e.value) for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("broken_corpus.json: invalid JSON at line 2, column 37")
    assert "/tmp" not in errors[0] and errors[0].endswith("(the parser says: Invalid control character at)")
    shown = [c.value for c in at.code]
    assert all(f.example in shown for f in CORPUS_FORMATS)  # each format's two-line example, under the message
    assert not (studio["data"] / "indexes" / "broken").exists()


def test_two_json_files_build_one_index_on_the_page(studio: dict, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from gear.config import Settings
    from studio.core import resources
    from tests.conftest import FakeEncoder

    monkeypatch.setitem(resources.ENCODER_FACTORIES, Settings().embedder, FakeEncoder)
    at = build_on_page(studio, "two", [js("part1.json", CORPUS[:2]), js("part2.json", CORPUS[2:])],
                       js("openie.json", OPENIE))
    assert [label for label, _ in statuses(at)] == ["Built two: 3 passages, 3 triples"]
    assert any("3 passages read from 2 files · 3 triples from openie.json" in str(m.value) for m in at.markdown)


def test_an_existing_index_is_replaced_only_when_asked(studio: dict) -> None:  # noqa: F811
    at = start(studio)
    at.switch_page("app_pages/index.py").run()
    at.text_input(key="ix_name").input("tiny").run()  # the fixture's index
    at.file_uploader(key="ix_corpus").set_value([("c.json", json.dumps(CORPUS).encode(), "application/json")]).run()
    assert at.button(key="ix_build").disabled
    at.checkbox(key="ix_replace").check().run()
    assert not at.button(key="ix_build").disabled


@pytest.mark.parametrize("fmt", [*CORPUS_FORMATS, *QA_FORMATS, *OPENIE_FORMATS], ids=lambda f: f.name.split(" (")[0])
def test_every_format_example_is_two_lines_that_fit_and_parse(fmt) -> None:
    lines = fmt.example.splitlines()
    assert len(lines) == 2 and max(map(len, lines)) <= 90  # beside a refusal, at 1280 px, without a scroll bar
    if fmt.example.startswith(("[", "{")):
        json.loads(fmt.example.replace("…", "and so on"))  # an example one can copy and fill in


def test_an_empty_text_file_among_others_is_skipped_and_said(tmp_path: Path) -> None:
    upload = check_uploads(tmp_path, [Upload("notes.md", b"Bremen Cathedral is dedicated to St. Peter.\n"),
                                      Upload("blank.txt", b"  \n\n")], None, None)
    assert [d.title for d in upload.docs] == ["notes"]
    assert upload.report.warnings == ["blank.txt: empty, skipped"]
    err = refused(tmp_path / "again", [Upload("blank.txt", b"\n"), Upload("none.md", b"")])
    assert str(err) == "blank.txt, none.md: no passage with text, so nothing to index — every file is empty"
