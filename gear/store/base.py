"""The SearchBackend protocol and the text forms that every backend indexes and scores the same way."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from gear.types import Passage, Retriever, Scored, Triple


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


@dataclass(frozen=True)
class GraphTables:
    """The whole index as arrays, for methods that walk the entity graph at once (PPR) rather than asking for
    neighbours one triple at a time: entity e is `entity_names[e]` (normalised, gear.store.graph), triple t joins
    `head[t]` to `tail[t]` and belongs to passage `triple_passage[t]`. The embedded backend hands out views of its own
    (memory-mapped) arrays; a server-backed one fetches them once and may keep them on disk (`source` says where
    they came from: "index", "scan" or "cache")."""

    entity_names: Sequence[str]
    head: np.ndarray  # int32 [n_triples]
    tail: np.ndarray  # int32 [n_triples]
    triple_passage: np.ndarray  # int32 [n_triples]
    triple_vectors: np.ndarray  # float32 [n_triples, dims], L2-normalised (as searched)
    passage_vectors: np.ndarray  # float32 [n_passages, dims], L2-normalised
    source: str = "index"

    @property
    def n_entities(self) -> int:
        return len(self.entity_names)

    def nbytes(self) -> dict[str, int]:
        """Bytes per part; memory-mapped parts count in full, though only the pages read take memory."""
        lengths = getattr(self.entity_names, "byte_lengths", None)  # a TextColumn: one UTF-8 blob + offsets
        names = int(lengths().sum()) + 8 * (self.n_entities + 1) if callable(lengths) else \
            sum(sys.getsizeof(n) + 8 for n in self.entity_names)
        return {"vectors": int(self.triple_vectors.nbytes + self.passage_vectors.nbytes),
                "ids": int(self.head.nbytes + self.tail.nbytes + self.triple_passage.nbytes),
                "entity names": names}


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

    def triple_vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray: ...

    def search_passages(self, queries: Sequence[str], k: int, method: Retriever,
                        query_vectors: np.ndarray | None = None) -> list[list[Scored]]: ...

    def search_triples(self, queries: Sequence[str], k: int, method: Retriever,
                       query_vectors: np.ndarray | None = None) -> list[list[Scored]]: ...

    def find_passage(self, title: str, text: str | None) -> int | None: ...

    def graph_tables(self, cache: Path | None = None) -> GraphTables:
        """Every entity, triple and passage as arrays (GraphTables); a backend that has to fetch them may keep a
        copy under `cache` (a directory beside the index), keyed so that a changed index is never served a stale
        one."""
        ...
