"""Reciprocal Rank Fusion (Cormack et al., 2009), the only way GeAR combines ranked lists.

It lives with the stores because hybrid search is itself RRF of BM25 and dense lists; every other fusion of the
method (C̃q with C′q, passageLink, the agent's final ranking) reuses it from here."""

from __future__ import annotations

from collections.abc import Sequence

from gear.types import Scored


def rrf(lists: Sequence[Sequence[int]], k: int = 60) -> list[Scored]:
    """score(d) = Σ_lists 1 / (k + rank), rank from 1; a list's repeated ids count once, at their first rank.

    Ties are broken by the best rank an item reached, then by the earliest list it appeared in, then by id,
    so the same inputs always give the same order.
    """
    score: dict[int, float] = {}
    best: dict[int, tuple[int, int]] = {}
    for li, ranked in enumerate(lists):
        seen: set[int] = set()
        rank = 0
        for item in ranked:
            if item in seen:
                continue
            seen.add(item)
            rank += 1
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
            if item not in best or (rank, li) < best[item]:
                best[item] = (rank, li)
    order = sorted(score, key=lambda d: (-score[d], best[d][0], best[d][1], d))
    return [Scored(d, score[d]) for d in order]
