"""The SearchBackend protocol and the text forms that every backend indexes and scores the same way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from gear.types import Passage, Scored, Triple

Method = Literal["bm25", "dense", "hybrid"]


class StoreError(RuntimeError):
    """A missing, corrupt or mismatched index; the message says which and what to do."""


def passage_text(title: str, text: str) -> str:
    """What BM25 and the dense encoder see of a passage."""
    return f"{title}\n{text}" if title else text


def triple_text(s: str, p: str, o: str) -> str:
    """What BM25 and the dense encoder see of a triple (also the query text of tripleLink / passageLink)."""
    return f"{s} {p} {o}"


def sequence_text(triples: Sequence[tuple[str, str, str]]) -> str:
    """Text of a triple sequence T for score(q, T) in Diverse Triple Beam Search."""
    return "; ".join(triple_text(*t) for t in triples)


@runtime_checkable
class SearchBackend(Protocol):
    """Passages C and triples T, searchable by BM25, dense cosine and their RRF, with the triple graph."""

    @property
    def n_passages(self) -> int: ...

    @property
    def n_triples(self) -> int: ...

    @property
    def embedder(self) -> str: ...

    def passages(self, ids: Sequence[int]) -> list[Passage]: ...

    def triples(self, ids: Sequence[int]) -> list[Triple]: ...

    def passage_of(self, triple_id: int) -> int: ...

    def passages_of(self, triple_ids: Sequence[int]) -> np.ndarray: ...

    def triples_of(self, passage_id: int) -> list[int]: ...

    def neighbours(self, triple_id: int) -> np.ndarray: ...

    def triple_vectors(self, ids: Sequence[int]) -> np.ndarray: ...

    def search_passages(self, queries: Sequence[str], k: int, method: Method,
                        query_vectors: np.ndarray | None = None) -> list[list[Scored]]: ...

    def search_triples(self, queries: Sequence[str], k: int, method: Method,
                       query_vectors: np.ndarray | None = None) -> list[list[Scored]]: ...

    def find_passage(self, title: str, text: str | None) -> int | None: ...
