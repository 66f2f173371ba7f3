"""score(q, T) for Diverse Triple Beam Search: exact (encode the sequence text, as the paper) or fast (compose
precomputed triple vectors, no encoder call at query time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

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


class FastScorer:
    """Beyond the paper: a sequence is the normalised mean of its triples' stored vectors."""

    def __init__(self, backend: SearchBackend) -> None:
        self.backend = backend

    def __call__(self, query_vector: np.ndarray, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        if not sequences:
            return np.zeros(0, dtype=np.float32)
        needed = sorted({t for seq in sequences for t in seq})
        vecs = self.backend.triple_vectors(needed)
        row = {t: i for i, t in enumerate(needed)}
        out = np.empty(len(sequences), dtype=np.float32)
        for i, seq in enumerate(sequences):
            v = vecs[[row[t] for t in seq]].sum(axis=0)
            out[i] = float(v @ query_vector) / max(float(np.linalg.norm(v)), 1e-12)
        return out
