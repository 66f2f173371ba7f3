"""Entity normalisation and the triple adjacency: neighbours share a head or tail entity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gear.store.graph import build_adjacency, normalise_entity


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Beatles", "the beatles"),
        ("STRAßE", "strasse"),  # casefold, not just lower()
        ("ｆｕｌｌ ｗｉｄｔｈ", "full width"),  # NFKC folds full-width forms
        ("ﬁnance", "finance"),  # and ligatures
        ('"Hello."', "hello"),
        ("“Quoted”", "quoted"),
        ("(St. Peter)", "st. peter"),  # inner punctuation stays
        ("  New\t\n  York  ", "new york"),
        ("U.S.", "u.s"),
        ("", ""),
        ("...", ""),
    ],
)
def test_normalise_entity(raw: str, expected: str) -> None:
    assert normalise_entity(raw) == expected


def test_normalise_entity_keeps_distinct_names_apart() -> None:
    assert normalise_entity("St. Peter") == normalise_entity("st. peter ")
    assert normalise_entity("St Peter") != normalise_entity("St. Peter")
    assert normalise_entity("O'Brien") == "o'brien"


HEADS = ["A", "b", "C", "E", "E", "X", "a"]
TAILS = ["B", "C", "D", "E", "F", "Y", "B."]


def test_neighbours_share_head_or_tail_after_normalisation() -> None:
    adj, names = build_adjacency(HEADS, TAILS)
    assert names == ["a", "b", "c", "e", "x", "d", "f", "y"]  # ids in order of first sight, heads first
    assert adj.neighbours(0).tolist() == [1, 6]  # 1 via B = b (tail-head), 6 shares both A and B
    assert adj.neighbours(1).tolist() == [0, 2, 6]
    assert adj.neighbours(2).tolist() == [1]
    assert adj.neighbours(6).tolist() == [0, 1]
    assert adj.neighbours(5).tolist() == []  # isolated


def test_self_loop_triple_is_listed_once_and_never_its_own_neighbour() -> None:
    adj, names = build_adjacency(HEADS, TAILS)
    assert adj.neighbours(3).tolist() == [4]
    assert adj.neighbours(4).tolist() == [3]
    e = names.index("e")
    assert adj.triples_with_entity(e).tolist() == [3, 4]
    assert int(adj.degree()[e]) == 2


def test_neighbour_ids_are_ascending_ints_and_arrays_are_compact() -> None:
    heads = ["hub"] * 6
    tails = ["z", "y", "x", "w", "v", "u"]
    adj, _ = build_adjacency(heads, tails)
    out = adj.neighbours(3)
    assert out.tolist() == [0, 1, 2, 4, 5]
    assert np.all(np.diff(out) > 0)
    assert adj.head.dtype == np.int32 and adj.indices.dtype == np.int32 and adj.indptr.dtype == np.int64
    assert adj.n_entities == 7
    assert int(adj.indptr[-1]) == len(adj.indices) == 12


def test_empty_graph() -> None:
    adj, names = build_adjacency([], [])
    assert names == [] and adj.n_entities == 0 and len(adj.indices) == 0


entity = st.sampled_from(["a", "A", "b", " b", "c.", "C", "d", "e"])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(entity, entity), min_size=1, max_size=12))
def test_neighbours_match_brute_force_and_are_symmetric(pairs: list[tuple[str, str]]) -> None:
    heads, tails = [h for h, _ in pairs], [t for _, t in pairs]
    adj, _ = build_adjacency(heads, tails)
    ents = [{normalise_entity(h), normalise_entity(t)} for h, t in pairs]
    n = len(pairs)
    for i in range(n):
        got = adj.neighbours(i).tolist()
        assert got == [j for j in range(n) if j != i and ents[i] & ents[j]]
        for j in got:
            assert i in adj.neighbours(j).tolist()
