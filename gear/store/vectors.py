"""Dense top-k over normalised vectors: exact NumPy below a measured size, a faiss IVF index above it.

Below `IVF_THRESHOLD` rows an exact float32 matmul is as fast as an IVF probe and has no approximation, so small and
medium indexes (the MuSiQue / HotpotQA / 2Wiki dev corpora: ≤ 100k triples) keep exact, reproducible results. Above
it a faiss IVF index (8-bit scalar quantised, inner product; candidates re-ranked by exact cosine) is built once at
index time, saved next to the vectors and memory-mapped on load (bench/scale.py measures both paths side by side).

Measured on this machine (2 shared cores, 384 dims, top-10, one query; `python -m gear.store.vectors`):
exact NumPy ≈ 0.2 ms at 10k, 1.9 ms at 100k, 4 ms at 200k, 30 ms at 1.5M rows; IVF (nlist = √n, nprobe = nlist/16)
≈ 1–3 ms from 200k rows up. The curves cross near 200k rows, so IVF_THRESHOLD = 200_000.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from gear.types import Scored

IVF_THRESHOLD = 200_000
IVF_SUFFIX = ".ivf"
RERANK_FACTOR = 4  # IVF candidates per result, re-ranked by exact cosine


def exact_top_k(matrix: np.ndarray, query_vectors: np.ndarray, k: int) -> list[list[Scored]]:
    """Exact cosine top-k (rows are normalised); argpartition keeps it O(n) per query; ties → lower id first."""
    n = matrix.shape[0]
    qv = np.atleast_2d(np.asarray(query_vectors, dtype=np.float32))
    if n == 0:
        return [[] for _ in range(len(qv))]
    k = min(k, n)
    sims = qv @ matrix.T
    out: list[list[Scored]] = []
    for row in sims:
        top = np.argpartition(-row, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.lexsort((top, -row[top]))]
        out.append([Scored(int(i), float(row[i])) for i in top])
    return out


def ivf_params(n: int) -> tuple[int, int]:
    """(nlist, nprobe) for n rows: nlist ≈ √n (capped so training stays seconds), nprobe = nlist / 16."""
    nlist = max(1, min(n, int(min(2048, max(16, round(math.sqrt(n)))))))
    return nlist, min(nlist, max(8, nlist // 16))


def build_ivf(matrix: np.ndarray, *, nlist: int | None = None, seed: int = 0):
    """A faiss IVF index with 8-bit scalar quantisation (inner product) over `matrix`, trained on ≤ 64 rows per list.

    SQ8 keeps a quarter of the float32 copy an IndexIVFFlat would hold (1.5M × 384: 0.58 GB instead of 2.3 GB);
    `VectorIndex.search` re-ranks its candidates exactly from the stored float vectors, so scores stay cosines.
    """
    import faiss

    n, d = matrix.shape
    nl, nprobe = ivf_params(n)
    nl = nlist or nl
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFScalarQuantizer(quantizer, d, nl, faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(n, size=min(n, 64 * nl), replace=False))
    index.train(np.ascontiguousarray(matrix[sample], dtype=np.float32))
    chunk = 200_000
    for start in range(0, n, chunk):
        index.add(np.ascontiguousarray(matrix[start:start + chunk], dtype=np.float32))
    index.nprobe = nprobe
    return index


def self_knn(matrix: np.ndarray, k: int, *, nprobe: int = 8, batch: int = 16_384,
             seed: int = 0) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Each row's k nearest other rows by inner product, approximately, a batch of rows at a time: (first row,
    similarities, ids), the arrays rows × k, best first, id −1 where a row found fewer than k. An all-pairs pass is
    quadratic (hours near a million rows); an IVF index (flat lists, so similarities are exact inner products) scans
    only the `nprobe` cells nearest each row. Batches let the caller keep only what it needs of n × k results.

    nlist ≈ √n (≤ 2048, trained on ≤ 64 rows per cell, as `build_ivf`) keeps the coarse search and the list scans
    of the same order; a pair this misses is one whose rows fall into cells that are not among each other's
    `nprobe` nearest (recall measured in bench/ppr.py and bench/ppr_scale.py)."""
    import faiss

    m = np.ascontiguousarray(matrix, dtype=np.float32)
    n, d = m.shape
    nlist, _ = ivf_params(n)
    quantizer = faiss.IndexFlatIP(d)
    index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
    rng = np.random.default_rng(seed)
    index.train(m[np.sort(rng.choice(n, size=min(n, 64 * nlist), replace=False))])
    index.add(m)
    index.nprobe = min(nlist, nprobe)
    for start in range(0, n, batch):
        stop = min(n, start + batch)
        sims, ids = index.search(m[start:stop], k + 1)  # the row itself is (almost always) among them
        own = ids == np.arange(start, stop)[:, None]
        sims[own], ids[own] = -np.inf, -1
        order = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        yield start, np.take_along_axis(sims, order, axis=1), np.take_along_axis(ids, order, axis=1)


