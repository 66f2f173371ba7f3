"""score(q, T) for Diverse Triple Beam Search: exact (encode the sequence text, as the paper) or fast (compose
precomputed triple vectors, no encoder call at query time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np

from gear.embed import Encoder
from gear.store.base import SearchBackend, sequence_text


class SequenceScorer(Protocol):
    def __call__(self, query_vector: np.ndarray, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        """Cosine similarity of the query to each triple sequence, in one batch."""
        ...


class ExactScorer:
    """The paper's scoring: cosine(embed(q), embed(text of T)), with all candidates of a step in one encode call."""

    def __init__(self, backend: SearchBackend, encoder: Encoder) -> None:
        self.backend, self.encoder = backend, encoder

    def __call__(self, query_vector: np.ndarray, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        if not sequences:
            return np.zeros(0, dtype=np.float32)
        needed = sorted({t for seq in sequences for t in seq})
        spo = {t.id: t.spo for t in self.backend.triples(needed)}
        texts = [sequence_text([spo[t] for t in seq]) for seq in sequences]
        return self.encoder.encode_cached(texts) @ query_vector


Composition = Literal["mean", "weighted", "hop-mean", "query-mix"]
COMPOSITIONS: tuple[str, ...] = ("mean", "weighted", "hop-mean", "query-mix")


class FastScorer:
    """Beyond the paper: score(q, T) composed from the stored triple vectors, no encoder call at query time.

    Compositions (v_i: the stored, normalised vector of the i-th triple of T):
    - "mean": cos(q, Σ v_i) — the normalised mean (default);
    - "weighted": cos(q, Σ w_i v_i) with w_i the length of the triple's text, which imitates the encoder's mean
      pooling over the tokens of the joined sequence text;
    - "hop-mean": the mean of cos(q, v_i) over the hops;
    - "query-mix": cos(q, Σ v_i) averaged with cos(q, v_last), favouring a new triple that matches the query.
    All candidates of a step are scored together with array operations (one gather, one matmul per length).
    """

    def __init__(self, backend: SearchBackend, composition: Composition = "mean") -> None:
        if composition not in COMPOSITIONS:
            raise ValueError(f"unknown composition {composition!r}; choose one of {COMPOSITIONS}")
        self.backend, self.composition = backend, composition
        self._lengths: np.ndarray | None = None

    def _weights(self, ids: np.ndarray) -> np.ndarray:
        if self._lengths is None:
            lengths = getattr(self.backend, "triple_text_lengths", None)
            self._lengths = np.asarray(lengths(), dtype=np.float32) if lengths else np.zeros(0, np.float32)
        if len(self._lengths) == 0:
            return np.ones(ids.shape, dtype=np.float32)
        return self._lengths[ids]

    def __call__(self, query_vector: np.ndarray, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        out = np.zeros(len(sequences), dtype=np.float32)
        if not sequences:
            return out
        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        flat = np.fromiter((t for s in sequences for t in s), dtype=np.int64, count=int(lengths.sum()))
        needed, inverse = np.unique(flat, return_inverse=True)
        q = np.asarray(query_vector, dtype=np.float32)
        vecs = np.asarray(self.backend.triple_vectors(needed), dtype=np.float32)  # one gather for the step
        sims = vecs @ q  # cos(q, v) per distinct triple
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        for length in np.unique(lengths).tolist():  # sequences of one length share a shape: no loop per sequence
            rows = np.flatnonzero(lengths == length)
            idx = inverse[starts[rows, None] + np.arange(length)]  # [n, length] rows into `vecs`
            if self.composition == "hop-mean":
                out[rows] = sims[idx].mean(axis=1)
                continue
            w = self._weights(needed[idx]) if self.composition == "weighted" else None
            summed = (vecs[idx] * w[..., None]).sum(axis=1) if w is not None else vecs[idx].sum(axis=1)
            cos = (summed @ q) / np.maximum(np.linalg.norm(summed, axis=1), 1e-12)
            if self.composition == "query-mix":
                cos = 0.5 * (cos + sims[idx[:, -1]])
            out[rows] = cos
        return out
