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

    # the diversity factors exp(−min(n, γ)/γ) for n = 0 … (computed with math.exp, as BeamParams.penalty)
    factors = np.array([params.penalty(n) for n in range(max(1, int(min(params.max_neighbours,
                                                                         math.ceil(params.gamma))) + 1))])

    for _ in range(1, params.length):
        previous = result.steps[-1]
        visited = np.sort(np.fromiter({t for beam in previous for t in beam.triple_ids}, dtype=np.int64))
        per_beam: list[np.ndarray] = []
        for beam in previous:
            cands = backend.neighbours(beam.triple_ids[-1])
            if len(cands):
                cands = cands[~_member(cands, visited)]
            per_beam.append(select_neighbours(backend, query_vector, cands, params.max_neighbours))
        sequences = [(*beam.triple_ids, t) for beam, cands in zip(previous, per_beam, strict=True)
                     for t in cands.tolist()]
        raw = np.asarray(scorer(query_vector, sequences)) if sequences else np.zeros(0)
        result.candidates_scored += len(sequences)

        # Score every candidate in arrays; Beam objects are made only for the b that survive.
        # Insertion order (the tie-break of `top`): beams in order; a beam's candidates sorted by s' (stable);
        # a beam without candidates stands for itself.
        finals: list[np.ndarray] = []  # s' × factor, in insertion order
        accs: list[np.ndarray] = []  # s' (before the factor)
        ranks: list[np.ndarray] = []  # n: the position within the beam's sorted candidates (−1: carried beam)
        picks: list[np.ndarray] = []  # index into the beam's candidates
        owners: list[np.ndarray] = []
        offsets: list[int] = []
        offset = 0
        for bi, (beam, cands) in enumerate(zip(previous, per_beam, strict=True)):
            m = len(cands)
            offsets.append(offset)
            if m == 0:  # no neighbours: carry forward unchanged
                finals.append(np.array([beam.score]))
                accs.append(finals[-1])
                ranks.append(np.array([-1]))
                picks.append(np.array([-1]))
                owners.append(np.array([bi]))
                continue
            scores = raw[offset:offset + m]
            offset += m
            accumulated = beam.score + scores.astype(np.float64)
            order = np.argsort(-accumulated, kind="stable")
            acc_sorted = accumulated[order]
            finals.append(acc_sorted * _factors(factors, m))
            accs.append(acc_sorted)
            ranks.append(np.arange(m))
            picks.append(order)
            owners.append(np.full(m, bi))
        final = np.concatenate(finals)
        winners = np.lexsort((np.arange(len(final)), -final))[:params.width]
        acc_all, rank_all = np.concatenate(accs), np.concatenate(ranks)
        pick_all, owner_all = np.concatenate(picks), np.concatenate(owners)
        step: list[Beam] = []
        for w in winners.tolist():
            bi, j, n = int(owner_all[w]), int(pick_all[w]), int(rank_all[w])
            beam = previous[bi]
            if n < 0:
                step.append(beam)
                continue
            factor = float(factors[min(n, len(factors) - 1)])
            step.append(Beam((*beam.triple_ids, int(per_beam[bi][j])), float(acc_all[w] * factor),
                             (*beam.hop_scores, float(raw[offsets[bi] + j])), (*beam.penalties, factor)))
        result.steps.append(step)
    return result


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """values ∈ sorted_set, elementwise (np.isin without its per-call overhead, for a small sorted set)."""
    if len(sorted_set) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    return sorted_set[np.minimum(pos, len(sorted_set) - 1)] == values


def _factors(table: np.ndarray, m: int) -> np.ndarray:
    """The first m diversity factors (the last entry, n ≥ γ, repeats)."""
    if m <= len(table):
        return table[:m]
    return np.concatenate([table, np.full(m - len(table), table[-1])])


def flatten(beams: Sequence[Beam]) -> list[int]:
    """Triples breadth-first: hop 1 of every beam in beam order, then hop 2, …; repeats removed."""
    out: list[int] = []
    depth = max((len(b.triple_ids) for b in beams), default=0)
    for hop in range(depth):
        out.extend(b.triple_ids[hop] for b in beams if len(b.triple_ids) > hop)
    return list(dict.fromkeys(out))
