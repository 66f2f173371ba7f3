"""Personalized PageRank over entities and passages, HippoRAG 2 style (Gutiérrez et al. 2025), on the index GeAR
already builds: the peer method that spreads a query's evidence through the graph without any LLM call.

The graph is gear.retrieve.ppr_graph's. The seeds (`seed_vector`): the query's best triples by dense cosine, min-max
normalised over all triples, give each of their entities the triple's score divided by the number of passages the
entity occurs in (averaged over its triples); the best few entities stay; every passage node gets its
min-max-normalised dense score times a small factor (0.05). PPR (`personalized_pagerank`) solves
x = (1−d)·s + d·(Pᵀx + (x on dangling nodes)·s), P = D⁻¹W, by power iteration on a scipy CSR matrix; passages are
ranked by x.

The index is read through the store protocol only (`SearchBackend.graph_tables`: entity names, head and tail entity
per triple, triple → passage, triple and passage vectors), so PPR runs on every backend: the embedded one hands out
views of its arrays, Elasticsearch reads them once by scroll. Building needs every entity name's embedding (the
index's encoder, once per index) and the synonym pass; both (and a server's tables) are cached beside the index
(`ppr/`) when it is writable, and the graph is kept in memory by the Engine (`PPRIndex`).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gear.files import atomic_write_bytes
from gear.retrieve.ppr_graph import (
    RELATION_WEIGHT,
    SYNONYM_WEIGHT,
    Edges,
    PPRGraph,
    build_graph,
    context_edges,
    relation_edges,
    synonym_edges,
)
from gear.store.base import GraphTables, SearchBackend
from gear.types import Scored

TOLERANCE = 1e-10  # L1 change between power iterations at which PPR stops
MAX_ITERATIONS = 100

Encode = Callable[[Sequence[str]], np.ndarray]


def personalized_pagerank(graph: PPRGraph, seeds: np.ndarray, damping: float, *, tol: float = TOLERANCE,
                          max_iterations: int = MAX_ITERATIONS) -> tuple[np.ndarray, int]:
    """Power iteration of x ← (1−d)·s + d·(Pᵀx + Σ_dangling x · s) from x = s (s normalised to sum 1); returns the
    stationary vector (sums to 1) and the number of iterations."""
    total = float(seeds.sum())
    if total <= 0:
        raise ValueError("PPR needs a seed vector with positive mass")
    s = seeds / total
    x = s.copy()
    dangling = graph.dangling
    done = 0
    while done < max_iterations:
        nxt = damping * (graph.transition_t @ x + x[dangling].sum() * s) + (1.0 - damping) * s
        change = float(np.abs(nxt - x).sum())
        x, done = nxt, done + 1
        if change < tol:
            break
    return x, done


def minmax(values: np.ndarray) -> np.ndarray:
    """(v − min) / (max − min); all ones when every value is the same (HippoRAG 2's normalisation)."""
    if len(values) == 0:
        return values.astype(np.float64)
    lo, hi = float(values.min()), float(values.max())
    if hi == lo:
        return np.ones(len(values))
    return (values.astype(np.float64) - lo) / (hi - lo)


@dataclass(frozen=True)
class Seeds:
    """The personalisation vector over all nodes (unnormalised) and the entity seeds it holds (id → weight)."""

    vector: np.ndarray
    entities: dict[int, float]


def entity_weights(facts: Sequence[Scored], head: np.ndarray, tail: np.ndarray, entity_passages: np.ndarray,
                   max_entities: int) -> dict[int, float]:
    """Each fact's score divided by the number of passages its entity occurs in, averaged over the entity's facts;
    the `max_entities` heaviest entities (ties: lower id), best first."""
    total: dict[int, float] = defaultdict(float)
    count: dict[int, int] = defaultdict(int)
    for fact in facts:
        for entity in (int(head[fact.id]), int(tail[fact.id])):
            total[entity] += fact.score / max(1, int(entity_passages[entity]))
            count[entity] += 1
    mean = {e: total[e] / count[e] for e in total}
    best = sorted(mean, key=lambda e: (-mean[e], e))[:max_entities]
    return {e: mean[e] for e in best}


def seed_vector(graph: PPRGraph, entities: dict[int, float], passage_scores: np.ndarray,
                passage_weight: float) -> Seeds:
    """Entity seeds plus every passage's normalised dense score times `passage_weight`."""
    vector = np.zeros(graph.n_nodes)
    for entity, weight in entities.items():
        vector[entity] += weight
    vector[graph.n_entities:] += passage_weight * passage_scores
    return Seeds(vector, dict(entities))


def ranked(scores: np.ndarray, k: int | None = None) -> list[Scored]:
    """Ids by descending score, ties by lower id; the first k when given."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    if k is not None:
        order = order[:k]
    return [Scored(int(i), float(scores[i])) for i in order]


# -- the per-index state -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PPRResult:
    """One query's PPR: the passage ranking (all passages), the node scores, the seeds and the facts they came
    from; `fallback` when no fact seeded the graph and the dense ranking stands (as in HippoRAG 2)."""

    ranking: list[Scored]
    scores: np.ndarray  # PPR score per node (zeros on fallback)
    seeds: Seeds
    facts: list[Scored]
    iterations: int
    fallback: bool = False


@dataclass
class BuildCost:
    """Seconds spent building the graph once, by part; whether each cached part came from disk; and the bytes the
    graph keeps, by part (the tables' memory-mapped parts count in full, though only the pages read take memory)."""

    seconds: dict[str, float] = field(default_factory=dict)
    cached: dict[str, bool] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)


def _names_key(embedder: str, names: Sequence[str]) -> str:
    h = hashlib.sha256(embedder.encode("utf-8"))
    for name in names:
        h.update(b"\n" + name.encode("utf-8"))
    return h.hexdigest()[:16]


def _load_arrays(path: Path | None, names: Sequence[str]) -> dict[str, np.ndarray] | None:
    if path is None or not path.exists():
        return None
    try:
        with np.load(path) as data:
            return {name: data[name] for name in names}
    except (OSError, ValueError, KeyError):
        return None  # a damaged cache is rebuilt


def _save_arrays(path: Path | None, **arrays: np.ndarray) -> None:
    if path is None:
        return
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as allow_pickle's bool
    with contextlib.suppress(OSError):  # a read-only index keeps its graph in memory only
        atomic_write_bytes(path, buffer.getvalue())


def _graph_bytes(graph: PPRGraph) -> int:
    matrices = sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in (graph.adjacency, graph.transition_t))
    edges = sum(e.a.nbytes + e.b.nbytes + e.w.nbytes for e in (graph.relation, graph.context, graph.synonym))
    return int(matrices + edges + graph.dangling.nbytes + graph.entity_passages.nbytes)


