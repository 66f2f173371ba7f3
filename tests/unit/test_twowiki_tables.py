"""The scripts behind docs/results.md's 2Wiki tables by type: which gold passages a question names,
and whether the triple graph joins a question's first passage to its second by the bridge entity's name."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def script(name: str) -> ModuleType:
    """A script of scripts/ as a module; scripts/ goes on the path as when the script runs (one imports another)."""
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def passage(title: str, found: bool, lost_at: str | None = None) -> dict:
    return {"title": title, "status": "found" if found else "lost", "lost_at": lost_at}


QUESTION = "Which film whose director was born first, Custodio De Señoras or Wolves Of The Range?"
PASSAGES = [passage("Custodio de señoras", True), passage("Wolves of the Range (film)", True),
            passage("Hugo Sofovich", False, "base"), passage("Sam Newfield", True)]
REPORT = {"per_question": [{"id": "q1", "question": QUESTION, "hop": "bridge_comparison",
                            "diagnosis": {"k": 15, "passages": PASSAGES}}]}
QA = {"q1": {"_id": "q1", "type": "bridge_comparison", "evidences": [
    ["Custodio de señoras", "director", "Hugo Sofovich"], ["Wolves of the Range", "director", "Sam Newfield"],
    ["Hugo Sofovich", "date of birth", "December 18, 1939"], ["Sam Newfield", "date of birth", "December 6, 1899"]]}}


def test_a_passage_is_named_by_its_title_without_its_qualifier_and_case() -> None:
    tables = script("by_type_tables")
    assert tables.named_in(QUESTION, "Wolves of the Range (film)")
    assert tables.named_in(QUESTION, "Custodio de señoras")
    assert not tables.named_in(QUESTION, "Hugo Sofovich")
    lines = tables.named_table("r", REPORT)
    assert "| bridge_comparison | 2 / 2 | — | 1 / 2 | base 1 |" in lines


def test_the_bridge_entity_must_be_named_alike_in_both_passages_triples() -> None:
    b = script("twowiki_bridges")
    triples = {"Custodio de señoras": b.entities([["Custodio de señoras", "director", "Hugo Sofovich"]]),
               # the director's own passage names him in full: the exact-name graph has no edge between the two
               "Hugo Sofovich": b.entities([["Hugo Alberto Sofovich", "born", "December 18, 1939"]]),
               "Wolves of the Range": b.entities([["Wolves of the Range", "directed by", "Sam Newfield"]]),
               "Sam Newfield": b.entities([["Sam Newfield", "born", "December 6, 1899"]])}
    assert b.bridge_link(QA["q1"]["evidences"], "Hugo Sofovich", triples) == "first only"
    assert b.bridge_link(QA["q1"]["evidences"], "Sam Newfield", triples) == "in both"
    assert b.bridge_link(QA["q1"]["evidences"], "Someone Else", triples) == "no evidence names it"
    counts = b.bridges(REPORT, QA, triples)["bridge_comparison"]
    assert counts == {("lost", "first only"): 1, ("found", "in both"): 1}
    assert "| bridge_comparison | 1 | 1 | 0 | 1 | 0 | 0 | 0 |" in b.table("r", {"bridge_comparison": counts})


def test_a_multi_step_run_is_recut_at_a_larger_k_by_its_final_ranks() -> None:
    """GeAR's one run is diagnosed at its report's smallest cut-off; at k = 5 a passage its final list ranks 3rd is
    found, one ranked 7th is not, and a single-step report (diagnosed at k = 15) is never re-cut."""
    tables = script("by_type_tables")

    def ranked(title: str, rank: int | None, lost_at: str) -> dict:
        marks = [{"stage": "final", "reached": rank is not None, "rank": rank}]
        return {**passage(title, False, lost_at), "marks": marks}

    passages = [passage("Custodio de señoras", True), ranked("Wolves of the Range (film)", 3, "final@k"),
                ranked("Hugo Sofovich", 7, "final@k"), ranked("Sam Newfield", None, "base")]
    report = {"per_question": [{"id": "q1", "question": QUESTION, "hop": "bridge_comparison",
                                "diagnosis": {"k": 2, "passages": passages}}]}
    assert "| bridge_comparison | 1 / 2 | final@k 1 | 0 / 2 | final@k 1, base 1 |" in tables.named_table("r", report)
    recut = tables.named_table("r", report, 5)
    assert recut[0].endswith("at k = 5")
    assert "| bridge_comparison | 2 / 2 | — | 0 / 2 | final@k 1, base 1 |" in recut
    assert "| bridge_comparison | 2 / 2 | — | 1 / 2 | base 1 |" in tables.named_table("r", report, 10)
    assert tables.named_table("r", REPORT, 5) == tables.named_table("r", REPORT)  # diagnosed at k = 15
