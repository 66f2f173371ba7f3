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

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gear.retrieve.beam import BeamParams, beam_search
from gear.types import Beam
from tests.unit.test_beam import FakeBackend

Q = np.array([1.0, 0.0])
Score = Callable[[np.ndarray, Sequence[int]], float]


def algorithm_1(q: np.ndarray, initial: Sequence[int], b: int, l: int, score: Score, gamma: float,  # noqa: E741
                get_neighbours: Callable[[int], list[int]], similarity: Callable[[int], float],
                max_neighbours: int, diversity: bool) -> tuple[list[list[Beam]], int]:
    """Algorithm 1 as printed, keeping each step B_0 … B_{l−1} and counting the calls of score."""
    calls = 0

    def top(beams: list[Beam], b: int) -> list[Beam]:
        return sorted(beams, key=lambda beam: -beam.score)[:b]  # sorted() is stable: ties keep insertion order

    B0: list[Beam] = []
    for t in dict.fromkeys(initial):  # the initial triples as a set
        s = score(q, [t])
        calls += 1
        B0.append(Beam((t,), s, (s,), (1.0,)))
    steps = [top(B0, b)]
    for i in range(1, l):
        B: list[Beam] = []
        for beam in steps[i - 1]:
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
                continue
            V.sort(key=lambda v: -v[0])
            for n in range(len(V)):
                s_prime, t, hop = V[n]
                factor = math.exp(-min(n, gamma) / gamma) if diversity else 1.0
                B.append(Beam((*T, t), s_prime * factor, (*beam.hop_scores, hop), (*beam.penalties, factor)))
        steps.append(top(B, b))
    return steps, calls


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
    expected, calls = algorithm_1(Q, initial, width, length, score, params.gamma, neighbours.__getitem__,
                                  lambda t: float(np.dot(vectors[t], Q)), max_neighbours, diversity)
    if not initial:
        assert result.steps == [] and result.candidates_scored == 0
        return
    assert result.steps == expected
    assert result.candidates_scored == calls
