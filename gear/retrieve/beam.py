"""Diverse Triple Beam Search — Algorithm 1 of the paper, rule for rule.

1. B0: score every initial triple as a one-triple sequence; keep the top b.
2. For each further step: for each beam ⟨s, T⟩, candidates are the neighbours of T's last triple (shared head or tail
   entity), skipping triples that appear in any beam of the previous step; when there are more than
   `max_neighbours`, keep the ones most similar to the query. Each candidate scores s' = s + score(q, T∘t).
3. Within a beam, candidates sorted by s' (descending) get s' × exp(−min(n, γ)/γ) for their 0-based position n
   (the diversity penalty; off = factor 1).
4. A beam with no candidates carries forward unchanged. The step keeps the global top b.
Flattening is breadth-first: hop-1 triples of all beams in beam order, then hop-2, and so on.

For teaching, a search can also keep what it weighed (`record` > 0): every initial triple's score, and at each hop each
beam's V in rank order — t, s', its rank n, the factor and s' × factor, kept or not — the first `record` of each V and
any kept one below them (the trace stores these: gear.agent.event_builders.beams_event).

`beam_search` reads as the paper's pseudocode; the helpers below it do each line's work for all beams of a step at
once (one scorer call per step, candidates as arrays, Beam records only for the b that survive).
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
    """Algorithm 1's parameters (App. B: b = 10, l = 2, at most 100 neighbours, γ = 2b). γ left at 0 is 2b for the
    width given, so BeamParams(width=4) penalises as the paper would, not with the default width's γ."""

    width: int = 10
    length: int = 2
    max_neighbours: int = 100
    gamma: float = 0.0  # γ of the diversity penalty; 0: 2b
    diversity: bool = True

    def __post_init__(self) -> None:
        if self.gamma <= 0:
            object.__setattr__(self, "gamma", 2.0 * self.width)

    def penalty(self, n: int) -> float:
        """Weight of the n-th (0-based) candidate of a beam: exp(−min(n, γ)/γ)."""
        return math.exp(-min(n, self.gamma) / self.gamma) if self.diversity else 1.0


@dataclass(frozen=True)
class Candidate:
    """One entry of a beam's V (or of B0) as Algorithm 1 weighed it: the triple t added (−1: a beam with no neighbour
    left, standing for itself), score(q, T∘t), s' = s + score(q, T∘t), its rank n in V sorted by s' (0-based), the
    factor e^(−min(n, γ)/γ), s' × factor, and whether top(B, b) kept it."""

    triple: int
    hop_score: float
    accumulated: float
    rank: int
    penalty: float
    score: float
    kept: bool


@dataclass(frozen=True)
class BeamCandidates:
    """The candidates of one beam ⟨s, T⟩ of B_{i−1} (`beam`: its index there) at hop i: `total` = |V|, and the
    recorded ones in rank order."""

    beam: int
    total: int
    candidates: list[Candidate]


@dataclass
class BeamSearchResult:
    steps: list[list[Beam]] = field(default_factory=list)  # B_0 … B_{l-1}
    candidates_scored: int = 0
    recorded: int = 0  # how many candidates per beam were kept for the trace (0: none)
    initial: list[Candidate] = field(default_factory=list)  # B0 before top(B0, b), by score (when recorded)
    hops: list[list[BeamCandidates]] = field(default_factory=list)  # hop 1 … l−1: each beam's V (when recorded)

    @property
    def beams(self) -> list[Beam]:
        return self.steps[-1] if self.steps else []


