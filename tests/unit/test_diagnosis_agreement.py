"""bench/diagnosis_agreement.py against a blind-labelled set (bench/labelling/PROTOCOL.md), on a tiny one made here:
four bundled traces, two labellers. The numbers are worked out by hand from the labels below and the diagnosis's
proposals for those traces; the format is the one the labelled set arrives in."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "tests" / "fixtures" / "labelling"
TRACES = ROOT / "assets" / "traces"


def bench():
    spec = importlib.util.spec_from_file_location("diagnosis_agreement", ROOT / "bench" / "diagnosis_agreement.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["diagnosis_agreement"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compared():
    b = bench()
    runs, seconds = b.compare_set(SET, TRACES, 5, b.diagnoser(5))
    return b, runs, seconds


def test_every_run_is_diagnosed_and_read_with_both_labels(compared) -> None:
    b, runs, seconds = compared
    assert [r.entry.run for r in runs] == ["R001", "R002", "R003", "R004"] and len(seconds) == 4
    assert [r.after.primary for r in runs] == ["ranking", "base_retriever", "none", "base_retriever"]
    assert [(r.a.primary, r.b.primary) for r in runs] == [("ranking", "ranking"), ("base_retriever", "reader"),
                                                          ("none", "none"), ("graph", "graph")]
    assert [r.agreed.primary if r.agreed else None for r in runs] == ["ranking", None, "none", "graph"]
    assert [r.number % 2 for r in b.half_of(runs, "dev")] == [1, 1]
    assert [r.entry.run for r in b.half_of(runs, "held")] == ["R002", "R004"]


def test_primary_and_primary_or_second_agreement(compared) -> None:
    b, runs, _ = compared
    pairs = b.pairs(runs, "after")
    count = {name: (sum(b.primary_agrees(p, m) for p, m in ps), sum(b.either_agrees(p, m) for p, m in ps), len(ps))
             for name, ps in pairs.items()}
    # A: R004 graph (base_retriever) against base_retriever — primary no, A's second is the diagnosis's primary
    assert count["labeller A"] == (3, 4, 4)
    # B: R002 reader (base_retriever) — the diagnosis's primary is B's second; R004 graph against base_retriever
    assert count["labeller B"] == (2, 3, 4)
    assert count["both agree"] == (2, 3, 3)
    labellers = [(r.a, r.b) for r in runs]
    assert sum(b.primary_agrees(x, y) for x, y in labellers) == 3 and sum(b.either_agrees(x, y) for x, y in labellers) \
        == 4


def test_each_gold_passage_found_hop_and_step(compared) -> None:
    b, runs, _ = compared
    agree, total = b.passage_rows(b.pairs(runs, "after")["labeller A"])
    # R001: Governor (hop 3, ranked out), St. Peter's Basilica (hop 2, ranked out), Bremen (hop 1, found); R003: two
    assert (agree["found"], total["found"]) == (5, 5) and (agree["hop"], total["hop"]) == (5, 5)
    assert (agree["responsible"], total["responsible"]) == (2, 2)
    agree, total = b.passage_rows(b.pairs(runs, "after")["labeller B"])  # B laid the basilica at the gist reader
    assert (agree["responsible"], total["responsible"]) == (1, 2)


def test_the_report_has_intervals_confusion_tables_and_both_halves(compared, capsys) -> None:
    b, runs, seconds = compared
    b.report_set(runs, 5, True, ["dev", "held", "all"], seconds)
    out = capsys.readouterr().out
    assert "### development half (odd runs): 2 runs" in out and "### held-out half (even runs): 2 runs" in out
    assert "| labeller A | 4 | 3/4 (75 %, 95 % CI 19–99 %) | 4/4 (100 %, 95 % CI 40–100 %) | 5/5 | 5/5 | 2/2 |" in out
    assert "| 4 | 3/4 (75 %, 95 % CI 19–99 %) | 4/4 (100 %, 95 % CI 40–100 %) |" in out  # A against B
    assert "| person ↓ / diagnosis → |" in out and "| A ↓ / B → |" in out
    details = out.split("Every disagreement of the development half", 1)[1]
    assert "R001" in details and "R002" not in details and "R004" not in details  # the held-out half stays unread


def test_a_bad_label_names_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    b = bench()
    shutil.copytree(SET, tmp_path / "set")
    bad = tmp_path / "set" / "labels_b.jsonl"
    lines = bad.read_text(encoding="utf-8").splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "primary": "retriever"})
    bad.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(SystemExit) as raised:
        b.compare_set(tmp_path / "set", TRACES, 5, b.diagnoser(5))
    assert str(raised.value).startswith(f"{bad}: line 2: field primary:")
    (tmp_path / "set" / "runs.json").write_text('[{"run": "R001"}]', encoding="utf-8")
    with pytest.raises(SystemExit, match=r"runs.json: run 1: field dataset"):
        b.compare_set(tmp_path / "set", TRACES, 5, b.diagnoser(5))
