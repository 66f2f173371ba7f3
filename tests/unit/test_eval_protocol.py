"""One question, one run, one set of numbers (item 3; gear.eval.protocol). For each question and cut-off k,
R@k equals the gold passages the diagnosis counts within k of the same run: checked on evaluations of generated runs
(every method that needs no model, any gold a person might name, any cut-offs), on GeAR runs built event by event, on
the recorded subset's traces of every method (tests/fixtures/subset_traces.tar.xz) and on every report in docs/evals
that keeps its questions' diagnoses. By default R@k never falls as k grows; the paper's per-cut-off protocol stays an
option whose diagnosis reads — and says — the run it counts, and multi-step reports are the same under both."""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.questions import Question
from gear.diagnosis import Diagnosis, diagnose
from gear.eval.protocol import ONE_RUN, PAPER, per_cutoff, protocol_of, report_ks, source_note, traced_k
from gear.eval.report import evaluate
from gear.events import FinalRanking, RunFinished, RunStarted
from gear.measures import recall_at
from gear.trace import Trace
from tests.scripted_llm import ScriptedLLM
from tests.unit.test_diagnosis_invariant import gear_runs, subset_traces

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted((ROOT / "docs" / "evals").glob("*.json"))
TOL = 1e-9


@cache
def tiny_engine() -> Engine:
    from gear.data.corpus import Document
    from gear.index import build_index
    from tests.conftest import TINY_DOCS, TINY_TRIPLES, FakeEncoder

    folder = Path(tempfile.mkdtemp(prefix="gear-protocol-")) / "index"
    build_index([Document(t, x) for t, x in TINY_DOCS], [list(t) for t in TINY_TRIPLES], folder, FakeEncoder())
    return Engine.open(folder, Settings(), encoder=FakeEncoder())


def titles() -> list[str]:
    from tests.conftest import TINY_DOCS

    return [t for t, _ in TINY_DOCS]


def agrees(recall: dict[str, float], n_gold: int, d: Diagnosis, ks: list[int]) -> None:
    for k in ks:
        assert abs(recall[str(k)] * n_gold - d.found_within(k)) < TOL, (d.question_id, k, recall, d.found_within(k))


SINGLE_STEP = [("none", "bm25"), ("none", "dense"), ("none", "hybrid"), ("naive", "hybrid"), ("naive", "bm25"),
               ("ppr", "dense"), ("sync", "hybrid")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), method=st.sampled_from(SINGLE_STEP),
       ks=st.lists(st.integers(1, 8), min_size=1, max_size=4, unique=True))
def test_every_r_at_k_is_what_the_diagnosis_counts_within_k_of_the_same_run(data: st.DataObject,
                                                                             method: tuple[str, str],
                                                                             ks: list[int]) -> None:
    expand, retriever = method
    names = titles()
    questions = [Question(f"2hop__{n}", question, ("Mediterranean Sea",),
                          tuple((t, None) for t in data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3,
                                                                      unique=True))))
                 for n, question in enumerate(["Which sea is the island with Mount Etna the largest island in?",
                                               "Who wrote the first computer program?"])]
    engine = tiny_engine()
    s = Settings().with_(expand=expand, retriever=retriever)
    engine.set_llm(s, ScriptedLLM())
    cutoffs = sorted(ks)
    one = evaluate(engine, questions, s, cutoffs).to_dict()
    assert one["protocol"] == ONE_RUN and source_note(one) == ""
    for q in one["per_question"]:
        values = [q["recall"][str(k)] for k in cutoffs]
        assert values == sorted(values)  # R@k never falls as k grows
        d = Diagnosis.from_dict(q["diagnosis"])
        assert d.k == min(cutoffs)
        agrees(q["recall"], q["n_gold"], d, cutoffs)  # every k, from the one run
    (summary,) = one["diagnosis"].values()  # the report's counts: the same gold passages, summed over questions
    assert summary["found_within"] == {str(k): round(sum(q["recall"][str(k)] * q["n_gold"]
                                                         for q in one["per_question"])) for k in cutoffs}
    paper = evaluate(engine, questions, s, cutoffs, protocol=PAPER).to_dict()
    (summary,) = paper["diagnosis"].values()
    assert list(summary["found_within"]) == [str(max(cutoffs))]  # only the run its R@k and diagnosis share
    assert paper["protocol"] == PAPER and per_cutoff(paper)
    for q in paper["per_question"]:
        d = Diagnosis.from_dict(q["diagnosis"])
        assert d.k == max(cutoffs)  # the run it reads, counted at that run's own cut-off
        agrees(q["recall"], q["n_gold"], d, [max(cutoffs)])
    # the largest cut-off's run is the same run under both: its R@k, answer and diagnosis too
    for a, b in zip(one["per_question"], paper["per_question"], strict=True):
        top = str(max(cutoffs))
        assert a["recall"][top] == b["recall"][top] and a["answer"] == b["answer"]
        assert Diagnosis.from_dict(a["diagnosis"]).found_within(max(cutoffs)) == \
            Diagnosis.from_dict(b["diagnosis"]).found_within(max(cutoffs))


