"""PPR retrieval (HippoRAG 2 style) at MuSiQue scale: the synthetic ≈150k-passage, ≈1.5M-triple index of
bench/scale.py, its entity graph, and per query the whole PPR retrieval (fact matching, seeds, power iteration,
ranking) beside a plain exact dense passage search on the same index in the same run.

    python bench/scale.py --scale 1 --dir /tmp/gear_scale --phase build     # once: ≈6.5 min, 7 GB peak
    python bench/ppr_scale.py --dir /tmp/gear_scale [--queries 100]

What is synthetic beyond scale.py's index: entity names there are "entity N", so their embeddings say nothing and
synonym edges cannot be found by the real all-pairs cosine pass. The graph gets synonym edges at the real MuSiQue
index's rate instead (6,881 edges for 16,243 entities: 0.42 per entity), between random entity pairs, weight 2·cos
with cos uniform in [0.8, 1]. The exact synonym pass itself is timed on a sample of entities and extrapolated
(it is quadratic: all pairs), which says what building the real graph at this scale would cost. The query vectors
lie near random triples' vectors, as in scale.py.

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


def main() -> None:
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.index import Manifest
    from gear.retrieve.ppr import (
        SYNONYM_WEIGHT,
        BuildCost,
        Edges,
        PPRIndex,
        build_graph,
        context_edges,
        personalized_pagerank,
        relation_edges,
        synonym_edges,
    )

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/gear_scale")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--synonym-sample", type=int, default=20_000, help="entities in the timed exact synonym pass")
    args = ap.parse_args()
    directory = Path(args.dir)
    if not (directory / "manifest.json").is_file():
        raise SystemExit(f"no index in {directory}: build it first (python bench/scale.py --scale 1 --dir "
                         f"{directory} --phase build)")

    encoder = FakeEncoder(seed=7)
    encoder.name = Manifest.read(directory).embedder
    settings = Settings(retriever="dense", expand="ppr")
    engine = Engine.open(directory, settings, encoder=encoder)  # type: ignore[arg-type]
    backend = engine.backend
    _ = np.asarray(backend.triple_table.vectors).sum(), np.asarray(backend.passage_table.vectors).sum()  # paged in
    rss_index = rss_gb()
    print(f"index passages {backend.n_passages} triples {backend.n_triples} entities {len(backend.entities)}")
    print(f"rss index loaded {rss_index:.2f} GB {rss_split()}", flush=True)

    rng = np.random.default_rng(11)
    n_entities = len(backend.entities)
    sample = min(args.synonym_sample, n_entities)
    vectors = unit(rng.standard_normal((sample, DIM)).astype(np.float32))
    t = time.perf_counter()
    synonym_edges(vectors, [f"entity {i}" for i in range(sample)], 0.8)
    sample_s = time.perf_counter() - t
    print(f"synonym_pass_sample {sample_s:.2f} s for {sample} entities; all {n_entities} extrapolated "
          f"{sample_s * (n_entities / sample) ** 2 / 3600:.1f} h (all pairs: quadratic)", flush=True)

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
