"""The graph HippoRAG 2's Personalized PageRank walks (Gutiérrez et al. 2025), built from the index GeAR already has:
one node per normalised entity (gear.store.graph) and one per passage, entities first (passage p is node E + p).

- relation edges head ↔ tail, one per triple, weight 2 per triple: HippoRAG 2 adds every fact edge in both
  directions to an undirected igraph graph, so it counts twice there; we keep those effective weights;
- context edges passage ↔ each entity of its triples, weight 1 (added once in HippoRAG 2);
- synonym edges entity ↔ entity when the cosine of their name embeddings is ≥ a threshold (0.8), weight 2·cos
  (both directions again), at most 100 per entity, none for names with fewer than 3 letters or digits. The pass is
  exact (all pairs) up to SYNONYM_EXACT_LIMIT names and a faiss k-NN search above it: all pairs is quadratic, hours
  near a million names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from gear.store.vectors import VectorIndex, self_knn

RELATION_WEIGHT = 2.0  # per triple
CONTEXT_WEIGHT = 1.0
SYNONYM_WEIGHT = 2.0  # times the cosine
MAX_SYNONYMS = 100  # per entity (HippoRAG 2 stops after 100 neighbours above the threshold)
MIN_ALNUM = 3  # shorter names ("a", "uk") take no synonym edges
SYNONYM_EXACT_LIMIT = 100_000  # names; above it the synonym pass is a faiss k-NN search (bench/ppr_scale.py)


@dataclass(frozen=True)
class Edges:
    """Undirected weighted edges as parallel arrays, each pair once (a < b for entity pairs; for context edges
    a is the entity and b the passage id)."""

    a: np.ndarray
    b: np.ndarray
    w: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    @classmethod
    def empty(cls) -> Edges:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))


def relation_edges(head: np.ndarray, tail: np.ndarray) -> Edges:
    """head ↔ tail of each triple (self-loops dropped), weight RELATION_WEIGHT times the number of triples."""
    keep = head != tail
    if not keep.any():
        return Edges.empty()
    a = np.minimum(head, tail)[keep].astype(np.int64)
    b = np.maximum(head, tail)[keep].astype(np.int64)
    pairs, counts = np.unique(np.stack([a, b], axis=1), axis=0, return_counts=True)
    return Edges(pairs[:, 0], pairs[:, 1], RELATION_WEIGHT * counts.astype(np.float64))


def context_edges(head: np.ndarray, tail: np.ndarray, triple_passage: np.ndarray) -> Edges:
    """entity ↔ passage for every entity of the passage's triples, weight CONTEXT_WEIGHT."""
    if len(head) == 0:
        return Edges.empty()
    entity = np.concatenate([head, tail]).astype(np.int64)
    passage = np.concatenate([triple_passage, triple_passage]).astype(np.int64)
    pairs = np.unique(np.stack([entity, passage], axis=1), axis=0)
    return Edges(pairs[:, 0], pairs[:, 1], np.full(len(pairs), CONTEXT_WEIGHT))


