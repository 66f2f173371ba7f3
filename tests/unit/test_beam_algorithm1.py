"""`beam_search` returns what the paper's Algorithm 1 returns, written as a plain loop line by line, on random graphs.

The reference below is the pseudocode with nothing vectorised, plus the three rules the paper leaves to the
implementation (each marked where it acts): the initial triples are a set (each scored once, in first-occurrence
order), at most `max_neighbours` neighbours per beam (the most query-similar, App. B), and a beam with no neighbour
left carries forward. Scores are multiples of 1/8 and similarities integers, so that ties — where an order rule
decides — are frequent and every sum is exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gear.retrieve.beam import BeamParams, Candidate, beam_search
from gear.types import Beam
from tests.unit.test_beam import FakeBackend

Q = np.array([1.0, 0.0])
Score = Callable[[np.ndarray, Sequence[int]], float]


@dataclass
class Weighed:
    """What Algorithm 1 weighed: B0 before top(B0, b) in score order, and at each hop each beam's V in the order of
    line 18, as Candidates (triple −1: a beam with no neighbour left, carried forward), with top's verdicts."""

    initial: list[Candidate] = field(default_factory=list)
    hops: list[list[list[Candidate]]] = field(default_factory=list)


def algorithm_1(q: np.ndarray, initial: Sequence[int], b: int, l: int, score: Score, gamma: float,  # noqa: E741
                get_neighbours: Callable[[int], list[int]], similarity: Callable[[int], float],
                max_neighbours: int, diversity: bool) -> tuple[list[list[Beam]], int, Weighed]:
    """Algorithm 1 as printed, keeping each step B_0 … B_{l−1}, counting the calls of score, and keeping every
    candidate it weighed (for the lesson: gear.retrieve.beam's `record`)."""
    calls = 0
    weighed = Weighed()

    def top(beams: list[Beam], b: int) -> tuple[list[Beam], set[int]]:
        order = sorted(range(len(beams)), key=lambda i: -beams[i].score)[:b]  # stable: ties keep insertion order
        return [beams[i] for i in order], set(order)

    B0: list[Beam] = []
    for t in dict.fromkeys(initial):  # the initial triples as a set
        s = score(q, [t])
        calls += 1
        B0.append(Beam((t,), s, (s,), (1.0,)))
    first, kept = top(B0, b)
    steps = [first]
    by_score = sorted(range(len(B0)), key=lambda i: -B0[i].score)
    weighed.initial = [Candidate(B0[i].triple_ids[0], B0[i].score, B0[i].score, n, 1.0, B0[i].score, i in kept)
                       for n, i in enumerate(by_score)]
    for i in range(1, l):
        B: list[Beam] = []
        weights: list[tuple[int, Candidate]] = []  # (beam, candidate) for each entry of B, in B's order
        for j, beam in enumerate(steps[i - 1]):
            s, T = beam.score, beam.triple_ids
            V: list[tuple[float, int, float]] = []
            neighbours = [t for t in get_neighbours(T[-1]) if not any(t in other.triple_ids for other in steps[i - 1])]
            capped = sorted(sorted(neighbours, key=lambda t: (-similarity(t), t))[:max_neighbours])  # App. B
            for t in capped:
                hop = score(q, [*T, t])
                calls += 1
                V.append((s + hop, t, hop))
            if not V:  # no neighbour left: the beam carries forward
                B.append(beam)
                weights.append((j, Candidate(-1, 0.0, s, 0, 1.0, s, False)))
                continue
            V.sort(key=lambda v: -v[0])
            for n in range(len(V)):
                s_prime, t, hop = V[n]
                factor = math.exp(-min(n, gamma) / gamma) if diversity else 1.0
                B.append(Beam((*T, t), s_prime * factor, (*beam.hop_scores, hop), (*beam.penalties, factor)))
                weights.append((j, Candidate(t, hop, s_prime, n, factor, s_prime * factor, False)))
        chosen, kept = top(B, b)
        steps.append(chosen)
        per_beam: list[list[Candidate]] = [[] for _ in steps[i - 1]]
        for w, (j, c) in enumerate(weights):
            per_beam[j].append(replace(c, kept=w in kept))
        weighed.hops.append(per_beam)
    return steps, calls, weighed


