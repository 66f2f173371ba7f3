"""What the index can tell a diagnosis that the trace cannot, and the cheap re-runs that test a claim without asking
the model: does an index triple hold the name a hop needs (extraction or graph), would the beam search reach the
passage with a longer or wider beam or without diversity, would another base retriever or a deeper list have found it.

The diagnosis stays a pure function of a trace when no probe is given. A probe is the run's own index — an
`Engine` over it satisfies the protocol (`backend`, `replay_beams`: gear.agent.beam_replay) — handed in by `gear
eval`, `gear diagnose --index` and the app when the run's index is open. Nothing here asks a model.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from gear.diagnosis.facts import TraceFacts, spo
from gear.diagnosis.hops import Hop
from gear.events import BeamsSearched, RunStarted
from gear.store.base import SearchBackend
from gear.trace import Trace

DEPTH = 30  # how deep the other retrievers' lists are searched for a passage the run's base lists missed
RETRIEVERS = ("bm25", "dense", "hybrid")


class Replayed(Protocol):
    """What a beam re-run answers (gear.agent.beam_replay.BeamReplay): the gold passages a kept beam reaches now."""

    @property
    def gold_reached(self) -> list[int]: ...


@runtime_checkable
class Probe(Protocol):
    """The run's index, and its beam search searched again with other knobs."""

    @property
    def backend(self) -> SearchBackend: ...

    def replay_beams(self, trace: Trace, iteration: int, **knobs: object) -> Replayed: ...


def fits(probe: Probe, trace: Trace, sample: int = 8) -> bool:
    """Whether the run was made on the probe's index: the first passages its events show have the same ids, titles
    and texts there (a run made on another index, or on this one before it was built again, would be misread)."""
    from gear.diagnosis.facts import TraceFacts

    shown = [(pid, pair) for pid, pair in TraceFacts.of(trace).texts.items() if pair[1]][:sample]
    backend = probe.backend
    if any(not 0 <= pid < backend.n_passages for pid, _ in shown):
        return False
    here = {p.id: (p.title, p.text) for p in backend.passages([pid for pid, _ in shown])} if shown else {}
    return all(here.get(pid) == pair for pid, pair in shown)


def index_texts(probe: Probe, trace: Trace) -> dict[int, tuple[str, str]]:
    """(title, text) of the run's gold passages from its index (ids the index has)."""
    start = trace.first(RunStarted)
    ids = [i for i in (start.gold_passage_ids if start is not None else []) if 0 <= i < probe.backend.n_passages]
    return {p.id: (p.title, p.text) for p in probe.backend.passages(ids)} if ids else {}


def other_retrievers(probe: Probe, facts: TraceFacts, pid: int, query: str) -> str:
    """Where each base retriever ranks the passage for the query, DEPTH deep ("" when the passage is not the index's:
    a run made on another index)."""
    if not 0 <= pid < probe.backend.n_passages:
        return ""
    used = str(facts.setting("retriever", ""))
    said = []
    for method in RETRIEVERS:
        hits = probe.backend.search_passages([query], DEPTH, method)[0]  # type: ignore[arg-type]
        rank = next((n for n, h in enumerate(hits, 1) if h.id == pid), None)
        name = f"{method} (the run's)" if method == used else method
        said.append(f"{name} rank {rank}" if rank is not None else f"{name} not in the top {DEPTH}")
    return f"the same query ({query[:80]!r}) searched {DEPTH} deep: " + ", ".join(said)


def index_names(probe: Probe, facts: TraceFacts, h: Hop, pid: int, own: bool = False) -> str:
    """An index triple that names the hop's bridge: one of the passage's own, or (unless `own`) of the passage that
    gives the bridge ("" when none does)."""
    owners = [pid] + ([h.source] if h.source is not None and not own else [])
    backend = probe.backend
    for owner in owners:
        if not 0 <= owner < backend.n_passages:
            continue
        for t in backend.triples(backend.triples_of(owner)):
            if h.named_by(t.subject) or h.named_by(t.object):
                return spo((t.subject, t.predicate, t.object))
    return ""


def beam_reruns(probe: Probe, trace: Trace, iteration: int, pid: int) -> str:
    """The beam search of that iteration searched again one knob at a time — one hop longer, twice as wide, without
    diversity — and which of them reaches the passage ("" when the search cannot be re-run here)."""
    recorded = trace.first(BeamsSearched, iteration)
    if recorded is None:
        return ""
    tries = {f"l = {recorded.length + 1}": {"length": recorded.length + 1},
             f"b = {2 * recorded.width}": {"width": 2 * recorded.width}}
    if recorded.diversity:
        tries["diversity off"] = {"diversity": False}
    said = []
    for name, knobs in tries.items():
        try:
            reached = pid in probe.replay_beams(trace, iteration, **knobs).gold_reached
        except ValueError:  # gear.agent.beam_replay.BeamReplayError: another index, or no beam search here
            return ""
        said.append(f"with {name} a kept beam {'reaches it' if reached else 'still does not reach it'}")
    return "; ".join(said)
