"""Sentence-transformers encoder with an in-memory cache of texts already seen (beam search re-scores many), on the
device the settings choose (gear.embed.device: a GPU when present, by default)."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from gear.embed.device import choose_device
from gear.embed.weights import EmbedderError, model_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


class Encoder:
    """Encodes texts to L2-normalised float32 vectors, so cosine similarity is a dot product.

    `device` is the setting (auto, cpu, cuda, mps; Settings.device), resolved when the model is first loaded into
    `torch_device`, the device in use (None before). Vectors do not depend on it beyond float rounding.
    """

    def __init__(self, name: str = "all-MiniLM-L6-v2", *, bf16: bool = False, batch_size: int = 256,
                 cache_size: int = 200_000, device: str = "auto") -> None:
        self.name = name
        self.bf16 = bf16
        self.device = device
        self.torch_device: str | None = None
        self.batch_size = batch_size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._model = None
        self._lock = threading.Lock()
        self.encoded_texts = 0  # texts that really went through the model (for benchmarks)
        self.encode_seconds = 0.0

    @property
    def model(self):
        if self._model is None:
            import torch
            from sentence_transformers import SentenceTransformer

            kwargs = {"model_kwargs": {"torch_dtype": torch.bfloat16}} if self.bf16 else {}
            device = choose_device(self.device)
            try:
                self._model = SentenceTransformer(str(model_path(self.name)), device=device, **kwargs)
            except EmbedderError:
                raise
            except Exception as exc:  # a broken install surfaces here
                raise EmbedderError(f"cannot load embedder {self.name} on {device}: {exc}") from None
            self.torch_device = device
        return self._model

    @property
    def dim(self) -> int:
        m = self.model
        getter = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        """Encode without the cache (used for corpora, whose vectors are stored in the index)."""
        import time

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        start = time.perf_counter()
        with self._lock:
            vecs = self.model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=show_progress)
        self.encode_seconds += time.perf_counter() - start
        self.encoded_texts += len(texts)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def encode_cached(self, texts: Sequence[str]) -> np.ndarray:
        """Encode with an LRU cache: one model call for all texts not seen before."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for text, vec in zip(missing, self.encode(missing), strict=True):
                self._cache[text] = vec
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            vec = self._cache[t]
            self._cache.move_to_end(t)
            out[i] = vec
        return out
