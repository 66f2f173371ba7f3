"""Graph expansion and search at MuSiQue scale (≈150k passages, ≈1.5M triples) on a synthetic index.

    python bench/scale.py [--scale 1.0] [--dir /tmp/gear_scale] [--queries 100] [--reuse]

What is synthetic, and why:
- Entity degrees follow a discrete power law P(d) ∝ d^-α truncated at a maximum degree of 0.66 % of all entity
  slots, the share of the real top hub ("united states", 226 of 34,388 slots in /tmp/idx/musique), so hubs grow
  linearly with the corpus. α = 2.37 is fitted on the real MuSiQue OpenIE graph (16,243 entities, 17,204 triples)
  by matching its mean degree (2.117) under the same truncation; it then also reproduces the share of degree-1
  entities (71 % vs 68 % real). (The continuous MLE, 1.91, overshoots the mean degree 2× on this discrete data.)
  Triples are wired by the configuration model (entity slots shuffled into heads and tails).
- 10 triples per passage on average (real: 9.1), passage ids drawn uniformly.
- Vectors: random unit vectors around 2,000 random centres (noise 1.5× the centre norm), in place of encoder output,
  so that an IVF index meets some cluster structure; its recall here is indicative only (real embeddings cluster
  more). Passage/triple texts are random words from a 50k vocabulary, so BM25 has realistic posting lists.
- Exact mode uses a fake encoder that returns random unit vectors at a realistic per-text cost (default 1/420 s per
  text: MiniLM fp32 on 2 cores, measured), so its latency is the encoder's; the raw encode time of the candidate
  texts is printed beside it.

Every measurement is one line `name value unit [reference-name value unit]`, next to its reference measured in the
same run. The query phase runs in a fresh process so its RSS is that of the loaded index.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DIM = 384
ALPHA = 2.37
TOP_SHARE = 226 / 34388
ENCODE_RATE = 420.0  # texts per second (MiniLM fp32, 2 cores, short texts)


class FakeEncoder:
    """Random (clustered) unit vectors; `cost` seconds per text are slept to imitate the real encoder."""

    def __init__(self, dim: int = DIM, cost: float = 0.0, seed: int = 0) -> None:
        self.name, self.dim, self.cost, self.bf16 = f"fake-random-{dim}", dim, cost, False
        self.rng = np.random.default_rng(seed)
        self.centres = unit(self.rng.standard_normal((2000, dim), dtype=np.float32))
        self.encoded_texts, self.encode_seconds = 0, 0.0
        self._cache: dict[str, np.ndarray] = {}

    def vectors(self, n: int) -> np.ndarray:
        out = np.empty((n, self.dim), dtype=np.float32)
        for start in range(0, n, 100_000):  # chunked: bounded temporary memory
            m = min(100_000, n - start)
            block = self.centres[self.rng.integers(0, len(self.centres), m)]
            block += 1.5 * self.rng.standard_normal((m, self.dim), dtype=np.float32) / np.sqrt(self.dim)
            out[start:start + m] = unit(block)
        return out

    def encode(self, texts, **_kw) -> np.ndarray:
        start = time.perf_counter()
        if self.cost:
            time.sleep(self.cost * len(texts))
        out = self.vectors(len(texts))
        self.encoded_texts += len(texts)
        self.encode_seconds += time.perf_counter() - start
        return out

    def encode_cached(self, texts) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for t, v in zip(missing, self.encode(missing), strict=True):
                self._cache[t] = v
        return np.stack([self._cache[t] for t in texts]) if texts else np.zeros((0, self.dim), np.float32)


def unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def rss_gb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 1e9


def rss_split() -> str:
    """RSS split into anonymous memory (heap) and file-backed pages (memory-mapped index files: clean, shared,
    reclaimable by the kernel under pressure)."""
    fields = {}
    for row in Path("/proc/self/status").read_text().splitlines():
        key, _, value = row.partition(":")
        if key in ("RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1e6
    return f"anon {fields.get('RssAnon', float('nan')):.2f} GB file-backed {fields.get('RssFile', float('nan')):.2f} GB"


def degrees(n_slots: int, rng: np.random.Generator) -> np.ndarray:
    """Entity degrees from the truncated power law, summing to exactly n_slots."""
    dmax = max(2, int(TOP_SHARE * n_slots))
    d = np.arange(1, dmax + 1, dtype=np.float64)
    p = d ** -ALPHA
    p /= p.sum()
    mean = float((d * p).sum())
    out = rng.choice(d.astype(np.int64), size=int(n_slots / mean * 1.05) + 10, p=p)
    cut = int(np.searchsorted(np.cumsum(out), n_slots))
    out = out[: cut + 1]
    out[-1] -= int(out.sum() - n_slots)
    return out[out > 0]


def build(args: argparse.Namespace) -> None:
    from gear.data.corpus import Document
    from gear.index import build_index

    rng = np.random.default_rng(1)
    n_p, n_t = int(150_000 * args.scale), int(1_500_000 * args.scale)
    t0 = time.perf_counter()
    deg = degrees(2 * n_t, rng)
    slots = rng.permutation(np.repeat(np.arange(len(deg)), deg))
    heads, tails = slots[:n_t], slots[n_t:]
    owner = np.sort(rng.integers(0, n_p, n_t))
    words = np.array([f"w{i}" for i in range(50_000)])
    wz = 1.0 / np.arange(1, 50_001) ** 1.0  # word frequencies: Zipf, as in text
    wz /= wz.sum()
    preds = [f"relation{i} of" for i in range(3000)]
    pred = rng.integers(0, len(preds), n_t)
    docs = []
    body = rng.choice(words, size=(n_p, 60), p=wz)
    for i in range(n_p):
        docs.append(Document(f"title {i}", " ".join(body[i])))
    triples_by_doc: list[list[tuple[str, str, str]]] = [[] for _ in range(n_p)]
    for t in range(n_t):
        triples_by_doc[owner[t]].append((f"entity {heads[t]}", preds[pred[t]], f"entity {tails[t]}"))
    gen = time.perf_counter() - t0
    print(f"synthetic passages {n_p} triples {n_t} entities {len(deg)} max-degree {deg.max()} "
          f"alpha {ALPHA} generate {gen:.1f} s")
    t0 = time.perf_counter()
    manifest = build_index(docs, triples_by_doc, Path(args.dir), FakeEncoder(), source={"synthetic": True})
    build_s = time.perf_counter() - t0
    size = sum(f["bytes"] for f in manifest.files.values()) / 1e9
    print(f"build {build_s:.1f} s (n_triples {manifest.n_triples} n_entities {manifest.n_entities}) "
          f"disk {size:.2f} GB")


def query(args: argparse.Namespace) -> None:
    from gear.agent.context import beam_params
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.index import Manifest
    from gear.retrieve.expand import expand, naive_initial_nodes
    from gear.retrieve.scoring import ExactScorer, FastScorer

    directory = Path(args.dir)
    rss0 = rss_gb()
    t0 = time.perf_counter()
    encoder = FakeEncoder(cost=1.0 / args.encode_rate, seed=7)
    encoder.name = Manifest.read(directory).embedder
    engine = Engine.open(directory, Settings().with_(method="naive"), encoder=encoder)  # type: ignore[arg-type]
    load_s = time.perf_counter() - t0
    backend = engine.backend
    rss_load = rss_gb()
    # reference: what format 1 (texts as JSON lists) would cost to parse for the same triples
    spo_json = json.dumps([list(backend.spo[i]) for i in range(0, backend.n_triples)])
    t0 = time.perf_counter()
    json.loads(spo_json)
    json_s = time.perf_counter() - t0
    del spo_json
    print(f"load {load_s:.2f} s ref format-1 triples.json parse alone {json_s:.2f} s")
    print(f"rss after load {rss_load:.2f} GB ref interpreter+libraries {rss0:.2f} GB")
    t0 = time.perf_counter()
    _ = backend.passage_table.bm25_index, backend.triple_table.bm25_index  # loaded on first use
    print(f"bm25 first-use load {time.perf_counter() - t0:.2f} s rss {rss_gb():.2f} GB")

    rng = np.random.default_rng(3)
    n = args.queries
    queries = [" ".join(f"w{int(w)}" for w in rng.zipf(1.3, 6) % 50_000) for _ in range(n)]
    anchors = rng.integers(0, backend.n_triples, n)  # query vectors near real triples, as questions are
    qvs = unit(np.asarray(backend.triple_vectors(anchors)) + 0.5 * unit(
        rng.standard_normal((n, DIM)).astype(np.float32))).astype(np.float32)

    def timed(fn, items) -> list[float]:
        out = []
        for it in items:
            t = time.perf_counter()
            fn(it)
            out.append((time.perf_counter() - t) * 1000)
        return out

    def line(name: str, ms: list[float], ref: str = "", ref_ms: list[float] | None = None) -> None:
        text = f"{name} p50 {np.percentile(ms, 50):.2f} ms p95 {np.percentile(ms, 95):.2f} ms"
        if ref_ms is not None:
            text += f" ref {ref} p50 {np.percentile(ref_ms, 50):.2f} ms p95 {np.percentile(ref_ms, 95):.2f} ms"
        print(text, flush=True)

    pt, tt = backend.passage_table, backend.triple_table
    line("bm25 passages top-10", timed(lambda q: backend.search_passages([q], 10, "bm25"), queries))
    dense_p = timed(lambda v: pt.index.search(v, 10), qvs)
    fast_t = timed(lambda v: tt.index.search(v, 1), qvs)
    bm25_t = timed(lambda q: backend.search_triples([q], 10, "bm25"), queries)
    bases = [[s.id for s in pt.index.search(v, 10)[0]] for v in qvs]
    inits = [naive_initial_nodes(backend, b) for b in bases]
    params = beam_params(engine.settings)
    fast = FastScorer(backend)
    t_fast = timed(lambda i: expand(qvs[i], bases[i], inits[i], backend, fast, params), range(n))
    print(f"rss after production-path queries {rss_gb():.2f} GB {rss_split()}", flush=True)
    line(f"dense passages top-10 ({pt.index.kind})", dense_p,
         "numpy-exact", timed(lambda v: pt.index.search(v, 10, exact=True), qvs))
    exact_t = timed(lambda v: tt.index.search(v, 1, exact=True), qvs[: max(5, n // 4)])
    line(f"tripleLink dense triples top-1 ({tt.index.kind})", fast_t, "numpy-exact", exact_t)
    if tt.index.ivf is not None:
        hits = [len({s.id for s in tt.index.search(v, 10)[0]} & {s.id for s in tt.index.search(v, 10, exact=True)[0]})
                / 10 for v in qvs[:30]]
        print(f"ivf recall@10 vs exact {np.mean(hits):.3f} (synthetic vectors; indicative only)")
    line("bm25 triples top-10", bm25_t)

    # NaiveGE expansion from the top-10 passages (dense) of each query (fast mode timed above)
    n_exact = max(3, n // 10)
    enc0, cnt0 = encoder.encode_seconds, encoder.encoded_texts
    t_exact = timed(lambda i: (encoder._cache.clear(),
                               expand(qvs[i], bases[i], inits[i], backend, ExactScorer(backend, encoder), params)),
                    range(n_exact))
    encode_ms = (encoder.encode_seconds - enc0) * 1000 / n_exact
    texts = (encoder.encoded_texts - cnt0) / n_exact
    print(f"initial triples per query mean {np.mean([len(i) for i in inits]):.0f}")
    line("fast expansion", t_fast, "exact expansion (fake encoder)", t_exact)
    print(f"exact expansion encode share {encode_ms:.0f} ms of {np.mean(t_exact):.0f} ms per query "
          f"({texts:.0f} texts at {args.encode_rate:.0f}/s)")
    print(f"rss after all queries incl. numpy-exact references {rss_gb():.2f} GB {rss_split()}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="1.0 = 150k passages, 1.5M triples")
    ap.add_argument("--dir", default="/tmp/gear_scale")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--encode-rate", type=float, default=ENCODE_RATE, help="fake encoder texts/s in exact mode")
    ap.add_argument("--reuse", action="store_true", help="reuse an index already built in --dir")
    ap.add_argument("--phase", choices=["all", "build", "query"], default="all")
    args = ap.parse_args()
    if args.phase in ("all", "build") and not (args.reuse and (Path(args.dir) / "manifest.json").exists()):
        build(args)
    if args.phase == "query":
        query(args)
    elif args.phase == "all":  # a fresh process: its RSS is the loaded index, not the build
        cmd = [sys.executable, __file__, "--phase", "query", "--dir", args.dir, "--queries", str(args.queries),
               "--encode-rate", str(args.encode_rate)]
        raise SystemExit(subprocess.call(cmd, env={**os.environ}))


if __name__ == "__main__":
    main()
