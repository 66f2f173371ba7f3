"""What the run's index tells a diagnosis the trace cannot (gear.diagnosis.probe): an Engine over the index the run
was made on is the probe; with it the beam search is searched again with other knobs (no model asked) and the
index's triples tell extraction from graph; without it the diagnosis says it cannot tell."""

from __future__ import annotations

from pathlib import Path

from gear.agent.engine import Engine
from gear.config import Settings
from gear.diagnosis import Probe, diagnose
from gear.events import (
    Answered,
    BaseRetrieved,
    BeamsSearched,
    FinalRanking,
    InitialNodes,
    IterationStarted,
    PassagesExpanded,
    PassagesFused,
    ProximalTriples,
    RunFinished,
    RunStarted,
    TriplesLinked,
)
from gear.trace import BeamView, PassageView, Trace, TripleLinkView, TripleView
from tests.conftest import TINY_DOCS, TINY_TRIPLES, FakeEncoder

QUESTION = "Which sea is the island with Mount Etna the largest island in?"
TRIPLE_IDS = {t: n for n, t in enumerate(t for doc in TINY_TRIPLES for t in doc)}  # the index numbers them so
OWNER = {n: p for p, doc in enumerate(TINY_TRIPLES) for n in (TRIPLE_IDS[t] for t in doc)}


def view(pid: int) -> PassageView:
    return PassageView(pid, *TINY_DOCS[pid])


def triple(s: str, p: str, o: str) -> TripleView:
    tid = TRIPLE_IDS[(s, p, o)]
    return TripleView(tid, s, p, o, OWNER[tid], TINY_DOCS[OWNER[tid]][0])


def sync_run(read: list[str], linked: TripleView, gold: list[int], length: int = 1,
             answers: tuple[str, ...] = ("Mediterranean Sea",)) -> Trace:
    """SyncGE on the tiny index: the base list holds Mount Etna (2) only, the reader writes `read`, tripleLink links
    it to `linked`, the beam of length `length` keeps that triple alone."""
    base = [view(2), view(0), view(4)]
    return Trace([
        RunStarted(0, QUESTION, "sync", "bm25", {"prompts": "paper", "retriever": "bm25"}, "", gold, list(answers)),
        IterationStarted(1, QUESTION), BaseRetrieved(1, QUESTION, 3, base),
        ProximalTriples(1, "sync", "read(C′q, q)", [2, 0, 4], [read]),
        TriplesLinked(1, [TripleLinkView(read, linked, 0.9)]),
        InitialNodes(1, "sync", [linked]),
        BeamsSearched(1, [[BeamView([linked.id], 0.9, [0.9], [1.0])]], [linked], 10, length, 100, 20.0, True,
                      "exact", 5),
        PassagesExpanded(1, [view(linked.passage_id)]), PassagesFused(1, base),
        FinalRanking(1, base), Answered(1, "Ionian Sea", "Ionian Sea", [2, 0, 4]), RunFinished(1, 1, 1.0, {})])


def engine(tiny_index: Path) -> Engine:
    return Engine.open(tiny_index, Settings(retriever="bm25"), encoder=FakeEncoder())


def test_an_engine_is_a_probe(tiny_index: Path) -> None:
    assert isinstance(engine(tiny_index), Probe)


def test_a_longer_beam_reaching_the_passage_is_shown_as_evidence(tiny_index: Path) -> None:
    """Sicily is one hop from ⟨Mount Etna, located on, Sicily⟩: a beam of length 1 stops before it, one of length 2
    reaches it — the graph's knob, tested without asking the model."""
    t = sync_run(["Mount Etna", "located on", "Sicily"], triple("Mount Etna", "located on", "Sicily"), gold=[2, 3])
    alone = diagnose(t, passages={3: TINY_DOCS[3]})
    sicily = next(p for p in alone.passages if p.id == 3)
    assert sicily.hop == 2 and sicily.responsible == "beam"
    assert alone.undetermined == ["graph", "extraction"] and alone.confidence == "low"
    d = diagnose(t, probe=engine(tiny_index))
    assert [p.status for p in d.passages] == [p.status for p in alone.passages]  # the table is the trace's
    assert d.category == "graph" and d.undetermined == [] and d.confidence == "high"
    assert "its index triple ⟨Sicily, largest island in, Mediterranean Sea⟩ names it" in d.evidence[0]
    assert "re-run: with l = 2 a kept beam reaches it" in d.evidence[0]
    rerun = [r for r in d.refs[0] if r.claim == "rerun"]
    assert rerun and rerun[0].step == "beam" and rerun[0].passage == 3


def test_no_index_triple_naming_the_hop_is_missing_extraction(tiny_index: Path) -> None:
    """The 'Lonely' passage has no triples at all: whatever tripleLink took, no graph step could reach it."""
    t = sync_run(["Mount Etna", "near", "Lonely"], triple("Mount Etna", "is", "active volcano"), gold=[2, 7],
                 answers=("tulips",))
    # the trace alone: tripleLink took a triple not naming it
    assert diagnose(t, passages={7: TINY_DOCS[7]}).category == "graph"
    d = diagnose(t, probe=engine(tiny_index))
    assert d.category == "extraction" and next(p for p in d.passages if p.id == 7).responsible == "extraction"
    assert "no index triple of 'Lonely' or of the passage that gives it names 'Lonely' (index)" in d.evidence[0]


def test_another_retriever_for_a_passage_no_base_list_held(tiny_index: Path) -> None:
    """A hop-1 passage the run's base lists missed: where each base retriever ranks it for the same query."""
    t = sync_run(["Mount Etna", "located on", "Sicily"], triple("Mount Etna", "located on", "Sicily"), gold=[6])
    t = Trace([e if not isinstance(e, RunStarted) else RunStarted(
        0, "Who wrote the first published computer program, Ada Lovelace?", "sync", "bm25", e.settings, "", [6],
        ["Ada Lovelace"]) for e in t.events])
    d = diagnose(t, probe=engine(tiny_index))  # its title from the index: the question names it
    assert d.category == "base_retriever" and d.evidence[0].startswith("'Ada Lovelace' (base): the question names it")
    assert f"re-run: the same query ({QUESTION!r}) searched 30 deep: bm25 (the run's) " in d.evidence[0]
    assert ", dense " in d.evidence[0] and ", hybrid " in d.evidence[0]
