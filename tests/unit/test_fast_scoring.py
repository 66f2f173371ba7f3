"""FastScorer: score(q, T) from stored triple vectors, vectorised over all candidates of a step."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from gear.retrieve.scoring import COMPOSITIONS, FastScorer


class Vectors:
    def __init__(self, vectors: np.ndarray, lengths: np.ndarray | None = None) -> None:
        self.vectors, self.lengths = vectors, lengths
        self.calls: list[list[int]] = []

    def triple_vectors(self, ids: Sequence[int]) -> np.ndarray:
        self.calls.append([int(i) for i in ids])
        return self.vectors[np.asarray(ids, dtype=np.int64)]


class WithLengths(Vectors):
    def triple_text_lengths(self) -> np.ndarray:
        assert self.lengths is not None
        return self.lengths


def unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def reference(q: np.ndarray, vecs: np.ndarray, seq: tuple[int, ...], composition: str,
              lengths: np.ndarray | None) -> float:
    """One sequence at a time, straight from the definitions."""
    v = vecs[list(seq)]
    if composition == "hop-mean":
        return float(np.mean(v @ q))
    w = lengths[list(seq)] if composition == "weighted" and lengths is not None else np.ones(len(seq))
    s = (v * w[:, None]).sum(axis=0)
    cos = float(s @ q / np.linalg.norm(s))
    return 0.5 * (cos + float(v[-1] @ q)) if composition == "query-mix" else cos


@pytest.mark.parametrize("composition", COMPOSITIONS)
def test_vectorised_scores_match_the_per_sequence_definition(composition: str) -> None:
    rng = np.random.default_rng(0)
    vecs = unit(rng.standard_normal((40, 8))).astype(np.float32)
    lengths = rng.integers(5, 60, 40).astype(np.float32)
    q = unit(rng.standard_normal(8)).astype(np.float32)
    # mixed lengths, repeated triples and shared prefixes, as a step with carried-forward beams produces
    seqs = [(3,), (3, 7), (7, 3), (1, 2, 3), (5, 5), (0,), (39, 1, 2, 4), (3, 7)]
    backend = WithLengths(vecs, lengths)
    got = FastScorer(backend, composition)(q, seqs)  # type: ignore[arg-type]
    want = [reference(q, vecs, s, composition, lengths) for s in seqs]
    assert got.dtype == np.float32 and got.shape == (len(seqs),)
    assert got.tolist() == pytest.approx(want, abs=1e-5)
    assert len(backend.calls) == 1  # one gather for the whole step, each triple once
    assert backend.calls[0] == sorted(set(backend.calls[0]))


def test_single_triple_sequences_score_their_own_cosine() -> None:
    rng = np.random.default_rng(1)
    vecs = unit(rng.standard_normal((10, 6))).astype(np.float32)
    q = vecs[4]
    for composition in COMPOSITIONS:
        got = FastScorer(WithLengths(vecs, np.arange(1, 11, dtype=np.float32)), composition)(q, [(4,), (2,)])  # type: ignore[arg-type]
        assert got.tolist() == pytest.approx([1.0, float(vecs[2] @ q)], abs=1e-6)


def test_weighted_without_lengths_falls_back_to_the_plain_mean() -> None:
    rng = np.random.default_rng(2)
    vecs = unit(rng.standard_normal((6, 4))).astype(np.float32)
    seqs = [(0, 1), (2, 3, 4)]
    a = FastScorer(Vectors(vecs), "weighted")(vecs[5], seqs)  # type: ignore[arg-type]
    b = FastScorer(Vectors(vecs), "mean")(vecs[5], seqs)  # type: ignore[arg-type]
    assert a.tolist() == pytest.approx(b.tolist(), abs=1e-6)


def test_empty_step_and_unknown_composition() -> None:
    vecs = np.eye(3, dtype=np.float32)
    backend = Vectors(vecs)
    assert FastScorer(backend)(vecs[0], []).shape == (0,)  # type: ignore[arg-type]
    assert backend.calls == []
    with pytest.raises(ValueError, match="unknown composition"):
        FastScorer(backend, "median")  # type: ignore[arg-type]


def test_memory_backend_lengths_drive_the_weighted_mean(tiny_index, make_encoder) -> None:
    from gear.index import Manifest, open_memory_backend

    backend = open_memory_backend(tiny_index, Manifest.read(tiny_index), make_encoder())
    q = backend.triple_vectors([0])[0]
    seqs = [(0, 1), (2, 3)]
    lengths = backend.triple_text_lengths().astype(np.float32)
    vecs = backend.triple_vectors(list(range(backend.n_triples)))
    got = FastScorer(backend, "weighted")(q, seqs)
    assert got.tolist() == pytest.approx([reference(q, vecs, s, "weighted", lengths) for s in seqs], abs=1e-5)
