"""Diverse Triple Beam Search — Algorithm 1 of the paper, rule for rule.

1. B0: score every initial triple as a one-triple sequence; keep the top b.
2. For each further step: for each beam ⟨s, T⟩, candidates are the neighbours of T's last triple (shared head or tail
   entity), skipping triples that appear in any beam of the previous step; when there are more than
   `max_neighbours`, keep the ones most similar to the query. Each candidate scores s' = s + score(q, T∘t).
3. Within a beam, candidates sorted by s' (descending) get s' × exp(−min(n, γ)/γ) for their 0-based position n
   (the diversity penalty; off = factor 1).
4. A beam with no candidates carries forward unchanged. The step keeps the global top b.
Flattening is breadth-first: hop-1 triples of all beams in beam order, then hop-2, and so on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from gear.retrieve.scoring import SequenceScorer
from gear.store.base import SearchBackend
from gear.types import Beam


@dataclass(frozen=True)
class BeamParams:
    width: int = 10
    length: int = 2
    max_neighbours: int = 100
    gamma: float = 20.0
    diversity: bool = True

    def penalty(self, n: int) -> float:
        """Weight of the n-th (0-based) candidate of a beam: exp(−min(n, γ)/γ)."""
        return math.exp(-min(n, self.gamma) / self.gamma) if self.diversity else 1.0


@dataclass
class BeamSearchResult:
    steps: list[list[Beam]] = field(default_factory=list)  # B_0 … B_{l-1}
    candidates_scored: int = 0

    @property
    def beams(self) -> list[Beam]:
        return self.steps[-1] if self.steps else []


def top(beams: list[Beam], b: int) -> list[Beam]:
    """The b best by score; equal scores keep their insertion order (deterministic)."""
    order = sorted(range(len(beams)), key=lambda i: (-beams[i].score, i))
    return [beams[i] for i in order[:b]]


def select_neighbours(backend: SearchBackend, query_vector: np.ndarray, candidates: np.ndarray,
                      limit: int) -> np.ndarray:
    """Keep at most `limit` candidates, the most query-similar by their stored triple vectors."""
    if len(candidates) <= limit:
        return candidates
    sims = backend.triple_vectors(candidates) @ query_vector
    keep = np.lexsort((candidates, -sims))[:limit]
    return np.sort(candidates[keep])


def beam_search(query_vector: np.ndarray, initial: Sequence[int], backend: SearchBackend,
                scorer: SequenceScorer, params: BeamParams) -> BeamSearchResult:
    result = BeamSearchResult()
    starts = list(dict.fromkeys(int(t) for t in initial))
    if not starts:
        return result
    first = scorer(query_vector, [(t,) for t in starts])
    result.candidates_scored += len(starts)
    b0 = [Beam((t,), float(s), (float(s),), (1.0,)) for t, s in zip(starts, first, strict=True)]
    result.steps.append(top(b0, params.width))

    for _ in range(1, params.length):
        previous = result.steps[-1]
        visited = {t for beam in previous for t in beam.triple_ids}
        per_beam: list[np.ndarray] = []
        for beam in previous:
            cands = backend.neighbours(beam.triple_ids[-1])
            cands = cands[~np.isin(cands, list(visited))] if len(cands) else cands
            per_beam.append(select_neighbours(backend, query_vector, cands, params.max_neighbours))
        sequences = [(*beam.triple_ids, int(t)) for beam, cands in zip(previous, per_beam, strict=True)
                     for t in cands]
        raw = scorer(query_vector, sequences)
        result.candidates_scored += len(sequences)

        step: list[Beam] = []
        offset = 0
        for beam, cands in zip(previous, per_beam, strict=True):
            if len(cands) == 0:
                step.append(beam)  # no neighbours: carry forward unchanged
                continue
            scores = raw[offset:offset + len(cands)]
            offset += len(cands)
            accumulated = beam.score + scores.astype(np.float64)
            order = np.argsort(-accumulated, kind="stable")
            for n, j in enumerate(order):
                factor = params.penalty(n)
                step.append(Beam((*beam.triple_ids, int(cands[j])), float(accumulated[j] * factor),
                                 (*beam.hop_scores, float(scores[j])), (*beam.penalties, factor)))
        result.steps.append(top(step, params.width))
    return result


def flatten(beams: Sequence[Beam]) -> list[int]:
    """Triples breadth-first: hop 1 of every beam in beam order, then hop 2, …; repeats removed."""
    out: list[int] = []
    depth = max((len(b.triple_ids) for b in beams), default=0)
    for hop in range(depth):
        out.extend(b.triple_ids[hop] for b in beams if len(b.triple_ids) > hop)
    return list(dict.fromkeys(out))
