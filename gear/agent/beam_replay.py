"""A recorded run's beam search searched again over its index with other knobs: the counterfactual a lesson lets a
student try ("diversity off") and the diagnosis runs to test a claim ("with l = 3 the passage is reached at hop 2").

Only the beam search and what follows it without a model are redone — Algorithm 1 from the run's own initial
triples, scored against the iteration's own query, flattened, fused with the iteration's own base list — so no model
is asked and the recorded run is never changed. The triple and passage ids of the trace must be the index's: a run
made on another index (or one built again since) is refused by `check_index`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gear.agent.context import Encode
from gear.agent.event_builders import CANDIDATES_RECORDED, expansion_events
from gear.events import BaseRetrieved, BeamsSearched, Event, InitialNodes, IterationStarted, RunStarted
from gear.retrieve.beam import BeamParams
from gear.retrieve.expand import Expansion, expand
from gear.retrieve.scoring import SequenceScorer
from gear.store.base import SearchBackend
from gear.trace import Trace

#: the knobs a replay may change (Algorithm 1's), by the names BeamParams and the settings give them
KNOBS = ("width", "length", "max_neighbours", "gamma", "diversity")


class BeamReplayError(ValueError):
    """The trace cannot be searched again over this index: no beam search in that iteration, or another index."""


@dataclass(frozen=True)
class BeamReplay:
    """The recorded beam search of one iteration and the same search with `params`: the new events (drawn as the
    recorded ones are) and what changed — beams that entered or left the kept set, passages C̃q gained or lost,
    gold passages a kept beam reaches now and no longer."""

    iteration: int
    recorded_params: BeamParams
    params: BeamParams
    recorded: BeamsSearched
    expansion: Expansion
    events: list[Event]
    entered: list[tuple[int, ...]]
    left: list[tuple[int, ...]]
    passages_gained: list[int]
    passages_lost: list[int]
    gold_reached: list[int]
    gold_unreached: list[int]

    @property
    def beams(self) -> BeamsSearched:
        return next(e for e in self.events if isinstance(e, BeamsSearched))

    @property
    def same(self) -> bool:
        return not (self.entered or self.left)


def recorded_params(event: BeamsSearched) -> BeamParams:
    """Algorithm 1's parameters as the trace recorded them."""
    return BeamParams(event.width, event.length, event.max_neighbours, event.gamma, event.diversity)


def with_knobs(params: BeamParams, **knobs: object) -> BeamParams:
    """`params` with the knobs given changed (None: unchanged). A width changed without a γ gets the paper's γ = 2b
    for the new width, unless the recorded γ was set apart from 2b."""
    unknown = set(knobs) - set(KNOBS)
    if unknown:
        raise BeamReplayError(f"unknown beam setting(s): {', '.join(sorted(unknown))}; known: {', '.join(KNOBS)}")
    given = {k: v for k, v in knobs.items() if v is not None}
    if "width" in given and "gamma" not in given and params.gamma == 2.0 * params.width:
        given["gamma"] = 0.0  # 2b of the new width
    return replace(params, **given)  # type: ignore[arg-type]


def check_index(trace: Trace, backend: SearchBackend) -> None:
    """Refuse a trace whose ids cannot be this index's: an initial or beam triple beyond its triples, or one whose
    passage is not the passage the trace says."""
    n = backend.n_triples
    views = [*(v for e in trace.of(InitialNodes) for v in e.triples),
             *(v for e in trace.of(BeamsSearched) for v in e.triples)]
    for view in views:
        if not 0 <= view.id < n or backend.passage_of(view.id) != view.passage_id:
            raise BeamReplayError(f"triple {view.id} of the trace is not this index's (the run was made on another "
                                  "index, or this one was built again since)")


def replay_beams(trace: Trace, iteration: int, backend: SearchBackend, encode: Encode, scorer: SequenceScorer,
                 params: BeamParams, rrf_k: int = 60, record: int = CANDIDATES_RECORDED) -> BeamReplay:
    """Algorithm 1 again in `iteration` of `trace` with `params`, from the run's own initial triples and query,
    fused with the run's own base list; `encode` embeds the query (the encoder the index was built with)."""
    recorded = trace.first(BeamsSearched, iteration)
    initial = trace.first(InitialNodes, iteration)
    if recorded is None or initial is None:
        raise BeamReplayError(f"iteration {iteration} of this run has no beam search")
    check_index(trace, backend)
    base = trace.first(BaseRetrieved, iteration)
    started = trace.first(IterationStarted, iteration)
    query = base.query if base is not None else started.query if started is not None else trace.question
    base_ids = [p.id for p in base.passages] if base is not None else []
    start = trace.first(RunStarted)
    gold = set(start.gold_passage_ids) if start is not None else set()
    result = expand(encode([query])[0], base_ids, [t.id for t in initial.triples], backend, scorer, params, rrf_k,
                    record=record)
    events = expansion_events(iteration, initial.source, result, backend, params, recorded.score_mode, gold)
    before = [tuple(b.triple_ids) for b in recorded.steps[-1]] if recorded.steps else []
    after = [tuple(b.triple_ids) for b in result.search.beams]
    old_passages = _beam_passages(backend, before)
    new_passages = list(result.expanded)
    return BeamReplay(
        iteration, recorded_params(recorded), params, recorded, result, events,
        entered=[b for b in after if b not in set(before)], left=[b for b in before if b not in set(after)],
        passages_gained=[p for p in new_passages if p not in set(old_passages)],
        passages_lost=[p for p in old_passages if p not in set(new_passages)],
        gold_reached=sorted(gold & set(new_passages) - set(old_passages)),
        gold_unreached=sorted(gold & set(old_passages) - set(new_passages)))


def _beam_passages(backend: SearchBackend, beams: list[tuple[int, ...]]) -> list[int]:
    """C̃q of some beams: their triples breadth-first, mapped to passages, repeats dropped (as flatten + expand)."""
    depth = max((len(b) for b in beams), default=0)
    triples = list(dict.fromkeys(b[hop] for hop in range(depth) for b in beams if len(b) > hop))
    return list(dict.fromkeys(int(p) for p in backend.passages_of(triples))) if triples else []


__all__ = ["KNOBS", "BeamReplay", "BeamReplayError", "check_index", "recorded_params", "replay_beams", "with_knobs"]
