"""`gear diagnose` (a trace or a folder of them; tables or JSON; --k; --qa) and the diagnosis lines of `gear eval`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gear.cli import app
from gear.diagnosis import CATEGORIES
from gear.trace import Trace
from tests.unit.test_diagnose import GOLD, PASSAGES, QUESTION, naive_run

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "assets" / "traces"
WIDE = {"COLUMNS": "400"}


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    for name in ("GEAR_EMBEDDER", "GEAR_BACKEND", "GEAR_LLM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_a_trace_prints_its_stage_table_category_and_evidence(runner: CliRunner) -> None:
    result = runner.invoke(app, ["diagnose", str(TRACES / "walkthrough_3hop_gear.json")], env=WIDE)
    assert result.exit_code == 0, result.output
    out = result.output
    for stage in ("base", "read", "link", "beam", "expanded", "fused", "gist", "linked", "final@5", "lost at",
                  "dropped at"):
        assert stage in out
    assert "St. Peter's Basilica" in out and "✓ hop 2" in out
    # every gold passage was in a base list (ranks 2, 4, 1): the final ranking put two past 5; the gist reader second
    assert "category: ranking — final ranking (second: reader hallucination) · confidence high" in out
    assert "'St. Peter's Basilica' (final@5): the base list held it at rank 4 (iteration 2)" in out
    assert "→ base list (iteration 2), final ranking" in out  # the steps the line rests on
    assert "also (reader): 'St. Peter's Basilica' (gist): the gist reader read it" in out
    assert "│ hop         │" in out and "│ responsible │" in out
    assert "answer '1973' (gold '1952'): EM 0" in out


def test_json_is_the_same_diagnosis_as_data(runner: CliRunner) -> None:
    result = runner.invoke(app, ["diagnose", str(TRACES / "walkthrough.json"), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["question_id"] == "paper_walkthrough" and data["family"] == "GeAR" and data["k"] == 5
    assert [p["id"] for p in data["passages"]] == [2, 12, 13] and data["category"] in CATEGORIES
    assert data["answer"]["answer"] == "Croatia" and data["answer"]["right"] is False


def test_k_moves_the_cut(runner: CliRunner) -> None:
    five = json.loads(runner.invoke(app, ["diagnose", str(TRACES / "walkthrough.json"), "--json"]).output)
    fifteen = json.loads(runner.invoke(app, ["diagnose", str(TRACES / "walkthrough.json"), "--json", "--k",
                                             "15"]).output)
    basilica = [next(p for p in d["passages"] if p["id"] == 12) for d in (five, fifteen)]
    assert [p["status"] for p in basilica] == ["lost", "found"]  # final rank 11


def test_a_folder_gives_a_row_per_trace_and_the_counts(runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    (folder / "gear").mkdir(parents=True)
    shutil.copy(TRACES / "walkthrough.json", folder / "gear" / "a.json")
    shutil.copy(TRACES / "walkthrough_naive.json", folder / "b.json")
    (folder / "b.tags.json").write_text(json.dumps({"trace": "b.json", "categories": []}), encoding="utf-8")
    (folder / "notes.json").write_text(json.dumps({"hello": 1}), encoding="utf-8")
    result = runner.invoke(app, ["diagnose", str(folder)], env=WIDE)
    assert result.exit_code == 0, result.output
    assert "│ gear/ " in result.output and "│ a " in result.output and "│ b " in result.output  # without .json
    assert "skipped:" in result.output and "notes.json: not a GeAR trace" in result.output
    assert "b.tags.json" not in result.output  # the Traces page's tags are not traces
    # runs named as evaluations name them: the retriever and the method (gear.methods), then the variant
    assert "Hybrid GeAR (paper): 1 question, 3 gold passages, 1 found within 5" in result.output
    data = json.loads(runner.invoke(app, ["diagnose", str(folder), "--json"]).stdout)
    assert [Path(d["file"]).name for d in data["diagnoses"]] == ["b.json", "a.json"]
    assert set(data["summary"]) == {"Hybrid GeAR (paper)", "Hybrid + NaiveGE"} and len(data["skipped"]) == 1
    assert data["summary"]["Hybrid + NaiveGE"]["lost_at"] == {"base": 2}


def test_an_evaluations_folder_says_its_reports_once_and_counts_each_retriever_apart(runner: CliRunner,
                                                                                      tmp_path: Path) -> None:
    """data/evals/ as the Evaluate page leaves it: a report beside the folder of its traces, for BM25 and Hybrid
    runs of the same method: one line for the reports, a summary per retriever, and trace names that show
    what tells them apart at 80 columns (not "20261128-…" for every row)."""
    folder = tmp_path / "evals"
    for retriever in ("bm25", "hybrid"):
        name = f"20261128-073629-09974e_books_{retriever}"
        (folder / name / "traces").mkdir(parents=True)
        trace = json.loads((TRACES / "walkthrough_naive.json").read_text(encoding="utf-8"))
        start = next(e for e in trace["events"] if e["kind"] == "run_started")
        start["settings"]["retriever"] = retriever
        (folder / name / "traces" / "paper_walkthrough.json").write_text(json.dumps(trace), encoding="utf-8")
        (folder / f"{name}.json").write_text(json.dumps({"method": "naive", "retriever": retriever, "n_questions": 1,
                                                         "recall": {"5": 50.0}}), encoding="utf-8")
    result = runner.invoke(app, ["diagnose", str(folder)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.output.splitlines() if line.startswith("skipped")]
    assert len(skipped) == 1 and "2 evaluation reports" in skipped[0], result.output
    assert "not a GeAR trace" not in result.output
    assert "BM25 + NaiveGE: 1 question," in result.output and "Hybrid + NaiveGE: 1 question," in result.output
    assert "│ bm25/ " in result.output and "│ hybrid/ " in result.output
    assert "paper_walkthrough" in result.output and "20261128" not in result.output.split("traces", 1)[1]
    assert max(len(line) for line in result.output.splitlines()) <= 80


@pytest.mark.parametrize("make", ["missing", "empty", "broken"])
def test_user_errors_are_one_line(runner: CliRunner, tmp_path: Path, make: str) -> None:
    target = tmp_path / "x"
    if make == "empty":
        target.mkdir()
    elif make == "broken":
        target = tmp_path / "broken.json"
        target.write_text("{not json", encoding="utf-8")
    result = runner.invoke(app, ["diagnose", str(target)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(target) in lines[0]


def test_qa_gives_the_text_of_gold_passages_no_stage_reached(runner: CliRunner, tmp_path: Path) -> None:
    """The hop-2 passage only the QA set shows: with it, the graph's missed bridge is seen (see test_diagnose)."""
    trace = naive_run(base=[1, 4, 5], initial=[11, 12, 41, 51], paths=[[11, 12], [41]], expanded=[1, 4],
                      fused=[1, 4, 5], gold=[1, 2])
    trace.save(tmp_path / "t.json")
    qa = [{"id": "3hop1__1_2_3", "question": QUESTION, "answer": "1929", "paragraphs": [
        {"idx": n, "title": PASSAGES[pid][0], "paragraph_text": PASSAGES[pid][1], "is_supporting": pid in (1, 2)}
        for n, pid in enumerate(GOLD)]}]
    (tmp_path / "qa.json").write_text(json.dumps(qa), encoding="utf-8")
    alone = json.loads(runner.invoke(app, ["diagnose", str(tmp_path / "t.json"), "--json"]).output)
    with_qa = json.loads(runner.invoke(app, ["diagnose", str(tmp_path / "t.json"), "--json", "--qa",
                                             str(tmp_path / "qa.json")]).output)
    assert (alone["category"], alone["second"]) == ("base_retriever", None)
    assert (with_qa["category"], with_qa["second"]) == ("base_retriever", "graph")
    assert with_qa["passages"][1]["title"] == "St. Peter's Basilica"


def test_eval_prints_where_the_gold_was_lost(runner: CliRunner, tiny_index: Path, make_encoder,
                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name))
    shutil.copy(ROOT / "tests" / "fixtures" / "qa_musique.json", tmp_path / "qa.json")
    result = runner.invoke(app, ["eval", str(tiny_index), str(tmp_path / "qa.json"), "-r", "bm25", "-e", "naive",
                                 "--k", "2", "--json", str(tmp_path / "report.json"), "--traces",
                                 str(tmp_path / "traces")], env=WIDE)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    summary = report["diagnosis"]["naive"]
    assert f"naive: gold passages found {summary['found']}/{summary['gold']} within 2" in result.output
    assert all(row["diagnosis"]["run"] == "naive" for row in report["per_question"])
    saved = runner.invoke(app, ["diagnose", str(tmp_path / "traces"), "--json", "--k", "2"])
    # the same counts, the run named as gear diagnose names runs in a folder: the retriever and the method
    assert json.loads(saved.output)["summary"]["BM25 + NaiveGE"]["found"] == summary["found"]
    assert Trace.load(next((tmp_path / "traces").glob("*.json"))).question
