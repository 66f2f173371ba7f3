"""The bundled reports that keep their questions' traces carry the diagnoses `gear eval` makes of them today: a sample
of each (tests/unit/test_report_diagnoses.py's) diagnosed again from its kept trace with the report's index as the
probe, as `gear eval` diagnoses — the gold passages' texts from the index, the question's type from its report —
equals the report's diagnosis in every field, the evidence of the index's re-runs included.
scripts/rediagnose_reports.py writes them again when the rules change."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.diagnosis import diagnose
from gear.eval.protocol import diagnosis_k, per_cutoff, report_ks
from gear.trace import RunStarted, Trace
from tests.unit.test_report_diagnoses import TRACED, name, report, sample

#: the fixture of each bundled demo index a report may name (index_info.source.demo); a report that names none is
#: one of the MuSiQue subset's
FIXTURES = {"musique": "musique", "hotpotqa": "hotpotqa", "2wiki": "twowiki"}

pytestmark = pytest.mark.slow


def demo_of(data: dict) -> str:
    return str(((data.get("index_info") or {}).get("source") or {}).get("demo") or "musique")


@pytest.mark.parametrize("path", TRACED, ids=name)
def test_a_sample_of_diagnoses_is_what_gear_eval_makes_of_the_kept_traces(path: Path,
                                                                          request: pytest.FixtureRequest) -> None:
    data = report(path)
    engine = request.getfixturevalue(FIXTURES[demo_of(data)])
    k = diagnosis_k(report_ks(data), per_cutoff(data))
    for entry, file in sample(path):
        trace = Trace.load(file)
        start = trace.first(RunStarted)
        assert start is not None
        gold = {p.id: (p.title, p.text) for p in engine.backend.passages(start.gold_passage_ids)}
        again = diagnose(trace, k, gold, missing_gold=(data.get("gold_missing") or {}).get(entry["id"], []),
                         hop=entry["hop"], probe=engine).to_dict()
        assert again == entry["diagnosis"], (name(path), entry["id"])
