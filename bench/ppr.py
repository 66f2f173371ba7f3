"""PPR retrieval (HippoRAG 2 style) on a built index: the one-off graph build, and per query the PPR power iteration
beside networkx.pagerank on the very same graph and seeds (the alternative the issue names), and the whole PPR
retrieval beside a plain dense passage search.

    python bench/ppr.py [data/indexes/musique] [--qa assets/musique/musique_dev50.json] [--nx 10] [--cold]

--cold removes the index's PPR cache (`<index>/ppr/`) first, so the entity names are encoded again.
The synonym pass is also run both ways on the index's own entity vectors: the exact all-pairs pass (the default up
to SYNONYM_EXACT_LIMIT names) and the faiss k-NN pass used above it, with the share of exact pairs the k-NN finds.
Output: one measurement per line, `name value unit`, script-readable.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

import networkx as nx
import numpy as np

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.questions import load_qa
from gear.retrieve.ppr import personalized_pagerank
from gear.retrieve.ppr_graph import Edges, synonym_edges


def compare_synonym_passes(vectors: np.ndarray, names: list[str], threshold: float, label: str) -> None:
    """Time the exact and the k-NN synonym pass on the same vectors; print the k-NN's recall of the exact pairs."""
    def pairs(e: Edges) -> set[tuple[int, int]]:
        return set(zip(e.a.tolist(), e.b.tolist(), strict=True))

    t = time.perf_counter()
    exact = pairs(synonym_edges(vectors, names, threshold))
    exact_s = time.perf_counter() - t
    t = time.perf_counter()
    knn = pairs(synonym_edges(vectors, names, threshold, exact_limit=0))
    knn_s = time.perf_counter() - t
    recall = len(knn & exact) / max(1, len(exact))
    print(f"synonym_pass_exact_{label} {exact_s:.2f} s ({len(names)} names, {len(exact)} edges)")
    print(f"synonym_pass_knn_{label} {knn_s:.2f} s ({len(knn)} edges; recall of the exact edges {recall:.4f}; "
          f"edges not in the exact set {len(knn - exact)}; ratio exact/knn {exact_s / knn_s:.1f}x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("index", nargs="?", default="data/indexes/musique")
    parser.add_argument("--qa", default="assets/musique/musique_dev50.json")
    parser.add_argument("--nx", type=int, default=10, help="questions also run through networkx.pagerank")
    parser.add_argument("--cold", action="store_true", help="remove the PPR cache first")
    args = parser.parse_args()
    if args.cold:
        shutil.rmtree(Path(args.index) / "ppr", ignore_errors=True)
    settings = Settings(retriever="dense", method="ppr")
    engine = Engine.open(args.index, settings)
    questions, _ = load_qa(Path(args.qa))
    engine.encoder.encode_cached([q.question for q in questions])  # queries encoded up front: not what is timed

    start = time.perf_counter()
    index = engine.ppr_index(settings)
    print(f"graph_build_total {time.perf_counter() - start:.2f} s")
    for part, seconds in index.cost.seconds.items():
        cached = index.cost.cached.get(part)
        print(f"graph_build_{part.replace(' ', '_')} {seconds:.3f} s{' (from cache)' if cached else ''}")
    for name, value in index.graph.counts().items():
        print(f"graph_{name} {value} count")
    for part, size in index.cost.bytes.items():  # the tables' memory-mapped parts count in full
        print(f"graph_memory_{part.replace(' ', '_')} {size / 2**20:.1f} MiB")
    for cached in sorted((Path(args.index) / "ppr").glob("entity_vectors-*.npz")):
        with np.load(cached) as data:
            vectors = data["vectors"]
        if len(vectors) == len(index.entity_names):
            compare_synonym_passes(vectors, list(index.entity_names), settings.ppr_synonym_threshold, "index")

    ppr_ms, full_ms, dense_ms, nx_ms, iterations, agree = [], [], [], [], [], []
    graph = None
    for n, q in enumerate(questions):
        qv = engine.encode_query(q.question)
        t = time.perf_counter()
        engine.backend.search_passages([q.question], 15, "dense", qv[None, :])
        dense_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        facts = index.match_facts(qv, settings.ppr_seed_triples)
        result = index.rank(qv, facts, passage_weight=settings.ppr_passage_weight,
                            max_entities=settings.ppr_seed_entities, damping=settings.ppr_damping)
        full_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        _, done = personalized_pagerank(index.graph, result.seeds.vector, settings.ppr_damping)
        ppr_ms.append((time.perf_counter() - t) * 1000)
        iterations.append(done)
        if n < args.nx:
            if graph is None:
                t = time.perf_counter()
                graph = nx.from_scipy_sparse_array(index.graph.adjacency)
                print(f"networkx_graph_from_scipy {time.perf_counter() - t:.2f} s")
            seeds = {i: float(v) for i, v in enumerate(result.seeds.vector)}
            t = time.perf_counter()
            ref = nx.pagerank(graph, alpha=settings.ppr_damping, personalization=seeds, weight="weight", tol=1e-10)
            nx_ms.append((time.perf_counter() - t) * 1000)
            ours = [r.id for r in result.ranking[:15]]
            e = index.graph.n_entities
            theirs = sorted(range(index.graph.n_passages), key=lambda p: (-ref[e + p], p))[:15]
            agree.append(ours == theirs)

    def p50(values: list[float]) -> float:
        return float(np.percentile(values, 50))

    print(f"ppr_power_iteration_p50 {p50(ppr_ms):.2f} ms (iterations p50 {p50(iterations):.0f})")
    print(f"ppr_retrieval_p50 {p50(full_ms):.2f} ms (triple matching + seeds + PPR + ranking)")
    print(f"dense_search_p50 {p50(dense_ms):.2f} ms (reference: plain dense top-15)")
    if nx_ms:
        print(f"networkx_pagerank_p50 {p50(nx_ms):.1f} ms over {len(nx_ms)} questions "
              f"(ratio networkx/ours {p50(nx_ms) / p50(ppr_ms):.0f}x; same top-15 in {sum(agree)}/{len(agree)})")


if __name__ == "__main__":
    main()