def beam_search(query_vector: np.ndarray, initial: Sequence[int], backend: SearchBackend,
                scorer: SequenceScorer, params: BeamParams, record: int = 0) -> BeamSearchResult:
    """Diverse Triple Beam Search (Algorithm 1), every step B_0 … B_{l−1} kept for the trace. The paper's lines, and
    the helper that does each for all beams of a step at once:

         1  B0 ← [ ]                                                    initial_beams
         2  for t ∈ {t1, …, tn}:                                        (each initial triple once)
         3      s ← score(q, [t])
         4      B0.add(⟨s, [t]⟩)
         6  B0 ← top(B0, b)                                             top
         7  for i ∈ {1, …, l − 1}:
         8      B ← [ ]
         9      for ⟨s, T⟩ ∈ B_{i−1}:
        10          V ← [ ]
        11          for t ∈ get_neighbours(T.last()):                   neighbours (at most max_neighbours,
        12              if exists(t, B_{i−1}): continue                   the most query-similar: App. B)
        15              s' ← s + score(q, T∘t)                          extend (one scorer call per step)
        16              V.add(⟨s', T∘t⟩)
        18          sort(V, descending)                                 diversify
        19          for n ∈ {0, …, V.length() − 1}:
        20              ⟨s', T∘t⟩ ← V[n]
        21              s' ← s' × e^(−min(n, γ)/γ)
        22              B.add(⟨s', T∘t⟩)
        25      B_i ← top(B, b)                                         top_extensions
        27  return B_i

    Where the paper is silent: a beam with no neighbour left (V empty) carries forward unchanged and competes in
    top(B, b) at its place, instead of vanishing; ties in top and sort keep the order of insertion.

    `record` > 0 keeps, for a lesson, the candidates each line weighed (BeamSearchResult.initial and .hops): the
    first `record` of every beam's V and every kept one; the beams found are the same with or without it."""
    result = BeamSearchResult(recorded=max(0, record))
    starts = list(dict.fromkeys(int(t) for t in initial))
    if not starts:
        return result
    scored = initial_beams(query_vector, starts, scorer)
    result.steps.append(top(scored, params.width))
    result.candidates_scored += len(starts)
    if record > 0:
        result.initial = initial_candidates(scored, params.width, record)
    for _ in range(1, params.length):
        previous = result.steps[-1]
        found = neighbours(backend, query_vector, previous, params.max_neighbours)
        extensions = extend(query_vector, previous, found, scorer)
        weighted = diversify(extensions, params)
        result.steps.append(top_extensions(previous, extensions, weighted, params.width))
        result.candidates_scored += extensions.scored
        if record > 0:
            result.hops.append(hop_candidates(len(previous), extensions, weighted, params.width, record))
    return result


def initial_beams(query_vector: np.ndarray, starts: Sequence[int], scorer: SequenceScorer) -> list[Beam]:
    """⟨score(q, [t]), [t]⟩ for each initial triple, in one scorer call."""
    scores = scorer(query_vector, [(t,) for t in starts])
    return [Beam((t,), float(s), (float(s),), (1.0,)) for t, s in zip(starts, scores, strict=True)]


def top(beams: list[Beam], b: int) -> list[Beam]:
    """The b best by score; equal scores keep their insertion order (deterministic)."""
    order = sorted(range(len(beams)), key=lambda i: (-beams[i].score, i))
    return [beams[i] for i in order[:b]]


def neighbours(backend: SearchBackend, query_vector: np.ndarray, beams: Sequence[Beam],
               limit: int) -> list[np.ndarray]:
    """For each beam ⟨s, T⟩: get_neighbours(T.last()) less every triple that exists in `beams`, capped at `limit`."""
    visited = np.sort(np.fromiter({t for beam in beams for t in beam.triple_ids}, dtype=np.int64))
    found = []
    for beam in beams:
        candidates = backend.neighbours(beam.triple_ids[-1])
        if len(candidates):
            candidates = candidates[~_member(candidates, visited)]
        found.append(select_neighbours(backend, query_vector, candidates, limit))
    return found


def select_neighbours(backend: SearchBackend, query_vector: np.ndarray, candidates: np.ndarray,
                      limit: int) -> np.ndarray:
    """Keep at most `limit` candidates, the most query-similar by their stored triple vectors."""
    if len(candidates) <= limit:
        return candidates
    sims = backend.triple_vectors(candidates) @ query_vector
    keep = np.lexsort((candidates, -sims))[:limit]
    return np.sort(candidates[keep])


