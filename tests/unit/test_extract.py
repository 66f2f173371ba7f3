"""Offline extraction without a model: prompt/messages, cleaning, the journal (resume, torn lines), the runner
(reuse, duplicates, failures, concurrency), the `gear index` bridge, incremental updates and OpenIE export."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gear.cli import app
from gear.data.corpus import Document
from gear.data.openie import load_openie
from gear.data.reading import InputError
from gear.data.text_files import load_any_corpus
from gear.extract.bridge import ExtractOptions, cost_estimate, default_work_dir, extract_for_index
from gear.extract.outputs import DEMO_ENTITIES, DEMO_TRIPLES
from gear.extract.runner import (
    JOURNAL,
    ExtractionConfig,
    Journal,
    Record,
    extract_passages,
    extraction_messages,
    extraction_schema,
    parse_extraction,
    passage_key,
)
from gear.index import Manifest, build_index
from gear.index.update import add_passages, parse_ids, remove_passages, saved_passages
from gear.llm.base import LLMError, LLMResult, Message
from gear.prompts import extraction_prompt
from tests.scripted_llm import passage_title


class ScriptedLLM:
    """Answers each passage with triples made from its title; counts calls; can fail on chosen titles."""

    def __init__(self, model: str = "scripted", fail: set[str] | None = None) -> None:
        self.model = model
        self.calls: list[str] = []
        self.fail = fail or set()
        self._lock = threading.Lock()

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text=None) -> LLMResult:
        title = passage_title(messages)
        with self._lock:
            self.calls.append(title)
        if title in self.fail:
            raise LLMError(f"scripted failure for {title}")
        answer = {
            "named_entities": [title, "Earth"],
            "triples": [[title, "located on", "Earth"], [title, "located on", "Earth"], [title, "", "x"],
                        [title, "name", title]],
        }
        return LLMResult(json.dumps(answer), prompt_tokens=100, completion_tokens=20, seconds=0.01, model=self.model)


PASSAGES = [(f"Place {i}", f"Place {i} is a place on Earth number {i}.") for i in range(6)]


def test_messages_use_the_papers_prompt_with_a_json_one_shot() -> None:
    paper = extraction_messages("Bremen Cathedral", "text", "paper")
    assert paper == [{"role": "user", "content": extraction_prompt("Bremen Cathedral", "text")}]
    one_shot = extraction_messages("Bremen Cathedral", "text")
    assert [m["role"] for m in one_shot] == ["user", "assistant", "user"]
    assert one_shot[-1] == paper[0]
    assert "Magic Johnson" in one_shot[0]["content"]
    assert json.loads(one_shot[1]["content"]) == {"named_entities": DEMO_ENTITIES,
                                                  "triples": [list(t) for t in DEMO_TRIPLES]}
    schema = extraction_schema(7)
    assert schema["properties"]["triples"]["maxItems"] == 7
    assert schema["properties"]["triples"]["items"]["minItems"] == 3


def test_passage_key_changes_with_model_prompt_style_and_text() -> None:
    base = ExtractionConfig()
    key = passage_key("m", "t", "x", base)
    assert key == passage_key("m", "t", "x", ExtractionConfig(concurrency=8))  # how it runs does not matter
    others = {
        passage_key("m2", "t", "x", base),
        passage_key("m", "t", "y", base),
        passage_key("m", "t2", "x", base),
        passage_key("m", "t", "x", ExtractionConfig(style="paper")),
        passage_key("m", "t", "x", ExtractionConfig(use_schema=False)),
        passage_key("m", "t", "x", ExtractionConfig(max_triples=5)),
    }
    assert key not in others and len(others) == 6


def test_the_papers_answer_keeps_the_journal_keys_written_before_the_shapes() -> None:
    """sha256 computed by the extraction of 2026-11-25 (gear-triple-extraction/1, one-shot, its schema): journals
    written then are still read; every other shape has keys of its own."""
    joint = ExtractionConfig(output="joint")
    assert passage_key("m", "t", "x", joint) == "0444b7f5696cb57a7f13ee5ed16b2343d4ab1234a5154e3daa2886862de661b7"
    keys = {passage_key("m", "t", "x", ExtractionConfig(output=o)) for o in ("joint", "triples", "grouped")}
    assert len(keys) == 3


def test_parse_extraction_drops_and_counts() -> None:
    text = json.dumps({
        "named_entities": ["Bremen Cathedral", "St. Peter"],
        "triples": [["Bremen Cathedral", "dedicated to", "St. Peter"],
                    ["bremen cathedral", "Dedicated to", "st. peter"], ["a", "b"], ["x" * 300, "p", "o"],
                    ["Moon", "made of", "cheese"], [1, "is", "one"]],
    })
    triples, entities, stats, _ = parse_extraction(text, "Bremen Cathedral", "dedicated to St. Peter.")
    assert entities == ["Bremen Cathedral", "St. Peter"]
    assert triples == [("Bremen Cathedral", "dedicated to", "St. Peter"), ("Moon", "made of", "cheese"),
                       ("1", "is", "one")]
    assert (stats.malformed, stats.duplicates, stats.too_long) == (1, 1, 1)
    grounded, _, stats, _ = parse_extraction(text, "Bremen Cathedral", "dedicated to St. Peter.", require_grounded=True)
    assert ("Moon", "made of", "cheese") not in grounded and stats.ungrounded == 2


def test_parse_extraction_reads_the_papers_tuple_style() -> None:
    text = '{"named_entities": ["A"]}\n{\n "triples": [\n ("A", "knows", "B"),\n ("B", "knows", "C"),\n ]\n}'
    triples, entities, _, _ = parse_extraction(text)
    assert triples == [("A", "knows", "B"), ("B", "knows", "C")] and entities == ["A"]


def test_run_journals_every_passage_and_resume_makes_no_repeated_calls(tmp_path: Path) -> None:
    llm = ScriptedLLM()
    seen: list[int] = []
    first = extract_passages(PASSAGES[:3], llm, tmp_path, progress=lambda r, done, total: seen.append(done))
    assert llm.calls == ["Place 0", "Place 1", "Place 2"] and seen == [0, 1, 2, 3]
    assert first.triples[0] == [("Place 0", "located on", "Earth"), ("Place 0", "name", "Place 0")]
    assert first.dropped.duplicates == 3 and first.dropped.malformed == 3
    assert len((tmp_path / JOURNAL).read_text().splitlines()) == 3
    llm2 = ScriptedLLM()
    second = extract_passages(PASSAGES, llm2, tmp_path)
    assert llm2.calls == ["Place 3", "Place 4", "Place 5"]
    assert second.reused == 3 and second.calls == 3 and second.triples[:3] == first.triples
    info = second.info("scripted", ExtractionConfig())
    assert info["prompt_tokens"] == 600 and info["llm_calls_this_run"] == 3 and info["triples"] == 12


def test_a_different_model_or_prompt_style_invalidates_only_its_entries(tmp_path: Path) -> None:
    extract_passages(PASSAGES[:2], ScriptedLLM("m1"), tmp_path)
    other = ScriptedLLM("m2")
    extract_passages(PASSAGES[:2], other, tmp_path)
    assert len(other.calls) == 2
    again = ScriptedLLM("m1")
    extract_passages(PASSAGES[:2], again, tmp_path, ExtractionConfig(style="paper"))
    assert len(again.calls) == 2
    same = ScriptedLLM("m1")
    extract_passages(PASSAGES[:2], same, tmp_path)
    assert same.calls == []


def test_identical_passages_are_extracted_once(tmp_path: Path) -> None:
    llm = ScriptedLLM()
    result = extract_passages([PASSAGES[0], PASSAGES[1], PASSAGES[0]], llm, tmp_path)
    assert llm.calls == ["Place 0", "Place 1"] and result.triples[0] == result.triples[2]


def test_failures_are_counted_and_retried_next_run(tmp_path: Path) -> None:
    llm = ScriptedLLM(fail={"Place 1"})
    result = extract_passages(PASSAGES[:3], llm, tmp_path)
    assert result.failed == 1 and result.triples[1] == [] and "Place 1" in result.errors[0]
    retry = ScriptedLLM()
    result = extract_passages(PASSAGES[:3], retry, tmp_path)
    assert retry.calls == ["Place 1"] and result.failed == 0
    with pytest.raises(LLMError):
        extract_passages(PASSAGES[3:4], ScriptedLLM(fail={"Place 3"}), tmp_path, stop_on_error=True)


def test_concurrent_run_gives_the_same_triples(tmp_path: Path) -> None:
    sequential = extract_passages(PASSAGES, ScriptedLLM(), tmp_path / "a")
    llm = ScriptedLLM()
    parallel = extract_passages(PASSAGES, llm, tmp_path / "b", ExtractionConfig(concurrency=4))
    assert sorted(llm.calls) == [t for t, _ in PASSAGES]
    assert parallel.triples == sequential.triples


def test_journal_ignores_a_torn_last_line_and_corrupt_lines(tmp_path: Path) -> None:
    extract_passages(PASSAGES[:2], ScriptedLLM(), tmp_path)
    path = tmp_path / JOURNAL
    good = path.read_bytes()
    path.write_bytes(good + b'not json\n{"key": "half-writ')
    journal = Journal(tmp_path)
    assert len(journal.records) == 2 and journal.corrupt_lines == 1
    assert path.read_bytes() == good + b"not json\n"  # the torn tail is cut so the next append starts a fresh line
    llm = ScriptedLLM()
    extract_passages(PASSAGES[:3], llm, tmp_path)
    assert llm.calls == ["Place 2"]
    assert len(Journal(tmp_path).records) == 3


def test_record_round_trip() -> None:
    record = Record("k", "t", "x", "raw", [("a", "b", "c")], ["a"], 1, 2, 0.5, "m", {"malformed": 1})
    assert Record.from_json(record.to_json()) == record
    assert Record.from_json("[]") is None and Record.from_json('{"key": 1}') is None


def test_extract_for_index_and_cost_estimate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gear.config import Settings

    monkeypatch.chdir(tmp_path)
    docs = [Document(t, x) for t, x in PASSAGES[:2]]
    settings = Settings(llm="local")
    seen: list[tuple[int, int]] = []
    triples, info = extract_for_index(docs, settings, tmp_path / "idx", None, llm=ScriptedLLM(),
                                      progress=lambda result, done, total: seen.append((done, total)))
    assert seen == [(0, 2), (1, 2), (2, 2)]
    assert len(triples) == 2 and info["model"] == "scripted" and info["llm"] == "local"
    assert info["work_dir"] == str(default_work_dir(tmp_path / "idx")) == str(tmp_path / "idx.extract")
    prompt, completion, usd = cost_estimate(docs, ExtractionConfig(), 1.0, 2.0)
    assert prompt > 1000 and completion == 560 and usd == pytest.approx((prompt + 2 * completion) / 1e6)
    assert cost_estimate(docs, ExtractionConfig(output="triples"), None, None)[1] == 300  # the lean answer: fewer
    assert cost_estimate(docs, ExtractionConfig(), None, None)[2] is None
    with pytest.raises(InputError, match="re-run"):
        extract_for_index([*docs, Document("Bad", "x")], settings, tmp_path / "idx", None,
                          ExtractOptions(), llm=ScriptedLLM(fail={"Bad"}))


def _contents(index_dir: Path) -> tuple:
    titles, texts, spo, owner = saved_passages(index_dir)
    return titles, texts, spo, owner.tolist()


def test_add_and_remove_passages_reuse_saved_vectors(tmp_path: Path, tiny_docs, tiny_triples, make_encoder) -> None:
    out = tmp_path / "idx"
    build_index(tiny_docs[:5], tiny_triples[:5], out, make_encoder())
    before = np.load(out / "passage_vectors.npy")
    encoder = make_encoder()
    manifest, added = add_passages(out, tiny_docs[3:], tiny_triples[3:], encoder, source="more.json")
    assert added == 3 and manifest.n_passages == 8 and manifest.n_triples == 10
    assert sorted(encoder.encoded_texts) == sorted(
        [f"{d.title}\n{d.text}" for d in tiny_docs[5:]] + [" ".join(t) for ts in tiny_triples[5:] for t in ts])
    full = tmp_path / "full"
    build_index(tiny_docs, tiny_triples, full, make_encoder())
    assert _contents(out) == _contents(full)
    for name in ("passage_vectors.npy", "triple_vectors.npy", "triple_passage.npy", "entity_indptr.npy",
                 "entity_triples.npy", "triples_per_passage.npy"):
        np.testing.assert_allclose(np.load(out / name), np.load(full / name), atol=1e-6)
    np.testing.assert_array_equal(np.load(out / "passage_vectors.npy")[:5], before)
    assert Manifest.read(out).extraction["updates"][0]["op"] == "add"

    encoder = make_encoder()
    manifest, mapping = remove_passages(out, [1, 4], encoder)
    assert encoder.encoded_texts == []
    assert manifest.n_passages == 6 and mapping == {0: 0, 2: 1, 3: 2, 5: 3, 6: 4, 7: 5}
    keep = [0, 2, 3, 5, 6, 7]
    expect = tmp_path / "expect"
    build_index([tiny_docs[i] for i in keep], [tiny_triples[i] for i in keep], expect, make_encoder())
    assert _contents(out) == _contents(expect)
    np.testing.assert_array_equal(np.load(out / "triple_passage.npy"), np.load(expect / "triple_passage.npy"))
    with pytest.raises(Exception, match="no passage ids"):
        remove_passages(out, [99], make_encoder())


def test_parse_ids() -> None:
    assert parse_ids("3, 1,5-7,3") == [1, 3, 5, 6, 7]
    for bad in ("", "a", "5-3"):
        with pytest.raises(ValueError):
            parse_ids(bad)


def test_text_folder_loader_chunks_and_titles(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "Bremen.md").write_text("# Bremen\n\nBremen Cathedral is dedicated to St. Peter.\n", encoding="utf-8")
    (folder / "sub" / "Long.txt").write_text(" ".join(f"w{i}." for i in range(50)), encoding="utf-8")
    (folder / ".hidden.txt").write_text("secret", encoding="utf-8")
    (folder / "data.bin").write_bytes(b"\x00")
    docs, _ = load_any_corpus(folder, chunk_words=20)
    assert [d.title for d in docs] == ["Bremen", "Long", "Long", "Long"]
    assert docs[0].text == "# Bremen Bremen Cathedral is dedicated to St. Peter."
    docs, _ = load_any_corpus(folder / "Bremen.md")
    assert len(docs) == 1
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no \.txt"):
        load_any_corpus(tmp_path / "empty")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe\xfa")
    with pytest.raises(InputError, match="UTF-8"):
        load_any_corpus(tmp_path / "bad.txt")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, make_encoder) -> CliRunner:
    for name in ("GEAR_EMBEDDER", "GEAR_BACKEND", "GEAR_LLM", "GEAR_LLM_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("gear.embed.Encoder", lambda name, **_: make_encoder(name=name))
    llm = ScriptedLLM()
    monkeypatch.setattr("gear.extract.bridge.llm_from_settings", lambda settings: llm)
    runner = CliRunner()
    runner.llm = llm  # type: ignore[attr-defined]
    return runner


WIDE = {"COLUMNS": "400"}


def test_cli_index_extracts_resumes_adds_removes_and_exports(cli: CliRunner, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": t, "text": x} for t, x in PASSAGES[:4]]), encoding="utf-8")
    result = cli.invoke(app, ["index", str(corpus), "--out", "idx", "--price-in", "0.15", "--price-out", "0.6"],
                        env=WIDE)
    assert result.exit_code == 0, result.output
    assert "indexed 4 passages, 8 triples" in result.output and "$" in result.output
    assert len(cli.llm.calls) == 4  # type: ignore[attr-defined]
    result = cli.invoke(app, ["index", str(corpus), "--out", "idx"], env=WIDE)
    assert result.exit_code == 0 and "0 LLM calls, 4 passages reused" in result.output
    assert len(cli.llm.calls) == 4  # type: ignore[attr-defined]

    info = cli.invoke(app, ["info", "idx"], env=WIDE)
    assert "triples extracted by local model scripted" in info.output and "400 prompt + 80 completion" in info.output

    more = tmp_path / "more"
    more.mkdir()
    (more / "Place 9.txt").write_text("Place 9 is far away.", encoding="utf-8")
    result = cli.invoke(app, ["index", "--add", str(more), "idx"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "added 1 passages" in result.output and "new ones are 4..4" in result.output
    assert cli.llm.calls[-1] == "Place 9"  # type: ignore[attr-defined]

    result = cli.invoke(app, ["index", "--remove", "0", "idx"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "4 remaining passages were renumbered" in result.output

    result = cli.invoke(app, ["export-openie", "idx", "oie.json"], env=WIDE)
    assert result.exit_code == 0, result.output
    docs, report = load_openie(tmp_path / "oie.json")
    assert [d.title for d in docs] == ["Place 1", "Place 2", "Place 3", "Place 9"] and not report.warnings
    assert docs[0].entities == ("Place 1", "Earth")
    data = json.loads((tmp_path / "oie.json").read_text(encoding="utf-8"))
    assert set(data["docs"][0]) == {"title", "text", "passage", "extracted_entities", "extracted_triples"}

    result = cli.invoke(app, ["index", str(corpus), "--out", "again", "--openie", "oie.json"], env=WIDE)
    assert result.exit_code == 0 and "indexed 4 passages, 6 triples" in result.output  # Place 0 has none


def test_cli_index_reports_failed_passages(cli: CliRunner, tmp_path: Path) -> None:
    cli.llm.fail = {"Place 1"}  # type: ignore[attr-defined]
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": t, "text": x} for t, x in PASSAGES[:3]]), encoding="utf-8")
    result = cli.invoke(app, ["index", str(corpus), "--out", "idx"], env=WIDE)
    assert result.exit_code == 2 and "1 of 3 passages failed extraction" in result.output
    assert not (tmp_path / "idx").exists()
    cli.llm.fail = set()  # type: ignore[attr-defined]
    result = cli.invoke(app, ["index", str(corpus), "--out", "idx"], env=WIDE)
    assert result.exit_code == 0 and "1 LLM calls, 2 passages reused" in result.output


def test_cli_index_backend_elasticsearch_migrates_after_building(cli: CliRunner, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []

    def fake_migrate(directory: Path, settings: object, progress: object = None) -> dict:
        calls.append(Path(directory))
        return {"passages": "gear-passages"}

    monkeypatch.setattr("gear.index.migrate.migrate_to_elastic", fake_migrate)
    corpus = tmp_path / "notes.md"
    corpus.write_text("Place 7 is on Earth.\n\nIt has a harbour.", encoding="utf-8")
    result = cli.invoke(app, ["index", str(corpus), "--out", "idx", "--backend", "elasticsearch"], env=WIDE)
    assert result.exit_code == 0, result.output
    assert calls == [Path("idx")] and "copied into Elasticsearch" in result.output
    assert cli.llm.calls == ["notes"]  # type: ignore[attr-defined]


def test_a_second_concurrent_run_on_the_same_work_dir_is_refused(tmp_path: Path) -> None:
    from gear.extract.runner import work_dir_lock

    with work_dir_lock(tmp_path), pytest.raises(LLMError, match="another extraction"):
        extract_passages(PASSAGES[:1], ScriptedLLM(), tmp_path)
    assert extract_passages(PASSAGES[:1], ScriptedLLM(), tmp_path).calls == 1