class VectorIndex:
    """Top-k cosine search over a (memory-mapped) float32 matrix; uses `ivf` (a faiss index) when given."""

    def __init__(self, matrix: np.ndarray, ivf=None) -> None:
        self.matrix = np.asarray(matrix)  # a memmap stays mapped; only the np.memmap subclass overhead goes
        self.ivf = ivf

    @property
    def kind(self) -> str:
        return "faiss-ivf" if self.ivf is not None else "numpy-exact"

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def search(self, query_vectors: np.ndarray, k: int, *, exact: bool = False) -> list[list[Scored]]:
        if self.ivf is None or exact:
            return exact_top_k(self.matrix, query_vectors, k)
        qv = np.ascontiguousarray(np.atleast_2d(query_vectors), dtype=np.float32)
        k = min(k, len(self))
        _, ids = self.ivf.search(qv, min(len(self), k * RERANK_FACTOR))
        out: list[list[Scored]] = []
        for q, row in zip(qv, ids, strict=True):
            cand = np.unique(row[row >= 0])
            scores: np.ndarray = self.matrix[cand] @ q  # touches only the candidates' rows of the memory-mapped matrix
            order = np.lexsort((cand, -scores))[:k]
            out.append([Scored(int(cand[j]), float(scores[j])) for j in order])
        return out

    # -- persistence ----------------------------------------------------------------------------------------------
    @staticmethod
    def wants_ivf(n: int, threshold: int | None = None) -> bool:
        if n < (IVF_THRESHOLD if threshold is None else threshold):
            return False
        try:
            import faiss  # noqa: F401
        except ImportError:  # faiss-cpu is optional: exact search still works, only slower
            return False
        return True

    def save_ivf(self, path: Path) -> bool:
        """Write the IVF index (building it when absent) if this matrix is above the threshold; True if written."""
        if self.ivf is None and not self.wants_ivf(len(self)):
            return False
        import faiss

        if self.ivf is None:
            self.ivf = build_ivf(self.matrix)
        faiss.write_index(self.ivf, str(path))
        return True

    @classmethod
    def load(cls, matrix: np.ndarray, ivf_path: Path) -> VectorIndex:
        """Memory-map the saved IVF index when there is one; exact search otherwise."""
        if not ivf_path.exists():
            return cls(matrix)
        import faiss

        ivf = faiss.read_index(str(ivf_path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)
        ivf.nprobe = ivf_params(ivf.ntotal)[1]  # type: ignore[attr-defined]  # faiss's SWIG classes declare no attributes
        return cls(matrix, ivf)


def _measure() -> None:  # pragma: no cover - the measurement behind IVF_THRESHOLD
    import time

    rng = np.random.default_rng(0)
    d = 384
    for n in (10_000, 50_000, 100_000, 200_000, 400_000, 1_000_000):
        centres = rng.standard_normal((1000, d), dtype=np.float32)
        m = centres[rng.integers(0, 1000, n)] + 0.8 * rng.standard_normal((n, d), dtype=np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        q = m[rng.integers(0, n, 50)] + 0.3 * rng.standard_normal((50, d), dtype=np.float32)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        exact = VectorIndex(m)
        t = time.perf_counter()
        truth = [exact.search(x, 10) for x in q]
        t_exact = (time.perf_counter() - t) / len(q) * 1000
        t = time.perf_counter()
        ivf = VectorIndex(m, build_ivf(m))
        t_build = time.perf_counter() - t
        t = time.perf_counter()
        got = [ivf.search(x, 10) for x in q]
        t_ivf = (time.perf_counter() - t) / len(q) * 1000
        rec = np.mean([len({s.id for s in a[0]} & {s.id for s in b[0]}) / 10 for a, b in zip(truth, got, strict=True)])
        print(f"n {n} exact {t_exact:.2f} ms ivf {t_ivf:.2f} ms ivf_build {t_build:.1f} s ivf_recall@10 {rec:.3f}")


if __name__ == "__main__":  # pragma: no cover
    _measure()
