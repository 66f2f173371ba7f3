"""The stage tables of the recorded subset's 120 traces (tests/fixtures/subset_traces.tar.xz) are the ones the rules
before the protocol's categories made (tests/fixtures/subset_stage_tables.json.xz, written by `python
bench/diagnosis_changes.py SUBSET --before SRC --tables …` from that version): a change of the categories and their
evidence may not move a single gold passage's marks, status, lost at or dropped at."""

from __future__ import annotations

import json
import lzma
from dataclasses import asdict
from pathlib import Path

from gear.data.questions import load_qa
from gear.diagnosis import diagnose
from gear.diagnosis.gold_texts import QATexts
from tests.unit.test_diagnosis_invariant import subset_traces

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "tests" / "fixtures" / "subset_stage_tables.json.xz"


def test_every_gold_passage_of_the_subset_keeps_its_stage_table() -> None:
    before = json.loads(lzma.decompress(TABLES.read_bytes()))
    texts = QATexts(load_qa(ROOT / "assets" / "musique" / "musique_dev50.json")[0])
    traces = subset_traces()
    assert {name.removesuffix(".json") for name in before} == set(traces)
    moved = []
    for name, trace in traces.items():
        d = diagnose(trace, 5, texts.for_trace(trace), hop=texts.hop_for(trace))
        now = [{"id": p.id, "status": p.status, "lost_at": p.lost_at, "dropped_at": p.dropped_at,
                "marks": [asdict(m) for m in p.marks]} for p in d.passages]
        if now != before[f"{name}.json"]:
            moved.append(name)
    assert moved == []
