"""Entity normalisation and the triple adjacency (CSR arrays), plus networkx views for exploration and drawing.

Two triples are neighbours when they share a head or tail entity after normalisation (paper §3.2).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

_PUNCT_EDGES = re.compile(r"^[\s\"'`“”‘’.,;:!?()\[\]{}]+|[\s\"'`“”‘’.,;:!?()\[\]{}]+$")
_SPACES = re.compile(r"\s+")


def normalise_entity(name: str) -> str:
    """Case-, width- and punctuation-insensitive form of an entity name, so "St. Peter" and "st. peter" meet."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _SPACES.sub(" ", text)
    return _PUNCT_EDGES.sub("", text)


@dataclass(frozen=True)
class Adjacency:
    """Entity ids per triple and entity → triples in CSR form; compact enough for millions of triples."""

    head: np.ndarray  # int32 [n_triples]
    tail: np.ndarray  # int32 [n_triples]
    indptr: np.ndarray  # int64 [n_entities + 1]
    indices: np.ndarray  # int32: triple ids, grouped by entity, ascending within an entity

    @property
    def n_entities(self) -> int:
        return len(self.indptr) - 1

    def triples_with_entity(self, entity: int) -> np.ndarray:
        return self.indices[self.indptr[entity]:self.indptr[entity + 1]]

    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def neighbours(self, triple: int) -> np.ndarray:
        """Triples sharing the head or tail entity of `triple`, itself excluded, ascending ids."""
        h, t = int(self.head[triple]), int(self.tail[triple])
        ip = self.indptr
        a = self.indices[ip[h]:ip[h + 1]]
        if h == t:
            out = a
        else:
            b = self.indices[ip[t]:ip[t + 1]]
            out = np.concatenate((a, b))  # both ascending: sort the pair and drop the repeats
            out.sort()
            if len(out) > 1:
                keep = np.empty(len(out), dtype=bool)
                keep[0] = True
                np.not_equal(out[1:], out[:-1], out=keep[1:])
                out = out[keep]
        return out[out != triple]


def build_adjacency(heads: Sequence[str], tails: Sequence[str]) -> tuple[Adjacency, list[str]]:
    """Map normalised entity names to ids and group triples by entity; returns the adjacency and entity names."""
    ids: dict[str, int] = {}
    names: list[str] = []

    def eid(name: str) -> int:
        key = normalise_entity(name)
        found = ids.get(key)
        if found is None:
            found = ids[key] = len(names)
            names.append(key)
        return found

    head = np.fromiter((eid(h) for h in heads), dtype=np.int32, count=len(heads))
    tail = np.fromiter((eid(t) for t in tails), dtype=np.int32, count=len(tails))
    return adjacency_from_ids(head, tail, len(names)), names


def adjacency_from_ids(head: np.ndarray, tail: np.ndarray, n_entities: int) -> Adjacency:
    n = len(head)
    triple_ids = np.arange(n, dtype=np.int32)
    ent = np.concatenate([head, tail])
    tri = np.concatenate([triple_ids, triple_ids])
    same = np.concatenate([np.zeros(n, bool), head == tail])  # a self-loop triple is listed once
    ent, tri = ent[~same], tri[~same]
    order = np.lexsort((tri, ent))
    counts = np.bincount(ent, minlength=n_entities)
    indptr = np.zeros(n_entities + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    return Adjacency(head.astype(np.int32), tail.astype(np.int32), indptr, tri[order].astype(np.int32))