def test_multi_step_reports_are_the_same_under_both_protocols() -> None:
    engine = tiny_engine()
    questions = [Question("2hop__1", "Which sea is the island with Mount Etna the largest island in?",
                          ("Mediterranean Sea",), (("Mount Etna", None), ("Sicily", None)))]
    for expand in ("gear", "ircot"):
        s = Settings().with_(expand=expand, retriever="hybrid", agent_k=4, max_iterations=2)
        reports = []
        for protocol in (ONE_RUN, PAPER):
            engine.set_llm(s, ScriptedLLM())
            reports.append(evaluate(engine, questions, s, (2, 4, 6), protocol=protocol).to_dict())
        timeless = [{key: value for key, value in r.items() if key not in ("latency_ms", "seconds_per_question",
                                                                            "protocol")} for r in reports]
        for r in timeless:
            for q in r["per_question"]:
                q.pop("seconds")
        assert timeless[0] == timeless[1], expand
        assert not per_cutoff(reports[1]) and source_note(reports[1]) == ""


def test_an_unknown_protocol_is_one_line() -> None:
    with pytest.raises(ValueError, match="unknown evaluation protocol 'table1': choose one-run or paper"):
        evaluate(tiny_engine(), [], Settings(), protocol="table1")


# -- traces: generated, recorded --------------------------------------------------------------------------------------
def final_and_gold(trace: Trace) -> tuple[list[int], list[int]]:
    final, start = trace.first(FinalRanking), trace.first(RunStarted)
    assert final is not None and start is not None
    return [p.id for p in final.passages], list(dict.fromkeys(start.gold_passage_ids))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trace=gear_runs(), k=st.integers(1, 8), at=st.integers(1, 8))
def test_generated_runs_recall_is_the_diagnosis_count(trace: Trace, k: int, at: int) -> None:
    if trace.first(FinalRanking) is None:
        return  # cut short before a final ranking: no R@k either
    ranked, gold = final_and_gold(trace)
    d = diagnose(trace, at)  # the cut-off the statuses are set at does not change what is found within k
    assert recall_at(ranked, gold, k) * len(gold) == pytest.approx(d.found_within(k))
    assert d.found_within(at) == d.found


def test_the_recorded_subset_traces_recall_is_the_diagnosis_count() -> None:
    checked = 0
    for name, trace in subset_traces().items():
        ranked, gold = final_and_gold(trace)
        d = diagnose(trace)
        for k in range(1, 21):
            assert recall_at(ranked, gold, k) * len(gold) == pytest.approx(d.found_within(k)), (name, k)
        end = trace.first(RunFinished)
        assert end is not None
        for k, value in end.recall.items():  # the recall the run reported when it finished
            assert value * len(gold) == pytest.approx(d.found_within(int(k))), (name, k)
            checked += 1
    assert checked >= 120 * 3


# -- the reports in docs/evals ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
def test_every_kept_diagnosis_of_a_report_counts_its_recall(path: Path) -> None:
    report = json.loads(path.read_text(encoding="utf-8"))
    assert protocol_of(report) == PAPER  # every bundled report was made so; the field came later
    with_diagnosis = [q for q in report["per_question"] if q.get("diagnosis")]
    if not with_diagnosis:
        pytest.skip("a report saved before reports kept each question's diagnosis (and without its traces)")
    ks = report_ks(report)
    same_run = [traced_k(ks)] if per_cutoff(report) else ks  # a per-cut-off report's diagnosis reads its k=max run
    for q in with_diagnosis:
        d = Diagnosis.from_dict(q["diagnosis"])
        assert len(d.passages) == q["n_gold"]
        agrees(q["recall"], q["n_gold"], d, same_run)


# -- gear eval --------------------------------------------------------------------------------------------------------
def test_gear_eval_prints_one_set_of_numbers_and_the_paper_protocol_names_its_run(tiny_index: Path, make_encoder,
                                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                                   tmp_path: Path) -> None:
    """The issue's case: one question with two gold passages, `gear eval` printed "R@5 100.0" above "found 1/2 within
    5". Now each R@k of the table is the "found" count within k printed below it."""
    import re

    from typer.testing import CliRunner

    from gear.cli import app
    from tests.unit.test_cli_qa import QUESTION, WIDE

    for name in ("GEAR_EMBEDDER", "GEAR_BACKEND", "GEAR_LLM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("gear.agent.engine.Encoder", lambda name, **_: make_encoder(name=name))
    runner = CliRunner()
    assert runner.invoke(app, ["qa", "add", str(tiny_index), QUESTION, "--gold", "2,6"]).exit_code == 0
    report = tmp_path / "r.json"
    result = runner.invoke(app, ["eval", str(tiny_index), "-r", "bm25", "-e", "naive", "--k", "1,2,4", "--json",
                                 str(report)], env=WIDE)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.strip().strip("│┃ ").startswith("all"))
    shown = [float(x) for x in re.findall(r"\d+\.\d", row)]
    found = dict((k, int(n)) for n, k in re.findall(r"(\d+)/2 within (\d+)", result.output))
    assert list(found) == ["1", "2", "4"], result.output
    assert shown == [100 * found[k] / 2 for k in ("1", "2", "4")] == sorted(shown)
    assert json.loads(report.read_text())["protocol"] == "one-run" and "Per-cut-off" not in result.output
    paper = runner.invoke(app, ["eval", str(tiny_index), "-r", "bm25", "-e", "naive", "--k", "1,2,4", "--protocol",
                                "paper"], env=WIDE)
    assert paper.exit_code == 0, paper.output
    said = " ".join(paper.output.split())  # the table's title wraps
    assert "(the k=4 run)" in said
    assert re.search(r"found \d/2 within 4;", said) and "within 1" not in said
    assert "Per-cut-off protocol (the paper's Table 1): R@1, R@2, R@4 each come from a run of their own" in said
    bad = runner.invoke(app, ["eval", str(tiny_index), "--protocol", "table1"], env=WIDE)
    assert bad.exit_code == 2 and "choose one-run or paper" in bad.output
