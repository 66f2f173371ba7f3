"""Diverse Triple Beam Search (Alg. 1), rule by rule, on hand-built graphs with a scripted scorer."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from gear.retrieve.beam import BeamParams, beam_search, flatten, select_neighbours, top
from gear.retrieve.expand import expand, naive_initial_nodes
from gear.retrieve.scoring import ExactScorer, FastScorer
from gear.types import Beam, Triple

Q = np.array([1.0, 0.0])


class FakeBackend:
    """Just the parts of SearchBackend that beam search and expansion use; records every neighbour/vector lookup."""

    def __init__(self, neighbours: dict[int, list[int]], vectors: dict[int, Sequence[float]] | None = None,
                 passage: dict[int, int] | None = None, spo: dict[int, tuple[str, str, str]] | None = None,
                 by_passage: dict[int, list[int]] | None = None) -> None:
        self._neighbours = neighbours
        self._vectors = vectors or {}
        self._passage = passage or {}
        self._spo = spo or {}
        self._by_passage = by_passage or {}
        self.neighbour_calls: list[int] = []
        self.vector_calls: list[list[int]] = []

    def neighbours(self, triple_id: int) -> np.ndarray:
        self.neighbour_calls.append(int(triple_id))
        return np.array(sorted(self._neighbours.get(int(triple_id), [])), dtype=np.int32)

    def triple_vectors(self, ids: Sequence[int]) -> np.ndarray:
        self.vector_calls.append([int(i) for i in ids])
        return np.array([self._vectors[int(i)] for i in ids], dtype=np.float64)

    def triples(self, ids: Sequence[int]) -> list[Triple]:
        return [Triple(int(i), *self._spo[int(i)], self._passage.get(int(i), 0)) for i in ids]

    def passages_of(self, triple_ids: Sequence[int]) -> np.ndarray:
        return np.array([self._passage[int(t)] for t in triple_ids], dtype=np.int32)

    def triples_of(self, passage_id: int) -> list[int]:
        return list(self._by_passage.get(passage_id, []))


class Scripted:
    """score(q, T) from a fixed table keyed by the sequence tuple; an unscripted sequence fails the test."""

    def __init__(self, table: dict[tuple[int, ...], float]) -> None:
        self.table = table
        self.calls: list[list[tuple[int, ...]]] = []

    def __call__(self, query_vector: np.ndarray, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        self.calls.append([tuple(s) for s in sequences])
        missing = [s for s in sequences if tuple(s) not in self.table]
        assert not missing, f"scorer called on unscripted sequences {missing}"
        return np.array([self.table[tuple(s)] for s in sequences], dtype=np.float64)

    @property
    def scored(self) -> list[tuple[int, ...]]:
        return [s for call in self.calls for s in call]


def ids(beams: list[Beam]) -> list[tuple[int, ...]]:
    return [b.triple_ids for b in beams]


# (a) ------------------------------------------------------------------------------------------------------------------
def test_b0_is_top_b_of_initial_triples_and_duplicates_count_once() -> None:
    backend = FakeBackend({})
    scorer = Scripted({(3,): 0.7, (1,): 0.5, (2,): 0.9})
    result = beam_search(Q, [3, 1, 2, 1, 3], backend, scorer, BeamParams(width=2, length=1))
    assert scorer.calls == [[(3,), (1,), (2,)]]  # each initial triple scored once, first-occurrence order
    assert result.candidates_scored == 3
    assert ids(result.beams) == [(2,), (3,)]
    assert [b.score for b in result.beams] == [0.9, 0.7]
    assert [b.hop_scores for b in result.beams] == [(0.9,), (0.7,)]
    assert [b.penalties for b in result.beams] == [(1.0,), (1.0,)]


def test_no_initial_triples_gives_no_beams() -> None:
    scorer = Scripted({})
    result = beam_search(Q, [], FakeBackend({}), scorer, BeamParams())
    assert result.beams == [] and result.steps == [] and scorer.calls == []


# (b) ------------------------------------------------------------------------------------------------------------------
def test_scores_accumulate_along_a_beam_and_hop_scores_stay_raw() -> None:
    backend = FakeBackend({0: [1], 1: [0, 2], 2: [1]})
    scorer = Scripted({(0,): 0.5, (0, 1): 0.25, (0, 1, 2): 0.125})
    result = beam_search(Q, [0], backend, scorer, BeamParams(width=1, length=3, gamma=2.0))
    assert len(result.steps) == 3
    [beam] = result.beams
    assert beam.triple_ids == (0, 1, 2)
    assert beam.score == 0.5 + 0.25 + 0.125  # s' = s + score(q, T∘t), one candidate per beam: factor 1
    assert beam.hop_scores == (0.5, 0.25, 0.125)
    assert beam.penalties == (1.0, 1.0, 1.0)
    assert [b.score for b in result.steps[1]] == [0.75]
    # at the third step triple 0 (in the previous step's beam) was not a candidate again
    assert scorer.calls[-1] == [(0, 1, 2)]


# (c) ------------------------------------------------------------------------------------------------------------------
def test_penalty_factor_values() -> None:
    p = BeamParams(gamma=2.0)
    assert p.penalty(0) == 1.0
    assert p.penalty(1) == pytest.approx(math.exp(-0.5), abs=1e-15)
    assert p.penalty(2) == pytest.approx(math.exp(-1.0), abs=1e-15)
    assert p.penalty(7) == pytest.approx(math.exp(-1.0), abs=1e-15)  # capped at n = γ
    assert BeamParams(gamma=20.0).penalty(5) == pytest.approx(math.exp(-0.25), abs=1e-15)
    off = BeamParams(gamma=2.0, diversity=False)
    assert [off.penalty(n) for n in range(5)] == [1.0] * 5


FAN = {0: [1, 2, 3, 4], 1: [0], 2: [0], 3: [0], 4: [0]}
FAN_SCORES = {(0,): 1.0, (0, 1): 0.5, (0, 2): 0.25, (0, 3): 0.75, (0, 4): 0.125}


def test_diversity_penalty_by_rank_within_the_beam() -> None:
    result = beam_search(Q, [0], FakeBackend(FAN), Scripted(FAN_SCORES), BeamParams(width=10, length=2, gamma=2.0))
    # accumulated: t3 1.75 (n=0), t1 1.5 (n=1), t2 1.25 (n=2), t4 1.125 (n=3, capped at γ=2)
    assert ids(result.beams) == [(0, 3), (0, 1), (0, 2), (0, 4)]
    expected = [1.75, 1.5 * math.exp(-0.5), 1.25 * math.exp(-1.0), 1.125 * math.exp(-1.0)]
    assert [b.score for b in result.beams] == pytest.approx(expected, abs=1e-12)
    assert [b.penalties[1] for b in result.beams] == pytest.approx(
        [1.0, math.exp(-0.5), math.exp(-1.0), math.exp(-1.0)], abs=1e-15)
    assert [b.hop_scores for b in result.beams] == [(1.0, 0.75), (1.0, 0.5), (1.0, 0.25), (1.0, 0.125)]


def test_no_penalty_when_diversity_is_off() -> None:
    params = BeamParams(width=10, length=2, gamma=2.0, diversity=False)
    result = beam_search(Q, [0], FakeBackend(FAN), Scripted(FAN_SCORES), params)
    assert ids(result.beams) == [(0, 3), (0, 1), (0, 2), (0, 4)]
    assert [b.score for b in result.beams] == [1.75, 1.5, 1.25, 1.125]
    assert all(b.penalties == (1.0, 1.0) for b in result.beams)


# (d) ------------------------------------------------------------------------------------------------------------------
def test_triples_in_any_beam_of_the_previous_step_are_skipped() -> None:
    # B0 keeps 0 and 1 (5 scores too low); 1 is a neighbour of 0 and 0 of 1, so both are skipped,
    # while 5, an initial triple that did not make B0, is still a candidate.
    backend = FakeBackend({0: [1, 2, 5], 1: [0, 3], 2: [0], 3: [1], 5: [0]})
    scorer = Scripted({(0,): 0.5, (1,): 0.25, (5,): 0.125, (0, 2): 0.5, (0, 5): 0.25, (1, 3): 0.5})
    result = beam_search(Q, [0, 1, 5], backend, scorer, BeamParams(width=2, length=2, diversity=False))
    assert ids(result.steps[0]) == [(0,), (1,)]
    assert scorer.calls[1] == [(0, 2), (0, 5), (1, 3)]
    assert ids(result.beams) == [(0, 2), (0, 5)]
    assert [b.score for b in result.beams] == [1.0, 0.75]


# (e) ------------------------------------------------------------------------------------------------------------------
def test_beam_without_remaining_neighbours_carries_forward_unchanged() -> None:
    # beam 0's only neighbour (1) is itself in B0, so it has no candidates left and carries forward
    backend = FakeBackend({0: [1], 1: [0, 2], 2: [1]})
    scorer = Scripted({(0,): 0.5, (1,): 0.25, (1, 2): 0.125})
    result = beam_search(Q, [0, 1], backend, scorer, BeamParams(width=2, length=2, gamma=2.0))
    assert scorer.calls[1] == [(1, 2)]
    assert result.beams[0] == result.steps[0][0] == Beam((0,), 0.5, (0.5,), (1.0,))
    assert result.beams[1] == Beam((1, 2), 0.375, (0.25, 0.125), (1.0, 1.0))


def test_carried_beam_competes_in_top_b() -> None:
    backend = FakeBackend({0: [], 1: [2, 3], 2: [1], 3: [1]})
    scorer = Scripted({(0,): 0.25, (1,): 0.5, (1, 2): 0.5, (1, 3): 0.25})
    result = beam_search(Q, [0, 1], backend, scorer, BeamParams(width=2, length=2, diversity=False))
    assert ids(result.beams) == [(1, 2), (1, 3)]  # the carried (0,) at 0.25 loses to 1.0 and 0.75
    assert [b.score for b in result.beams] == [1.0, 0.75]
    wider = beam_search(Q, [0, 1], backend, scorer, BeamParams(width=3, length=2, diversity=False))
    assert ids(wider.beams) == [(1, 2), (1, 3), (0,)]


# (f) ------------------------------------------------------------------------------------------------------------------
def test_top_is_global_and_ties_keep_insertion_order() -> None:
    beams = [Beam((i,), s, (s,), (1.0,)) for i, s in [(9, 1.0), (4, 2.0), (7, 2.0), (1, 1.0), (0, 0.5)]]
    assert ids(top(beams, 3)) == [(4,), (7,), (9,)]
    assert ids(top(beams, 10)) == [(4,), (7,), (9,), (1,), (0,)]


def test_top_b_across_beams_with_ties_is_deterministic() -> None:
    backend = FakeBackend({4: [2, 3], 2: [4], 3: [4], 8: [5], 5: [8]})
    # B0: three equal scores, width 2 keeps the first two in input order (4 and 8, not the smallest ids)
    scorer = Scripted({(4,): 0.5, (8,): 0.5, (6,): 0.5, (4, 2): 0.5, (4, 3): 0.5, (8, 5): 0.5})
    params = BeamParams(width=2, length=2, diversity=False)
    result = beam_search(Q, [4, 8, 6], backend, scorer, params)
    assert ids(result.steps[0]) == [(4,), (8,)]
    # all three candidates tie at 1.0; global top-2 keeps beam 4's two (inserted first), not one per beam
    assert ids(result.beams) == [(4, 2), (4, 3)]
    again = beam_search(Q, [4, 8, 6], backend, Scripted(scorer.table), params)
    assert ids(again.beams) == ids(result.beams)


# (g) ------------------------------------------------------------------------------------------------------------------
def test_neighbour_cap_scores_only_the_most_query_similar() -> None:
    vectors = {0: [1, 0], 1: [0, 1], 2: [1, 0], 3: [0.6, 0.8], 4: [0.8, 0.6], 5: [-1, 0]}
    backend = FakeBackend({0: [1, 2, 3, 4, 5]}, vectors=vectors)
    scorer = Scripted({(0,): 1.0, (0, 2): 0.5, (0, 4): 0.25})
    result = beam_search(Q, [0], backend, scorer, BeamParams(width=5, length=2, max_neighbours=2, gamma=2.0))
    assert scorer.calls[1] == [(0, 2), (0, 4)]
    assert not {t for seq in scorer.scored for t in seq} & {1, 3, 5}
    assert backend.vector_calls == [[1, 2, 3, 4, 5]]
    assert ids(result.beams) == [(0, 2), (0, 4)]
    assert result.candidates_scored == 3


def test_neighbour_cap_untouched_below_the_limit_and_ties_keep_lower_ids() -> None:
    backend = FakeBackend({}, vectors={3: [1, 0], 7: [1, 0], 9: [0, 1]})
    same = np.array([3, 7, 9])
    assert select_neighbours(backend, Q, same, 3).tolist() == [3, 7, 9]
    assert backend.vector_calls == []  # no similarity needed when nothing is cut
    assert select_neighbours(backend, Q, np.array([9, 7, 3]), 1).tolist() == [3]
    assert select_neighbours(backend, Q, np.array([9, 7, 3]), 2).tolist() == [3, 7]


# (h) ------------------------------------------------------------------------------------------------------------------
def test_flatten_is_breadth_first_without_repeats() -> None:
    beams = [Beam(t, 0.0, (), ()) for t in [(0, 1), (2,), (0, 3), (4, 1, 5)]]
    assert flatten(beams) == [0, 2, 4, 1, 3, 5]
    assert flatten([]) == []


# (i) ------------------------------------------------------------------------------------------------------------------
def test_expand_maps_flattened_triples_to_passages_and_fuses_with_rrf() -> None:
    backend = FakeBackend({0: [1], 1: [0], 3: [2], 2: [3]}, passage={0: 10, 1: 11, 2: 10, 3: 12})
    scorer = Scripted({(0,): 0.5, (3,): 0.25, (0, 1): 0.5, (3, 2): 0.5})
    exp = expand(Q, [11, 10, 13], [0, 3, 0], backend, scorer, BeamParams(width=2, length=2, gamma=2.0))
    assert exp.initial == [0, 3]
    assert ids(exp.search.beams) == [(0, 1), (3, 2)]
    # flatten [0, 3, 1, 2] → passages [10, 12, 11, 10] → unique [10, 12, 11]
    assert exp.expanded == [10, 12, 11]
    expected = {10: 1 / 61 + 1 / 62, 11: 1 / 63 + 1 / 61, 12: 1 / 62, 13: 1 / 63}
    assert [s.id for s in exp.fused] == [10, 11, 12, 13]
    assert [s.score for s in exp.fused] == pytest.approx([expected[i] for i in (10, 11, 12, 13)], abs=1e-15)


def test_expand_with_no_initial_triples_keeps_the_base_order() -> None:
    exp = expand(Q, [5, 2, 9], [], FakeBackend({}), Scripted({}), BeamParams())
    assert exp.expanded == []
    assert [s.id for s in exp.fused] == [5, 2, 9]
    assert [s.score for s in exp.fused] == pytest.approx([1 / 61, 1 / 62, 1 / 63])


def test_naive_initial_nodes_are_all_triples_of_the_base_passages_in_rank_order() -> None:
    backend = FakeBackend({}, by_passage={1: [4, 5], 2: [0], 3: []})
    assert naive_initial_nodes(backend, [2, 3, 1]) == [0, 4, 5]


# (j) ------------------------------------------------------------------------------------------------------------------
def test_diversity_lets_a_second_beam_survive() -> None:
    backend = FakeBackend({0: [2, 3], 1: [4], 2: [0], 3: [0], 4: [1]})
    scorer = {(0,): 1.0, (1,): 0.5, (0, 2): 0.5, (0, 3): 0.5, (1, 4): 0.75}
    plain = beam_search(Q, [0, 1], backend, Scripted(scorer), BeamParams(width=2, length=2, diversity=False))
    assert ids(plain.beams) == [(0, 2), (0, 3)]  # 1.5, 1.5 beat 1.25: both extend beam 0
    diverse = beam_search(Q, [0, 1], backend, Scripted(scorer), BeamParams(width=2, length=2, gamma=2.0))
    assert ids(diverse.beams) == [(0, 2), (1, 4)]  # (0, 3) drops to 1.5·e^-0.5 ≈ 0.91 < 1.25
    assert [b.score for b in diverse.beams] == pytest.approx([1.5, 1.25], abs=1e-15)


# (k) ------------------------------------------------------------------------------------------------------------------
def test_length_one_returns_only_b0() -> None:
    backend = FakeBackend({0: [1], 1: [0]})
    scorer = Scripted({(0,): 0.5, (1,): 0.25})
    result = beam_search(Q, [0, 1], backend, scorer, BeamParams(width=10, length=1))
    assert len(result.steps) == 1
    assert ids(result.beams) == [(0,), (1,)]
    assert backend.neighbour_calls == []
    assert len(scorer.calls) == 1


# scorers ----------------------------------------------------------------------------------------------------------
class RecordingEncoder:
    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.calls: list[list[str]] = []

    def encode_cached(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)


def test_exact_scorer_encodes_the_sequence_text() -> None:
    backend = FakeBackend({}, spo={0: ("Magic Johnson", "played for", "Michigan State"),
                                   1: ("Michigan State", "won", "NCAA title")})
    one = "Magic Johnson played for Michigan State"
    two = "Magic Johnson played for Michigan State; Michigan State won NCAA title"
    encoder = RecordingEncoder({one: [0.6, 0.8], two: [0.0, 1.0]})
    scores = ExactScorer(backend, encoder)(np.array([1.0, 0.0], dtype=np.float32), [(0,), (0, 1)])
    assert encoder.calls == [[one, two]]  # one batch for the whole step
    assert scores.tolist() == pytest.approx([0.6, 0.0])
    assert ExactScorer(backend, encoder)(Q, []).shape == (0,)


def test_fast_scorer_is_the_normalised_mean_of_triple_vectors() -> None:
    backend = FakeBackend({}, vectors={0: [1.0, 0.0], 1: [0.0, 1.0], 2: [0.6, 0.8]})
    scores = FastScorer(backend)(Q, [(0,), (1,), (0, 1), (0, 2)])
    mean02 = np.array([1.6, 0.8]) / np.linalg.norm([1.6, 0.8])
    assert scores.tolist() == pytest.approx([1.0, 0.0, 1 / math.sqrt(2), float(mean02[0])], abs=1e-6)