class PPRIndex:
    """One index's PPR graph with the arrays PPR reads (triple and passage vectors, entity ids per triple, from
    the backend's GraphTables); built once per (index, synonym threshold) and kept by the Engine."""

    def __init__(self, backend: SearchBackend, graph: PPRGraph, cost: BuildCost,
                 tables: GraphTables | None = None) -> None:
        self.backend, self.graph, self.cost = backend, graph, cost
        self.tables = tables if tables is not None else backend.graph_tables()
        self.head, self.tail = np.asarray(self.tables.head), np.asarray(self.tables.tail)
        self.entity_names: Sequence[str] = self.tables.entity_names
        self._triples = np.asarray(self.tables.triple_vectors)
        self._passages = np.asarray(self.tables.passage_vectors)

    @classmethod
    def open(cls, backend: SearchBackend, encode: Encode, threshold: float, cache: Path | None = None) -> PPRIndex:
        """Build the graph from the backend's tables, reading entity vectors and synonym edges (and a server's
        tables) from `cache` when present (written when not)."""
        cost = BuildCost()
        start = time.perf_counter()
        tables = backend.graph_tables(cache)
        if tables.source != "index":  # fetched from a server, or its copy on disk
            cost.cached["graph tables"] = tables.source == "cache"
        cost.seconds["graph tables"] = time.perf_counter() - start

        names = tables.entity_names
        key = _names_key(backend.embedder, names)
        start = time.perf_counter()
        vec_path = cache / f"entity_vectors-{key}.npz" if cache else None
        loaded = _load_arrays(vec_path, ["vectors"])
        if loaded is not None and loaded["vectors"].shape[0] == len(names):
            vectors = loaded["vectors"]
        else:
            vectors = encode(list(names)) if len(names) else np.zeros((0, 1), np.float32)
            _save_arrays(vec_path, vectors=np.asarray(vectors, dtype=np.float32))
            loaded = None
        cost.cached["entity vectors"] = loaded is not None
        cost.seconds["entity vectors"] = time.perf_counter() - start

        start = time.perf_counter()
        syn_path = cache / f"synonyms-{key}-{threshold:.4f}.npz" if cache else None
        found = _load_arrays(syn_path, ["a", "b", "w"])
        if found is not None:
            synonym = Edges(found["a"], found["b"], found["w"])
        else:
            synonym = synonym_edges(vectors, names, threshold)
            _save_arrays(syn_path, a=synonym.a, b=synonym.b, w=synonym.w)
        cost.cached["synonym edges"] = found is not None
        cost.seconds["synonym edges"] = time.perf_counter() - start

        start = time.perf_counter()
        head, tail = np.asarray(tables.head), np.asarray(tables.tail)
        graph = build_graph(len(names), backend.n_passages, relation_edges(head, tail),
                            context_edges(head, tail, tables.triple_passage), synonym)
        cost.seconds["graph"] = time.perf_counter() - start
        cost.bytes = {**tables.nbytes(), "graph": _graph_bytes(graph)}
        return cls(backend, graph, cost, tables)

    # -- one query -----------------------------------------------------------------------------------------------
    def passage_scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Dense cosine of the query with every passage."""
        return self._passages @ np.asarray(query_vector, dtype=np.float32).ravel()

    def match_facts(self, query_vector: np.ndarray, k: int) -> list[Scored]:
        """The k best triples by cosine with the query, min-max normalised over all triples; one per distinct
        (subject, predicate, object) (the index keeps a triple once per passage; HippoRAG 2 scores each fact once)."""
        n = len(self._triples)
        if n == 0 or k <= 0:
            return []
        scores = minmax(self._triples @ np.asarray(query_vector, dtype=np.float32).ravel())
        want = min(n, 4 * k)
        while True:
            top = np.argpartition(-scores, want - 1)[:want] if want < n else np.arange(n)
            top = top[np.lexsort((top, -scores[top]))]
            facts: list[Scored] = []
            seen: set[tuple[str, str, str]] = set()
            for triple in self.backend.triples([int(t) for t in top]):
                spo = (triple.subject.casefold(), triple.predicate.casefold(), triple.object.casefold())
                if spo not in seen:
                    seen.add(spo)
                    facts.append(Scored(triple.id, float(scores[triple.id])))
                    if len(facts) == k:
                        return facts
            if want == n:
                return facts
            want = min(n, 4 * want)

    def rank(self, query_vector: np.ndarray, facts: Sequence[Scored], *, passage_weight: float, max_entities: int,
             damping: float) -> PPRResult:
        """PPR from the entities of `facts` and every passage's dense score; the dense ranking when no fact is left."""
        dense = self.passage_scores(query_vector)
        entities = entity_weights(facts, self.head, self.tail, self.graph.entity_passages, max_entities)
        seeds = seed_vector(self.graph, entities, minmax(dense), passage_weight)
        if not facts or seeds.vector.sum() <= 0:
            return PPRResult(ranked(dense), np.zeros(self.graph.n_nodes), seeds, list(facts), 0, fallback=True)
        scores, iterations = personalized_pagerank(self.graph, seeds.vector, damping)
        return PPRResult(ranked(scores[self.graph.n_entities:]), scores, seeds, list(facts), iterations)

    # -- what a trace shows of the graph ------------------------------------------------------------------------
    def top_entities(self, result: PPRResult, n: int) -> list[Scored]:
        return ranked(result.scores[: self.graph.n_entities], n) if not result.fallback else []

    def edges_between(self, entities: Sequence[int], passages: Sequence[int]) -> list[tuple[str, int, int, str, float]]:
        """(kind, source, target, label, weight) of the edges among `entities` (relation: label = predicate;
        synonym: label = cosine) and from them to `passages` (context: source entity, target passage)."""
        chosen = np.asarray(sorted(set(entities)), dtype=np.int64)
        out: list[tuple[str, int, int, str, float]] = []
        if len(chosen) == 0:
            return out
        both = np.isin(self.head, chosen) & np.isin(self.tail, chosen) & (self.head != self.tail)
        labelled: dict[tuple[int, int, str], int] = {}
        for triple in self.backend.triples([int(t) for t in np.flatnonzero(both)]):
            h, t = int(self.head[triple.id]), int(self.tail[triple.id])
            labelled[(h, t, triple.predicate)] = labelled.get((h, t, triple.predicate), 0) + 1
        out.extend(("relation", h, t, p, RELATION_WEIGHT * c) for (h, t, p), c in labelled.items())
        syn = self.graph.synonym
        mask = np.isin(syn.a, chosen) & np.isin(syn.b, chosen)
        out.extend(("synonym", int(a), int(b), f"{w / SYNONYM_WEIGHT:.2f}", float(w))
                   for a, b, w in zip(syn.a[mask], syn.b[mask], syn.w[mask], strict=True))
        ctx = self.graph.context
        mask = np.isin(ctx.a, chosen) & np.isin(ctx.b, np.asarray(list(passages), dtype=np.int64))
        out.extend(("context", int(a), int(b), "", float(w))
                   for a, b, w in zip(ctx.a[mask], ctx.b[mask], ctx.w[mask], strict=True))
        return out
