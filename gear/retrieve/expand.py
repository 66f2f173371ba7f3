"""Graph expansion (paper §3): initial nodes → Diverse Triple Beam Search → flatten → passages → RRF with C′q.

NaiveGE takes every triple of the base passages as initial nodes; SyncGE takes the tripleLink of the reader's
proximal triples (the agent module supplies those).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gear.retrieve.beam import BeamParams, BeamSearchResult, beam_search, flatten
from gear.retrieve.scoring import SequenceScorer
from gear.store.base import SearchBackend
from gear.store.fusion import rrf
from gear.types import Scored


@dataclass
class Expansion:
    initial: list[int]  # initial triple ids, in order
    search: BeamSearchResult
    expanded: list[int]  # C̃q: unique source passages of the flattened beams
    fused: list[Scored]  # RRF(C̃q, C′q)


def naive_initial_nodes(backend: SearchBackend, base_passages: Sequence[int]) -> list[int]:
    """NaiveGE: all triples of the base passages, in base-rank order."""
    return [t for p in base_passages for t in backend.triples_of(p)]


def expand(query_vector: np.ndarray, base_passages: Sequence[int], initial: Sequence[int], backend: SearchBackend,
           scorer: SequenceScorer, params: BeamParams, rrf_k: int = 60, record: int = 0) -> Expansion:
    """`record`: candidates per beam and hop the search keeps for the trace (gear.retrieve.beam.beam_search)."""
    search = beam_search(query_vector, initial, backend, scorer, params, record)
    triples = flatten(search.beams)
    expanded = list(dict.fromkeys(int(p) for p in backend.passages_of(triples))) if triples else []
    fused = rrf([expanded, list(base_passages)], k=rrf_k)
    return Expansion(list(dict.fromkeys(initial)), search, expanded, fused)