@st.composite
def graphs(draw: st.DrawFn) -> tuple[dict[int, list[int]], dict[int, tuple[float, float]], dict[int, int]]:
    """Triples over a few entities (neighbours share a head or a tail), integer vectors, a weight per triple."""
    n = draw(st.integers(1, 14))
    entities = st.integers(0, 5)
    heads_tails = [(draw(entities), draw(entities)) for _ in range(n)]
    neighbours = {t: [u for u in range(n) if u != t and {*heads_tails[u]} & {*heads_tails[t]}] for t in range(n)}
    vectors = {t: (float(draw(st.integers(-3, 3))), float(draw(st.integers(-3, 3)))) for t in range(n)}
    weights = {t: draw(st.integers(0, 8)) for t in range(n)}
    return neighbours, vectors, weights


@settings(max_examples=300, deadline=None)
@given(graph=graphs(), data=st.data(), width=st.integers(1, 5), length=st.integers(1, 4),
       max_neighbours=st.integers(1, 6), gamma=st.sampled_from([0.5, 1.0, 2.5, 3.0, None]), diversity=st.booleans())
def test_beam_search_returns_the_beams_of_algorithm_1(
        graph: tuple[dict[int, list[int]], dict[int, tuple[float, float]], dict[int, int]], data: st.DataObject,
        width: int, length: int, max_neighbours: int, gamma: float | None, diversity: bool) -> None:
    neighbours, vectors, weights = graph
    initial = data.draw(st.lists(st.integers(0, len(neighbours) - 1), max_size=8))
    params = BeamParams(width, length, max_neighbours, gamma or 2.0 * width, diversity)

    def score(q: np.ndarray, sequence: Sequence[int]) -> float:
        """A sequence's score: its last triple's weight, less a little per hop, in eighths."""
        return (weights[sequence[-1]] - len(sequence) + 1) / 8

    def scorer(q: np.ndarray, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        return np.array([score(q, s) for s in sequences])

    result = beam_search(Q, initial, FakeBackend(neighbours, vectors), scorer, params)
    expected, calls, _ = algorithm_1(Q, initial, width, length, score, params.gamma, neighbours.__getitem__,
                                  lambda t: float(np.dot(vectors[t], Q)), max_neighbours, diversity)
    if not initial:
        assert result.steps == [] and result.candidates_scored == 0
        return
    assert result.steps == expected
    assert result.candidates_scored == calls


@settings(max_examples=300, deadline=None)
@given(graph=graphs(), data=st.data(), width=st.integers(1, 5), length=st.integers(1, 4),
       max_neighbours=st.integers(1, 6), gamma=st.sampled_from([0.5, 1.0, 2.5, 3.0, None]), diversity=st.booleans(),
       record=st.integers(1, 8))
def test_the_candidates_recorded_are_those_algorithm_1_weighed(
        graph: tuple[dict[int, list[int]], dict[int, tuple[float, float]], dict[int, int]], data: st.DataObject,
        width: int, length: int, max_neighbours: int, gamma: float | None, diversity: bool, record: int) -> None:
    """The lesson's candidates (gear.retrieve.beam `record`): each beam's V in line 18's order with s', n, the factor,
    s' × factor and top's verdict — the first `record` of it and every kept one — and B0 by score."""
    neighbours, vectors, weights = graph
    initial = data.draw(st.lists(st.integers(0, len(neighbours) - 1), max_size=8))
    params = BeamParams(width, length, max_neighbours, gamma or 2.0 * width, diversity)

    def score(q: np.ndarray, sequence: Sequence[int]) -> float:
        return (weights[sequence[-1]] - len(sequence) + 1) / 8

    def scorer(q: np.ndarray, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        return np.array([score(q, s) for s in sequences])

    result = beam_search(Q, initial, FakeBackend(neighbours, vectors), scorer, params, record=record)
    plain = beam_search(Q, initial, FakeBackend(neighbours, vectors), scorer, params)
    assert result.steps == plain.steps  # recording changes nothing found
    expected, _, weighed = algorithm_1(Q, initial, width, length, score, params.gamma, neighbours.__getitem__,
                                       lambda t: float(np.dot(vectors[t], Q)), max_neighbours, diversity)
    if not initial:
        assert result.steps == [] and result.initial == [] and result.hops == []
        return
    assert result.steps == expected
    assert result.initial == weighed.initial[:max(width, record)]
    assert len(result.hops) == len(weighed.hops) == length - 1
    for recorded, per_beam in zip(result.hops, weighed.hops, strict=True):
        assert [c.beam for c in recorded] == list(range(len(per_beam)))
        for found, V in zip(recorded, per_beam, strict=True):
            assert found.candidates == [c for c in V if c.rank < record or c.kept]
            assert found.total == sum(1 for c in V if c.triple >= 0)
            assert all(c.kept for c in found.candidates if c.rank >= record)
        kept = sum(c.kept for beam in recorded for c in beam.candidates)
        assert kept == min(width, sum(len(V) for V in per_beam))  # top b: every survivor is recorded
