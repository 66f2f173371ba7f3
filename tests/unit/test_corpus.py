"""Corpus, QA and OpenIE loaders on tiny fixtures of every schema, and every error path."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.data.corpus import Document, LoadReport, load_corpus, unique_documents
from gear.data.openie import align_openie, load_openie
from gear.data.questions import load_qa
from gear.data.reading import InputError, read_json

FIX = Path(__file__).resolve().parent.parent / "fixtures"


# corpus -------------------------------------------------------------------------------------------------------------
def test_hipporag_corpus_list() -> None:
    docs, report = load_corpus(FIX / "corpus_hipporag.json")
    assert docs == [
        Document("Magic Johnson", "Magic Johnson played basketball for Michigan State."),
        Document("Michigan State", "Michigan State won the national championship in 1979."),
        Document("Mount Etna", "Mount Etna is an active volcano."),  # paragraph_text accepted
        Document("Sicily", "Sicily is an island. It is large."),  # a list of sentences is joined
    ]
    assert len(report.warnings) == 3
    path = str(FIX / "corpus_hipporag.json")
    assert all(w.startswith(path + ": ") for w in report.warnings)
    assert "record 3 ('Empty')" in report.warnings[0] and "text" in report.warnings[0]
    assert "record 4 ('No text')" in report.warnings[1]
    assert "record 5" in report.warnings[2] and "str" in report.warnings[2]


def test_hotpotqa_corpus_dict() -> None:
    docs, report = load_corpus(FIX / "corpus_hotpotqa.json")
    assert docs == [
        Document("Paris", "Paris is the capital of France. It sits on the Seine."),
        Document("Seine", "The Seine flows into the English Channel."),
    ]
    assert len(report.warnings) == 1 and "record 2 ('Nothing')" in report.warnings[0]


def test_report_summary_limits_lines() -> None:
    report = LoadReport("f.json")
    for n in range(8):
        report.warn(f"w{n}")
    lines = report.summary(limit=3)
    assert lines[:3] == ["f.json: w0", "f.json: w1", "f.json: w2"]
    assert lines[3] == "f.json: … and 5 more warnings"


# QA -----------------------------------------------------------------------------------------------------------------
def test_musique_qa_with_is_supporting_and_aliases() -> None:
    questions, report = load_qa(FIX / "qa_musique.json")
    assert report.warnings == []
    q = questions[0]
    assert q.id == "2hop__13548_13529"
    assert q.question == "Who won the championship the year Magic played for Michigan State?"
    assert q.answers == ("Michigan State", "MSU", "Michigan State Spartans")
    assert q.gold == (("Magic Johnson", "Magic Johnson played basketball for Michigan State."),
                      ("Michigan State", "Michigan State won the national championship in 1979."))
    assert [x.hop_type for x in questions] == ["2hop", "3hop1"]


def test_hipporag_qa_with_context_gives_title_and_text() -> None:
    questions, report = load_qa(FIX / "qa_hipporag.json")
    [q] = questions
    assert q.id == "5a8b57f25542995d1e6f1371"
    assert q.answers == ("Seine",)
    # titles once each, in order of first support; text from the context
    assert q.gold == (("Paris", "Paris is the capital of France. It sits on the Seine."),
                      ("Seine", "The Seine flows into the English Channel."))
    assert q.hop_type == "all"
    assert report.warnings == []


def test_raw_hotpotqa_supporting_facts_titles_only() -> None:
    questions, report = load_qa(FIX / "qa_hotpotqa_raw.json")
    assert [q.id for q in questions] == ["raw1", "raw3"]
    assert questions[0].gold == (("Seine", None),)
    assert questions[1].answers == ("a", "b")
    assert questions[1].gold == ()
    joined = "\n".join(report.warnings)
    assert "record 1 (id raw2): field 'question' missing or empty" in joined
    assert "record 2 (id raw3): no 'paragraphs' or 'supporting_facts'" in joined


def test_gold_matching_by_key_then_title(make_encoder) -> None:
    from gear.store.memory import MemoryBackend

    enc = make_encoder()
    backend = MemoryBackend.build(["Paris", "Paris", "Seine", "Etna"], ["P1", "P2", "S", "E"], [], [],
                                  embedder=enc.name, encode=enc.encode_cached)
    assert backend.find_passage("Paris", "P2") == 1  # exact (title, text): MuSiQue reuses titles
    assert backend.find_passage("Seine", None) == 2  # title only, and the title is unique
    assert backend.find_passage("Paris", None) is None  # title only but ambiguous: no guess
    assert backend.find_passage("Etna", " E ") == 3  # surrounding whitespace in the QA file
    assert backend.find_passage("Gone", "x") is None


def test_unique_documents_drops_exact_duplicates() -> None:
    report = LoadReport("c.json")
    docs = [Document("A", "x"), Document("A", "y"), Document("A", "x")]
    assert unique_documents(docs, report) == [Document("A", "x"), Document("A", "y")]
    assert report.warnings == ["c.json: duplicate passage 'A' skipped"]


# OpenIE -------------------------------------------------------------------------------------------------------------
def test_openie_docs_and_malformed_triples() -> None:
    docs, report = load_openie(FIX / "openie.json")
    assert [d.title for d in docs] == ["Magic Johnson", "Michigan State"]
    assert docs[0].triples == (("Magic Johnson", "played for", "Michigan State"),
                               ("Magic Johnson", "born in", "1959"))
    assert docs[0].entities == ("Magic Johnson", "Michigan State")
    assert docs[1].text == "Michigan State won the national championship in 1979."  # from "passage"
    assert docs[1].triples == (("Michigan State", "won", "national championship"),)
    joined = "\n".join(report.warnings)
    assert "docs[0].extracted_triples[2]" in joined
    assert "docs[0].extracted_triples[3]" in joined
    assert "docs[1].extracted_triples[1]" in joined
    assert "docs[2]: field 'text' missing or empty" in joined
    assert "docs[3] ('Bad triples'): field 'extracted_triples' is not a list" in joined
    assert len(report.warnings) == 5


def test_openie_counts_drops_beyond_twenty(tmp_path: Path) -> None:
    path = tmp_path / "oie.json"
    path.write_text('{"docs": [{"title": "t", "text": "x", "extracted_triples": ' + "[" +
                    ",".join(['["a", "b"]'] * 25) + "]}]}", encoding="utf-8")
    docs, report = load_openie(path)
    assert docs[0].triples == ()
    assert len(report.warnings) == 21
    assert report.warnings[-1].endswith("25 malformed triples dropped in all")


def test_align_openie_by_key_then_text() -> None:
    oie, _ = load_openie(FIX / "openie.json")
    docs = [Document("Magic Johnson", "Magic Johnson played basketball for Michigan State."),
            Document("Renamed", "Michigan State won the national championship in 1979. "),
            Document("Other", "No record.")]
    report = LoadReport("c")
    triples = align_openie(docs, oie, report)
    assert triples[0] == list(oie[0].triples)
    assert triples[1] == [("Michigan State", "won", "national championship")]
    assert triples[2] == []
    assert report.warnings == ["c: 1 of 3 passages have no OpenIE record and get no triples"]


# errors -------------------------------------------------------------------------------------------------------------
LOADERS = [load_corpus, load_qa, load_openie]


@pytest.mark.parametrize("loader", LOADERS)
def test_missing_file(loader, tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(InputError) as err:
        loader(path)
    assert str(err.value) == f"{path}: file not found"


@pytest.mark.parametrize("loader", LOADERS)
def test_directory(loader, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory") as err:
        loader(tmp_path)
    assert str(tmp_path) in str(err.value)


@pytest.mark.parametrize("loader", LOADERS)
def test_invalid_json_names_line_and_column(loader, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n  {"title": "a",\n   "text": oops}\n]', encoding="utf-8")
    with pytest.raises(InputError) as err:
        loader(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: invalid JSON at line 3, column 12")


@pytest.mark.parametrize("loader", LOADERS)
def test_empty_file(loader, tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text("", encoding="utf-8")
    with pytest.raises(InputError) as err:
        loader(path)
    assert str(err.value) == f"{path}: the file is empty"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.json"
    path.write_bytes(b'["caf\xe9"]')
    with pytest.raises(InputError, match="not UTF-8") as err:
        read_json(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize(("loader", "content", "needle"), [
    (load_corpus, "42", "JSON of another shape (a number); a corpus is a list of {title, text}"),
    (load_corpus, '"text"', "JSON of another shape (a string); a corpus is a list of {title, text}"),
    (load_qa, '{"id": 1}', "expected a list of questions, got an object with keys 'id'"),
    (load_openie, '{"documents": []}', "expected an object with a 'docs' list"),
    (load_openie, "3", "expected an object with a 'docs' list"),
])
def test_wrong_top_level_type(loader, content: str, needle: str, tmp_path: Path) -> None:
    path = tmp_path / "wrong.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        loader(path)
    assert str(path) in str(err.value) and needle in str(err.value)


@pytest.mark.parametrize(("loader", "content", "needle"), [
    (load_corpus, "[]", "no passage with text, so nothing to index — it holds no records"),
    (load_corpus, '[{"title": "a"}]',
     "no passage with text, so nothing to index — record 0 ('a'): field 'text' missing, skipped"),
    (load_corpus, "{}", "no passage with text, so nothing to index — it holds no records"),
    (load_qa, "[]", "no questions found"),
    (load_qa, '[{"id": "x"}]', "no questions found — record 0 (id x): field 'question' missing or empty, skipped."),
])
def test_nothing_usable_is_an_error(loader, content: str, needle: str, tmp_path: Path) -> None:
    path = tmp_path / "none.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        loader(path)
    assert str(err.value) == f"{path}: {needle}"


def test_corpus_record_with_non_string_title_is_skipped_with_warning(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('[{"title": 5, "text": "x"}, {"title": "ok", "text": "y"}]', encoding="utf-8")
    docs, report = load_corpus(path)
    assert docs == [Document("ok", "y")]
    assert report.warnings == [f"{path}: record 0: field 'title' is not a string, skipped"]