def _member(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """values ∈ sorted_set, elementwise (np.isin without its per-call overhead, for a small sorted set)."""
    if len(sorted_set) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    return sorted_set[np.minimum(pos, len(sorted_set) - 1)] == values


@dataclass(frozen=True)
class Extensions:
    """Every beam's V in one step, one row per sequence T∘t, beam by beam in neighbour order: the beam ⟨s, T⟩ it
    extends (index into B_{i−1}), t, score(q, T∘t) and s' = s + score(q, T∘t). A beam with no neighbour left is one
    row standing for itself (t = −1, s' = s), so that it carries forward."""

    beam: np.ndarray
    triple: np.ndarray
    hop: np.ndarray
    accumulated: np.ndarray

    @property
    def scored(self) -> int:
        return int(np.count_nonzero(self.triple >= 0))


def extend(query_vector: np.ndarray, beams: Sequence[Beam], found: Sequence[np.ndarray],
           scorer: SequenceScorer) -> Extensions:
    """s' ← s + score(q, T∘t) for every beam's candidates, in one scorer call."""
    beam = np.repeat(np.arange(len(beams)), [max(len(c), 1) for c in found])
    triple = np.concatenate([c if len(c) else [-1] for c in found]).astype(np.int64)
    extended = np.flatnonzero(triple >= 0)
    sequences = [(*beams[i].triple_ids, t) for i, t in zip(beam[extended].tolist(), triple[extended].tolist(),
                                                              strict=True)]
    hop = np.zeros(len(triple))
    if sequences:
        hop[extended] = scorer(query_vector, sequences)
    s = np.array([b.score for b in beams], dtype=np.float64)
    return Extensions(beam, triple, hop, s[beam] + hop)


@dataclass(frozen=True)
class Weighted:
    """B in Algorithm 1's order — beam by beam, each beam's V sorted by s' descending — as rows of the Extensions,
    each with its weight e^(−min(n, γ)/γ) for its position n in V (1 for a beam carried forward) and s' × weight."""

    rows: np.ndarray
    weight: np.ndarray
    score: np.ndarray


def diversify(extensions: Extensions, params: BeamParams) -> Weighted:
    """sort(V, descending) for every beam at once (equal s' keep neighbour order), then s' × e^(−min(n, γ)/γ)."""
    rows = np.lexsort((-extensions.accumulated, extensions.beam))
    owner = extensions.beam[rows]
    n = np.arange(len(rows)) - np.searchsorted(owner, owner)  # the position within the beam's V
    # e^(−min(n, γ)/γ) with math.exp, as BeamParams.penalty; every n ≥ γ weighs e^(−1), the table's last entry
    table = np.array([params.penalty(i) for i in range(min(params.max_neighbours, math.ceil(params.gamma)) + 1)])
    weight = np.where(extensions.triple[rows] >= 0, table[np.minimum(n, len(table) - 1)], 1.0)
    return Weighted(rows, weight, extensions.accumulated[rows] * weight)


def survivors(weighted: Weighted, b: int) -> list[int]:
    """top(B, b) as positions in B (Algorithm 1's order), best first; equal scores keep B's order."""
    return np.argsort(-weighted.score, kind="stable")[:b].tolist()


def top_extensions(beams: Sequence[Beam], extensions: Extensions, weighted: Weighted, b: int) -> list[Beam]:
    """top(B, b), with Beam records made only for the b that survive."""
    kept: list[Beam] = []
    for w in survivors(weighted, b):
        row = int(weighted.rows[w])
        beam, t = beams[int(extensions.beam[row])], int(extensions.triple[row])
        if t < 0:
            kept.append(beam)
            continue
        kept.append(Beam((*beam.triple_ids, t), float(weighted.score[w]),
                         (*beam.hop_scores, float(extensions.hop[row])), (*beam.penalties, float(weighted.weight[w]))))
    return kept


def initial_candidates(scored: Sequence[Beam], b: int, record: int) -> list[Candidate]:
    """B0 before top(B0, b), best first (rank n = place in that order): at least the first max(b, record)."""
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
    return [Candidate(scored[i].triple_ids[0], scored[i].score, scored[i].score, n, 1.0, scored[i].score, n < b)
            for n, i in enumerate(order[:max(b, record)])]


def hop_candidates(n_beams: int, extensions: Extensions, weighted: Weighted, b: int,
                   record: int) -> list[BeamCandidates]:
    """Each beam's V at one hop in rank order, as diversify weighed it and top(B, b) chose: the first `record` of it
    and any kept one below them."""
    kept = set(survivors(weighted, b))
    rows: list[list[tuple[int, int]]] = [[] for _ in range(n_beams)]  # per beam: (position in B, row)
    for w, row in enumerate(weighted.rows.tolist()):
        rows[int(extensions.beam[row])].append((w, row))
    found = []
    for beam, entries in enumerate(rows):
        total = sum(1 for _, row in entries if extensions.triple[row] >= 0)
        chosen = [Candidate(int(extensions.triple[row]), float(extensions.hop[row]),
                            float(extensions.accumulated[row]), n, float(weighted.weight[w]),
                            float(weighted.score[w]), w in kept)
                  for n, (w, row) in enumerate(entries) if n < record or w in kept]
        found.append(BeamCandidates(beam, total, chosen))
    return found


def flatten(beams: Sequence[Beam]) -> list[int]:
    """Triples breadth-first: hop 1 of every beam in beam order, then hop 2, …; repeats removed."""
    out: list[int] = []
    depth = max((len(b.triple_ids) for b in beams), default=0)
    for hop in range(depth):
        out.extend(b.triple_ids[hop] for b in beams if len(b.triple_ids) > hop)
    return list(dict.fromkeys(out))
