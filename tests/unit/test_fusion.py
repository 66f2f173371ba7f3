"""Reciprocal Rank Fusion: score(d) = Σ 1/(60 + rank), deterministic order."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gear.store.fusion import rrf


def test_scores_are_sums_of_reciprocal_ranks() -> None:
    fused = rrf([[1, 2, 3], [3, 4]])
    scores = {s.id: s.score for s in fused}
    assert scores == pytest.approx({1: 1 / 61, 2: 1 / 62, 3: 1 / 63 + 1 / 61, 4: 1 / 62}, abs=1e-15)
    assert [s.id for s in fused] == [3, 1, 2, 4]


def test_k_parameter_changes_the_constant() -> None:
    fused = rrf([[7, 8]], k=1)
    assert [(s.id, s.score) for s in fused] == [(7, 0.5), (8, 1 / 3)]


def test_repeated_ids_within_one_list_count_once_at_their_first_rank() -> None:
    fused = rrf([[5, 5, 6, 5], [6]])
    scores = {s.id: s.score for s in fused}
    # 6 is at rank 2 (the repeat of 5 does not take a rank), plus rank 1 in the second list
    assert scores == pytest.approx({5: 1 / 61, 6: 1 / 62 + 1 / 61}, abs=1e-15)
    assert [s.id for s in fused] == [6, 5]


def test_ties_break_by_best_rank_then_earliest_list_then_id() -> None:
    # 10 and 20 both score 1/61 + 1/62; 10 reached rank 1 in list 0, 20 rank 1 in list 1 → 10 first
    assert [s.id for s in rrf([[10, 20], [20, 10]])] == [10, 20]
    assert [s.id for s in rrf([[20, 10], [10, 20]])] == [20, 10]
    # equal scores and equal best rank: the earlier list wins, whatever the ids
    assert [s.id for s in rrf([[9], [3]])] == [9, 3]
    # same list, same rank can only happen across lists of equal content: ids decide
    assert [s.id for s in rrf([[4, 8], [8, 4], [4, 8], [8, 4]])] == [4, 8]


def test_empty_inputs() -> None:
    assert rrf([]) == []
    assert rrf([[], []]) == []
    assert [s.id for s in rrf([[], [2, 1]])] == [2, 1]


lists_strategy = st.lists(st.lists(st.integers(0, 12), max_size=10), max_size=4)


@settings(max_examples=150, deadline=None)
@given(lists_strategy)
def test_rrf_is_a_permutation_of_the_union_with_non_increasing_scores(lists: list[list[int]]) -> None:
    fused = rrf(lists)
    fused_ids = [s.id for s in fused]
    assert sorted(fused_ids) == sorted({i for lst in lists for i in lst})
    assert len(fused_ids) == len(set(fused_ids))
    scores = [s.score for s in fused]
    assert all(a >= b for a, b in pairwise(scores))
    for s in fused:  # each score is recomputable from first ranks
        expected = 0.0
        for lst in lists:
            firsts = list(dict.fromkeys(lst))
            if s.id in firsts:
                expected += 1 / (60 + firsts.index(s.id) + 1)
        assert s.score == pytest.approx(expected, abs=1e-12)
    assert rrf(lists) == fused  # deterministic
