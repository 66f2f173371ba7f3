"""The order of passages in a read prompt (gear/prompts/order.py): "rank" is the retrieval order untouched (what the
recorded runs used); "cache" puts what the previous read showed first, in its order, then the rest in rank order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gear.config import Settings
from gear.prompts.order import read_order

ids = st.lists(st.integers(0, 30), unique=True, max_size=12)


def test_rank_is_untouched_and_the_default() -> None:
    assert Settings(_env_file=None).read_order == "rank"
    assert read_order([5, 3, 9], [9, 3], "rank") == [5, 3, 9]


def test_cache_puts_the_passages_already_read_first_in_their_order() -> None:
    # the gist read after a sync read of [1, 2, 3, 4]: 2 dropped out, 7 and 8 came in from the graph
    assert read_order([7, 1, 8, 4, 3], [1, 2, 3, 4], "cache") == [1, 3, 4, 7, 8]
    assert read_order([7, 8], [1, 2], "cache") == [7, 8]  # nothing shared: rank order
    assert read_order([3, 1], [], "cache") == [3, 1]  # the first read of a run


@given(ids, ids)
def test_cache_order_is_a_permutation_led_by_the_shared_passages(passages: list[int], before: list[int]) -> None:
    ordered = read_order(passages, before, "cache")
    assert sorted(ordered) == sorted(passages)
    shared = [p for p in before if p in set(passages)]
    assert ordered[: len(shared)] == shared
    rest = ordered[len(shared):]
    assert rest == [p for p in passages if p not in set(shared)]
