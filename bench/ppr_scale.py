"""PPR retrieval (HippoRAG 2 style) at MuSiQue scale: the synthetic ≈150k-passage, ≈1.5M-triple index of
bench/scale.py, its entity graph, and per query the whole PPR retrieval (fact matching, seeds, power iteration,
ranking) beside a plain exact dense passage search on the same index in the same run.

    python bench/scale.py --scale 1 --dir /tmp/gear_scale --phase build     # once: ≈6.5 min, 7 GB peak
    python bench/ppr_scale.py --dir /tmp/gear_scale [--queries 100]

What is synthetic beyond scale.py's index: entity names there are "entity N", so their embeddings say nothing and
synonym edges cannot be found by a real cosine pass. The graph gets synonym edges at the real MuSiQue index's rate
instead (6,881 edges for 16,243 entities: 0.42 per entity), between random entity pairs, weight 2·cos with cos
uniform in [0.8, 1]. The synonym pass itself is timed on clustered synthetic name vectors (cosines within a cluster
around 0.8, so some pairs pass the threshold and some do not): exact against k-NN on a sample (time, recall of the
exact pairs), then the k-NN pass that runs at this size (above SYNONYM_EXACT_LIMIT) on as many vectors as the index
has entities, beside the exact pass extrapolated from the sample (it is quadratic). The query vectors lie near random
triples' vectors, as in scale.py.

Every measurement is one line `name value unit`, the reference beside it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import DIM, FakeEncoder, rss_gb, rss_split, unit

SYNONYMS_PER_ENTITY = 6881 / 16243  # the real MuSiQue dev index's synonym edges per entity (threshold 0.8)


def peak_rss_gb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB on Linux


def clustered_names(rng: np.random.Generator, n: int) -> np.ndarray:
    """n unit vectors in n/10 clusters; two members of a cluster have a cosine near 0.8 (noise σ = 0.5 per
    dimension around a centre of the same scale)."""
    centres = rng.standard_normal((max(1, n // 10), DIM)).astype(np.float32)
    out = np.empty((n, DIM), np.float32)
    for start in range(0, n, 200_000):
        stop = min(n, start + 200_000)
        out[start:stop] = centres[rng.integers(0, len(centres), stop - start)]
        out[start:stop] += 0.5 * rng.standard_normal((stop - start, DIM)).astype(np.float32)
    return unit(out)


def synonym_pass_at_scale(rng: np.random.Generator, n_entities: int, sample: int) -> None:
    """Exact against k-NN on a sample, then the k-NN pass on n_entities vectors (what building this graph runs)."""
    from ppr import compare_synonym_passes

    from gear.retrieve.ppr_graph import synonym_edges

    sample = min(sample, n_entities)
    vectors = clustered_names(rng, sample)
    names = [f"entity {i}" for i in range(sample)]
    t = time.perf_counter()
    synonym_edges(vectors, names, 0.8)
    sample_s = time.perf_counter() - t
    compare_synonym_passes(vectors, names, 0.8, "sample")
    del vectors
    vectors = clustered_names(rng, n_entities)
    peak = peak_rss_gb()
    t = time.perf_counter()
    edges = synonym_edges(vectors, [f"entity {i}" for i in range(n_entities)], 0.8)  # above the limit: k-NN
    knn_s = time.perf_counter() - t
    exact_h = sample_s * (n_entities / sample) ** 2 / 3600
    print(f"synonym_pass_knn_all {knn_s:.1f} s for {n_entities} names ({len(edges)} edges; process peak rss "
          f"{peak:.2f} → {peak_rss_gb():.2f} GB) ref exact extrapolated {exact_h:.1f} h "
          f"(ratio {exact_h * 3600 / knn_s:.0f}x)", flush=True)


def main() -> None:
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.index import Manifest
    from gear.retrieve.ppr import BuildCost, PPRIndex, personalized_pagerank
    from gear.retrieve.ppr_graph import SYNONYM_WEIGHT, Edges, build_graph, context_edges, relation_edges

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/gear_scale")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--synonym-sample", type=int, default=20_000, help="entities in the timed exact synonym pass")
    ap.add_argument("--skip-synonyms", action="store_true", help="skip timing the synonym passes")
    args = ap.parse_args()
    directory = Path(args.dir)
    if not (directory / "manifest.json").is_file():
        raise SystemExit(f"no index in {directory}: build it first (python bench/scale.py --scale 1 --dir "
                         f"{directory} --phase build)")

    encoder = FakeEncoder(seed=7)
    encoder.name = Manifest.read(directory).embedder
    settings = Settings(retriever="dense", method="ppr")
    engine = Engine.open(directory, settings, encoder=encoder)  # type: ignore[arg-type]
    backend = engine.backend
    _ = np.asarray(backend.triple_table.vectors).sum(), np.asarray(backend.passage_table.vectors).sum()  # paged in
    rss_index = rss_gb()
    print(f"index passages {backend.n_passages} triples {backend.n_triples} entities {len(backend.entities)}")
    print(f"rss index loaded {rss_index:.2f} GB {rss_split()}", flush=True)

    rng = np.random.default_rng(11)
    n_entities = len(backend.entities)
    if not args.skip_synonyms:
        synonym_pass_at_scale(rng, n_entities, args.synonym_sample)

    t = time.perf_counter()
    head, tail = np.asarray(backend.adjacency.head), np.asarray(backend.adjacency.tail)
    relation = relation_edges(head, tail)
    context = context_edges(head, tail, backend.triple_passage)
    n_syn = int(SYNONYMS_PER_ENTITY * n_entities)
    a, b = rng.integers(0, n_entities, n_syn), rng.integers(0, n_entities, n_syn)
    keep = a != b
    pairs = np.unique(np.stack([np.minimum(a, b)[keep], np.maximum(a, b)[keep]], axis=1), axis=0)
    synonym = Edges(pairs[:, 0], pairs[:, 1], SYNONYM_WEIGHT * rng.uniform(0.8, 1.0, len(pairs)))
    graph = build_graph(n_entities, backend.n_passages, relation, context, synonym)
    build_s = time.perf_counter() - t
    index = PPRIndex(backend, graph, BuildCost())
    rss_graph = rss_gb()
    counts = " ".join(f"{k} {v}" for k, v in graph.counts().items())
    print(f"graph_build {build_s:.2f} s (without the synonym pass) {counts}")
    matrix_mb = sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes
                    for m in (graph.adjacency, graph.transition_t)) / 1e6
    print(f"rss graph added {rss_graph - rss_index:.2f} GB (sparse matrices {matrix_mb:.0f} MB) {rss_split()}",
          flush=True)

    n = args.queries
    anchors = rng.integers(0, backend.n_triples, n)
    qvs = unit(np.asarray(backend.triple_vectors(anchors)) + 0.5 * unit(
        rng.standard_normal((n, DIM)).astype(np.float32))).astype(np.float32)
    ppr_ms, power_ms, dense_ms, iterations = [], [], [], []
    passages = np.asarray(backend.passage_table.vectors)
    for qv in qvs:
        t = time.perf_counter()
        scores = passages @ qv
        np.argpartition(-scores, 15)[:15]
        dense_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        facts = index.match_facts(qv, settings.ppr_seed_triples)
        result = index.rank(qv, facts, passage_weight=settings.ppr_passage_weight,
                            max_entities=settings.ppr_seed_entities, damping=settings.ppr_damping)
        ppr_ms.append((time.perf_counter() - t) * 1000)
        iterations.append(result.iterations)
        t = time.perf_counter()
        personalized_pagerank(graph, result.seeds.vector, settings.ppr_damping)
        power_ms.append((time.perf_counter() - t) * 1000)

    def pct(ms: list[float]) -> str:
        return f"p50 {np.percentile(ms, 50):.1f} ms p95 {np.percentile(ms, 95):.1f} ms"

    print(f"ppr_retrieval {pct(ppr_ms)} ref dense_exact_top15 {pct(dense_ms)} "
          f"ratio_p50 {np.percentile(ppr_ms, 50) / np.percentile(dense_ms, 50):.1f}x")
    print(f"ppr_power_iteration {pct(power_ms)} iterations mean {np.mean(iterations):.1f} max {max(iterations)}")
    print(f"rss after queries {rss_gb():.2f} GB {rss_split()}")


if __name__ == "__main__":
    main()