def _exact_neighbours(m: np.ndarray, threshold: float, max_per_entity: int
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, cosine) of every pair at or above `threshold`, each row's best `max_per_entity`, by an
    all-pairs pass in blocks of rows."""
    n = len(m)
    block = max(16, min(4096, (1 << 24) // n))
    rows, cols, sims = [], [], []
    for start in range(0, n, block):
        s = m[start:start + block] @ m.T
        r = np.arange(s.shape[0])
        s[r, start + r] = -np.inf  # an entity is not its own synonym
        hit_r, hit_c = np.nonzero(s >= threshold)
        if len(hit_r) == 0:
            continue
        vals = s[hit_r, hit_c]
        order = np.lexsort((hit_c, -vals, hit_r))  # per row, best first
        hit_r, hit_c, vals = hit_r[order], hit_c[order], vals[order]
        rank = np.arange(len(hit_r)) - np.searchsorted(hit_r, hit_r, side="left")
        keep = rank < max_per_entity
        rows.append(start + hit_r[keep])
        cols.append(hit_c[keep])
        sims.append(vals[keep])
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(sims)


def _approximate_neighbours(m: np.ndarray, threshold: float, max_per_entity: int
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same pairs from each row's `max_per_entity` nearest rows by a faiss IVF search (HippoRAG 2 also takes a
    k-NN list per entity and keeps its members above the threshold)."""
    rows, cols, vals = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.float32)]
    for start, sims, ids in self_knn(m, max_per_entity):
        hit_r, hit_k = np.nonzero((sims >= threshold) & (ids >= 0))
        rows.append(start + hit_r)
        cols.append(ids[hit_r, hit_k])
        vals.append(sims[hit_r, hit_k])
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def synonym_edges(vectors: np.ndarray, names: Sequence[str], threshold: float,
                  max_per_entity: int = MAX_SYNONYMS, *, exact_limit: int = SYNONYM_EXACT_LIMIT) -> Edges:
    """Entity pairs whose (normalised) name vectors have cosine ≥ threshold: each entity keeps its best
    `max_per_entity`; a pair is an edge when either end keeps it; weight SYNONYM_WEIGHT·cos. Exact up to
    `exact_limit` eligible names (O(n²·d): seconds at 16k, minutes at 100k); above it a faiss IVF k-NN pass
    (approximate; without faiss the exact pass runs, however long)."""
    eligible = np.flatnonzero([sum(ch.isalnum() for ch in name) >= MIN_ALNUM for name in names])
    if len(eligible) < 2:
        return Edges.empty()
    m = np.ascontiguousarray(vectors[eligible], dtype=np.float32)
    approximate = VectorIndex.wants_ivf(len(m), threshold=exact_limit + 1)  # and faiss is installed
    neighbours = _approximate_neighbours if approximate else _exact_neighbours
    hit_r, hit_c, vals = neighbours(m, threshold, max_per_entity)
    if len(hit_r) == 0:
        return Edges.empty()
    r, c, v = eligible[hit_r], eligible[hit_c], vals.astype(np.float64)
    a, b = np.minimum(r, c).astype(np.int64), np.maximum(r, c).astype(np.int64)
    pairs, first = np.unique(np.stack([a, b], axis=1), axis=0, return_index=True)
    return Edges(pairs[:, 0], pairs[:, 1], SYNONYM_WEIGHT * v[first])


@dataclass(frozen=True)
class PPRGraph:
    """Entities are nodes 0…E−1, passage p is node E+p; `adjacency` is the symmetric weight matrix W and
    `transition_t` is Pᵀ = W·D⁻¹ (the columns of dangling nodes are zero: their mass returns through the seeds)."""

    n_entities: int
    n_passages: int
    adjacency: sp.csr_matrix
    transition_t: sp.csr_matrix
    dangling: np.ndarray  # bool per node: no edge at all
    entity_passages: np.ndarray  # passages each entity occurs in
    relation: Edges
    context: Edges
    synonym: Edges

    @property
    def n_nodes(self) -> int:
        return self.n_entities + self.n_passages

    def counts(self) -> dict[str, int]:
        return {"entities": self.n_entities, "passages": self.n_passages, "relation_edges": len(self.relation),
                "context_edges": len(self.context), "synonym_edges": len(self.synonym)}


def build_graph(n_entities: int, n_passages: int, relation: Edges, context: Edges, synonym: Edges) -> PPRGraph:
    """The undirected weighted graph of the three edge kinds, with its transition matrix for PPR."""
    n = n_entities + n_passages
    a = np.concatenate([relation.a, synonym.a, context.a])
    b = np.concatenate([relation.b, synonym.b, context.b + n_entities])
    w = np.concatenate([relation.w, synonym.w, context.w])
    adjacency = sp.csr_matrix((np.concatenate([w, w]), (np.concatenate([a, b]), np.concatenate([b, a]))),
                              shape=(n, n))
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    transition_t = (adjacency @ sp.diags(inverse)).tocsr()
    entity_passages = np.bincount(context.a, minlength=n_entities) if len(context) else np.zeros(n_entities, int)
    return PPRGraph(n_entities, n_passages, adjacency, transition_t, degree == 0, entity_passages,
                    relation, context, synonym)
