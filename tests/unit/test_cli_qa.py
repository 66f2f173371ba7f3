"""The index's own QA set from the command line: `gear qa add|list|remove|suggest`, `gear eval INDEX` on
it, `gear ask --gold` and `gear diagnose --gold / --qa` — on the tiny index (fake encoder), no model. Bad ids,
unknown indexes and a QA file that does not parse each get one line, and nothing saved before is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gear.cli import app
from gear.data.qa_set import load_own_qa, qa_path
from gear.diagnosis.gold_marks import run_passages
from gear.trace import Trace

WIDE = {"COLUMNS": "400"}
QUESTION = "Which sea is the island with Mount Etna the largest island in?"


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, make_encoder) -> CliRunner:
    for name in ("GEAR_EMBEDDER", "GEAR_BACKEND", "GEAR_LLM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env is read
    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name=name))
    return CliRunner()


def one_line_error(result, needle: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], result.output


def test_add_list_update_and_remove(runner: CliRunner, tiny_index: Path) -> None:
    added = runner.invoke(app, ["qa", "add", str(tiny_index), QUESTION, "--gold", "2,3", "--answer",
                                "Mediterranean Sea", "--answer", "the Mediterranean"], env=WIDE)
    assert added.exit_code == 0, added.output
    assert "added own__" in added.output and "gold #2 Mount Etna" in added.output and "gold #3 Sicily" in added.output
    [q] = load_own_qa(tiny_index)
    assert q.answers == ("Mediterranean Sea", "the Mediterranean") and [g.passage_id for g in q.gold] == [2, 3]
    assert q.source == "cli"
    again = runner.invoke(app, ["qa", "add", str(tiny_index), QUESTION.lower(), "--gold", "3"], env=WIDE)
    assert again.exit_code == 0 and "updated" in again.output
    assert [[g.title for g in q.gold] for q in load_own_qa(tiny_index)] == [["Sicily"]]
    listed = runner.invoke(app, ["qa", "list", str(tiny_index)], env=WIDE)
    assert listed.exit_code == 0 and "Sicily #3" in listed.output and "1 question(s)" in listed.output
    removed = runner.invoke(app, ["qa", "remove", str(tiny_index), q.id], env=WIDE)
    assert removed.exit_code == 0 and "removed" in removed.output and load_own_qa(tiny_index) == []
    empty = runner.invoke(app, ["qa", "list", str(tiny_index)], env=WIDE)
    assert empty.exit_code == 0 and "no questions yet" in empty.output


@pytest.mark.parametrize(("args", "needle"), [
    (["--gold", "2,99"], "passage id 99 is not in this index (ids run from 0 to 7)"),
    (["--gold", "2,x"], "gold passages are ids separated by commas (e.g. 3,7): 'x' is not an id"),
    (["--gold", ","], "no gold passage id given"),
])
def test_bad_ids_are_one_line_and_nothing_is_written(runner: CliRunner, tiny_index: Path, args: list[str],
                                                     needle: str) -> None:
    runner.invoke(app, ["qa", "add", str(tiny_index), "Saved before?", "--gold", "1"])
    before = qa_path(tiny_index).read_bytes()
    one_line_error(runner.invoke(app, ["qa", "add", str(tiny_index), QUESTION, *args], env=WIDE), needle)
    assert qa_path(tiny_index).read_bytes() == before


def test_an_unknown_index_is_one_line(runner: CliRunner, tmp_path: Path) -> None:
    one_line_error(runner.invoke(app, ["qa", "add", str(tmp_path / "nope"), QUESTION, "--gold", "1"], env=WIDE),
                   "no such index folder")
    (tmp_path / "plain").mkdir()
    one_line_error(runner.invoke(app, ["qa", "list", str(tmp_path / "plain")], env=WIDE),
                   "not an index folder (no manifest.json)")


def test_a_qa_file_that_does_not_parse_is_one_line_and_kept(runner: CliRunner, tiny_index: Path) -> None:
    qa_path(tiny_index).write_text('[{"question": "Q", "paragraphs": [}]', encoding="utf-8")
    before = qa_path(tiny_index).read_bytes()
    for args in (["qa", "add", str(tiny_index), QUESTION, "--gold", "2"], ["qa", "remove", str(tiny_index), "Q"],
                 ["qa", "list", str(tiny_index)], ["eval", str(tiny_index)]):
        one_line_error(runner.invoke(app, args, env=WIDE), "own_qa.json: invalid JSON at line 1")
    assert qa_path(tiny_index).read_bytes() == before


def test_suggest_searches_the_index_and_proposes_the_passages_that_hold_the_answer(runner: CliRunner,
                                                                                   tiny_index: Path) -> None:
    result = runner.invoke(app, ["qa", "suggest", str(tiny_index), QUESTION, "--answer", "mediterranean sea"],
                           env=WIDE)
    assert result.exit_code == 0, result.output
    search, suggested = result.output.split("suggested gold passages")
    assert "Mount Etna" in search and "Sicily" in search  # BM25 + dense over title and text
    assert "Sicily" in suggested and "holds 'mediterranean sea' in its text" in suggested
    assert "Mount Etna" not in suggested  # it does not hold the answer: never proposed on a whim
    assert load_own_qa(tiny_index) == []  # nothing marked on its own
    bare = runner.invoke(app, ["qa", "suggest", str(tiny_index), QUESTION], env=WIDE)
    assert bare.exit_code == 0 and "Give --answer" in bare.output


def test_eval_without_a_qa_file_uses_the_indexs_own(runner: CliRunner, tiny_index: Path, tmp_path: Path) -> None:
    none_yet = runner.invoke(app, ["eval", str(tiny_index)], env=WIDE)
    assert none_yet.exit_code == 2 and "has no questions of its own yet" in none_yet.output
    runner.invoke(app, ["qa", "add", str(tiny_index), QUESTION, "--gold", "2,3"])
    runner.invoke(app, ["qa", "add", str(tiny_index), "Who wrote the first computer program?", "--gold", "6"])
    report = tmp_path / "report.json"
    result = runner.invoke(app, ["eval", str(tiny_index), "-r", "bm25", "--k", "2,5", "--json", str(report)],
                           env=WIDE)
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["n_questions"] == 2 and [q["id"][:5] for q in data["per_question"]] == ["own__", "own__"]
    assert [q["n_gold"] for q in data["per_question"]] == [2, 1]


def test_ask_with_gold_diagnoses_the_run_against_it(runner: CliRunner, tiny_index: Path, tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    result = runner.invoke(app, ["ask", str(tiny_index), QUESTION, "-e", "naive", "-r", "bm25", "--gold", "2,3",
                                 "--answer", "Mediterranean Sea", "--trace", str(trace)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "Mount Etna" in result.output and "lost at" in result.output and "category:" in result.output
    assert f"gear qa add {tiny_index} \"{QUESTION}\" --gold 2,3 --answer \"Mediterranean Sea\"" in result.output
    start = Trace.load(trace).events[0]
    assert start.gold_passage_ids == [2, 3] and start.answers == ["Mediterranean Sea"]
    bad = runner.invoke(app, ["ask", str(tiny_index), QUESTION, "-e", "naive", "--gold", "42"], env=WIDE)
    one_line_error(bad, "passage id 42 is not in this index")


def test_diagnose_marks_gold_on_a_saved_run_and_reads_the_indexs_own_qa(runner: CliRunner, tiny_index: Path,
                                                                        tmp_path: Path) -> None:
    trace = tmp_path / "typed.json"
    runner.invoke(app, ["ask", str(tiny_index), QUESTION, "-e", "naive", "-r", "bm25", "--trace", str(trace)])
    plain = runner.invoke(app, ["diagnose", str(trace)], env=WIDE)
    assert plain.exit_code == 0 and "Nothing to diagnose: this run does not know its gold passages" in plain.output
    assert "the passages this run showed" in plain.output and "Sicily" in plain.output  # to pick from
    assert 7 not in {v.id for v in run_passages(Trace.load(trace))}  # 'Lonely' (tulips): in no list of this run
    marked = runner.invoke(app, ["diagnose", str(trace), "--gold", "3", "--json"], env=WIDE)
    assert marked.exit_code == 0, marked.output
    d = json.loads(marked.output)
    assert [p["title"] for p in d["passages"]] == ["Sicily"] and d["category"] is not None
    unshown = runner.invoke(app, ["diagnose", str(trace), "--gold", "7"], env=WIDE)
    one_line_error(unshown, "passage 7 is in no list of this run: give --index INDEX")
    named = runner.invoke(app, ["diagnose", str(trace), "--gold", "7", "--index", str(tiny_index), "--json"],
                          env=WIDE)
    lonely = json.loads(named.output)["passages"][0]
    assert lonely["title"] == "Lonely" and lonely["status"] == "lost" and lonely["lost_at"] == "base"
    assert any("is in no list of this run" in n for n in json.loads(named.output)["notes"])
    runner.invoke(app, ["qa", "add", str(tiny_index), QUESTION, "--gold", "2,3", "--answer", "Mediterranean Sea"])
    from_qa = runner.invoke(app, ["diagnose", str(trace), "--qa", str(tiny_index), "--json"], env=WIDE)
    assert from_qa.exit_code == 0, from_qa.output
    data = json.loads(from_qa.output)
    assert sorted(p["title"] for p in data["passages"]) == ["Mount Etna", "Sicily"]
    assert data["answer"] is None or data["answer"]["gold"] == ["Mediterranean Sea"]
