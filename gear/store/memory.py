"""The embedded backend: bm25s for BM25, NumPy (or faiss IVF above a measured size) for dense search, CSR arrays
for the triple graph.

Everything lives in arrays saved as .npy files, so a saved index loads (memory-mapped) without re-encoding or
parsing: texts are stored as a UTF-8 blob plus an offsets array (format 2) and decoded one string at a time when
asked for, so a 1.5M-triple index opens in well under a second and only the pages touched count towards RSS.
Format-1 indexes (texts as JSON lists) still load.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import bm25s
import numpy as np
import Stemmer

from gear.store.base import GraphTables, StoreError, passage_text, triple_text
from gear.store.fusion import rrf
from gear.store.graph import Adjacency, build_adjacency
from gear.store.vectors import IVF_SUFFIX, VectorIndex
from gear.types import Passage, Retriever, Scored, Triple

_STEMMER = Stemmer.Stemmer("english")

Encode = Callable[[Sequence[str]], np.ndarray]


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lucene-like analysis: lower case, English stopwords, Snowball stemming."""
    return bm25s.tokenize(list(texts), stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)


def _bm25_loader(path: Path) -> Callable[[], bm25s.BM25]:
    def load() -> bm25s.BM25:
        try:
            return bm25s.BM25.load(str(path), mmap=True, show_progress=False)
        except (OSError, ValueError, KeyError) as exc:
            raise StoreError(f"{path}: BM25 index is incomplete or corrupt ({exc}); rebuild it with `gear index`") \
                from None

    return load


def build_bm25(texts: Sequence[str]) -> bm25s.BM25:
    index = bm25s.BM25(method="lucene")
    index.index(tokenize(texts), show_progress=False)
    return index


def bm25_search(index: bm25s.BM25, n_docs: int, queries: Sequence[str], k: int) -> list[list[Scored]]:
    if n_docs == 0 or not queries:
        return [[] for _ in queries]
    k = min(k, n_docs)
    docs, scores = index.retrieve(tokenize(queries), k=k, show_progress=False, n_threads=1)
    # documents that share no term with the query score 0: a search engine would not return them
    return [[Scored(int(d), float(s)) for d, s in zip(row_d, row_s, strict=True) if s > 0]
            for row_d, row_s in zip(docs, scores, strict=True)]


class TextColumn(Sequence[str]):
    """An immutable list of strings stored as one UTF-8 blob and int64 offsets (both memory-mappable .npy files)."""

    def __init__(self, offsets: np.ndarray, blob: np.ndarray) -> None:
        self.offsets, self.blob = offsets, blob
        # plain buffer views: indexing a memoryview costs ~0.1 µs, a np.memmap slice ~15 µs
        self._off = np.ascontiguousarray(offsets, dtype=np.int64).data.cast("B").cast("q")
        self._buf = np.ascontiguousarray(blob, dtype=np.uint8).data.cast("B")

    @classmethod
    def from_strings(cls, strings: Sequence[str]) -> TextColumn:
        encoded = [s.encode("utf-8") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
        return cls(offsets, np.frombuffer(b"".join(encoded), dtype=np.uint8))

    @classmethod
    def load(cls, directory: Path, name: str) -> TextColumn:
        return cls(np.load(directory / f"{name}.offsets.npy", mmap_mode="r"),
                   np.load(directory / f"{name}.utf8.npy", mmap_mode="r"))

    def save(self, directory: Path, name: str) -> None:
        np.save(directory / f"{name}.offsets.npy", np.ascontiguousarray(self.offsets, dtype=np.int64))
        np.save(directory / f"{name}.utf8.npy", np.ascontiguousarray(self.blob, dtype=np.uint8))

    def byte_lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self._off) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self._off) - 1
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return str(self._buf[self._off[i]:self._off[i + 1]], "utf-8")

    def __iter__(self) -> Iterator[str]:
        for i in range(len(self)):
            yield self[i]


class TripleColumns(Sequence[tuple[str, str, str]]):
    """(subject, predicate, object) per triple, as three TextColumns."""

    PARTS = ("triple_subjects", "triple_predicates", "triple_objects")

    def __init__(self, s: TextColumn, p: TextColumn, o: TextColumn) -> None:
        self.columns = (s, p, o)

    @classmethod
    def from_spo(cls, spo: Sequence[tuple[str, str, str]]) -> TripleColumns:
        return cls(*(TextColumn.from_strings([t[j] for t in spo]) for j in range(3)))

    @classmethod
    def load(cls, directory: Path) -> TripleColumns:
        return cls(*(TextColumn.load(directory, name) for name in cls.PARTS))

    def save(self, directory: Path) -> None:
        for col, name in zip(self.columns, self.PARTS, strict=True):
            col.save(directory, name)

    def text_lengths(self) -> np.ndarray:
        """Bytes of triple_text(s, p, o) per triple, from the offsets alone (no decoding)."""
        total = self.columns[0].byte_lengths() + 2
        for column in self.columns[1:]:
            total = total + column.byte_lengths()
        return total

    def __len__(self) -> int:
        return len(self.columns[0])

    @overload
    def __getitem__(self, i: int) -> tuple[str, str, str]: ...

    @overload
    def __getitem__(self, i: slice) -> list[tuple[str, str, str]]: ...

    def __getitem__(self, i: int | slice) -> tuple[str, str, str] | list[tuple[str, str, str]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        s, p, o = self.columns
        return (s[i], p[i], o[i])


@dataclass
class Table:
    """One searchable collection (passages or triples): texts, BM25 index and normalised vectors."""

    bm25: bm25s.BM25 | Callable[[], bm25s.BM25]  # or a loader, called on first use (see MemoryBackend.load)
    vectors: np.ndarray
    size: int
    index: VectorIndex | None = None

    def __post_init__(self) -> None:
        if self.index is None:
            self.index = VectorIndex(np.asarray(self.vectors))
        self._bm25_lock = threading.Lock()

    @property
    def bm25_index(self) -> bm25s.BM25:
        """The BM25 index, loaded on first use: bm25s parses its vocabulary from JSON, which is most of the load
        time of a large index (≈1 s per 300k triples) and not needed by dense-only runs."""
        if not isinstance(self.bm25, bm25s.BM25):
            with self._bm25_lock:
                if not isinstance(self.bm25, bm25s.BM25):
                    self.bm25 = self.bm25()
        return self.bm25

    def search(self, queries: Sequence[str], k: int, method: Retriever, query_vectors: np.ndarray | None,
               encode: Encode, rrf_k: int) -> list[list[Scored]]:
        if method == "bm25":
            return bm25_search(self.bm25_index, self.size, queries, k)
        qv = query_vectors if query_vectors is not None else encode(queries)
        assert self.index is not None
        if method == "dense":
            return self.index.search(qv, k)
        sparse = bm25_search(self.bm25_index, self.size, queries, k)
        dense = self.index.search(qv, k)
        return [rrf([[s.id for s in a], [d.id for d in b]], k=rrf_k)[:k] for a, b in zip(sparse, dense, strict=True)]


class MemoryBackend:
    """An in-process index of passages C and triples T (the default; no server needed)."""

    def __init__(self, *, embedder: str, encode: Encode, titles: Sequence[str], texts: Sequence[str],
                 spo: Sequence[tuple[str, str, str]], triple_passage: np.ndarray, passages: Table, triples: Table,
                 adjacency: Adjacency, entities: Sequence[str], rrf_k: int = 60) -> None:
        self._embedder = embedder
        self._encode = encode
        self.titles, self.texts = titles, texts
        self.spo = spo
        self.triple_passage = np.asarray(triple_passage, dtype=np.int32)
        self.passage_table, self.triple_table = passages, triples
        self.adjacency = adjacency
        self.entities = entities
        self.rrf_k = rrf_k
        order = np.argsort(self.triple_passage, kind="stable")
        counts = np.bincount(self.triple_passage, minlength=len(titles))
        self._by_passage_ptr = np.concatenate([[0], np.cumsum(counts)])
        self._by_passage = order.astype(np.int32)
        self._key_index: dict[tuple[str, str], int] | None = None
        self._title_index: dict[str, list[int]] | None = None
        self._text_lengths: np.ndarray | None = None
        # a plain ndarray view of the (memory-mapped) vectors: np.memmap indexing adds ~10 µs of Python per call
        self._triple_matrix = np.asarray(triples.vectors)
        self._lock = threading.Lock()

    # -- building -------------------------------------------------------------------------------------------------
    @classmethod
    def build(cls, titles: list[str], texts: list[str], spo: list[tuple[str, str, str]],
              triple_passage: Sequence[int], *, embedder: str, encode: Encode,
              encode_batch: Callable[[Sequence[str], str], np.ndarray] | None = None,
              rrf_k: int = 60) -> MemoryBackend:
        """Index passages and triples; `encode_batch(texts, what)` may report progress for long corpora."""
        embed = encode_batch or (lambda items, _what: encode(items))
        ptexts = [passage_text(t, x) for t, x in zip(titles, texts, strict=True)]
        ttexts = [triple_text(*t) for t in spo]
        pvec = embed(ptexts, "passages")
        tvec = embed(ttexts, "triples") if ttexts else np.zeros((0, pvec.shape[1]), np.float32)
        adjacency, entities = build_adjacency([t[0] for t in spo], [t[2] for t in spo])
        return cls(embedder=embedder, encode=encode, titles=titles, texts=texts, spo=spo,
                   triple_passage=np.asarray(triple_passage, dtype=np.int32),
                   passages=Table(build_bm25(ptexts), pvec, len(ptexts)),
                   triples=Table(build_bm25(ttexts) if ttexts else build_bm25(["empty"]), tvec, len(ttexts)),
                   adjacency=adjacency, entities=entities, rrf_k=rrf_k)

    # -- persistence ----------------------------------------------------------------------------------------------
    def save(self, directory: Path) -> list[str]:
        """Write every part into `directory` (the caller makes it atomic); returns the files written."""
        directory.mkdir(parents=True, exist_ok=True)
        for name, values in (("passage_titles", self.titles), ("passage_texts", self.texts),
                             ("entities", self.entities)):
            col = values if isinstance(values, TextColumn) else TextColumn.from_strings(values)
            col.save(directory, name)
        spo = self.spo if isinstance(self.spo, TripleColumns) else TripleColumns.from_spo(self.spo)
        spo.save(directory)
        arrays = {
            "passage_vectors.npy": self.passage_table.vectors, "triple_vectors.npy": self.triple_table.vectors,
            "triple_passage.npy": self.triple_passage, "triple_head.npy": self.adjacency.head,
            "triple_tail.npy": self.adjacency.tail, "entity_indptr.npy": self.adjacency.indptr,
            "entity_triples.npy": self.adjacency.indices,
        }
        for name, arr in arrays.items():
            np.save(directory / name, np.ascontiguousarray(arr))
        self.passage_table.bm25_index.save(str(directory / "bm25_passages"), show_progress=False)
        self.triple_table.bm25_index.save(str(directory / "bm25_triples"), show_progress=False)
        for table, name in ((self.passage_table, "passage_vectors"), (self.triple_table, "triple_vectors")):
            assert table.index is not None
            table.index.save_ivf(directory / f"{name}{IVF_SUFFIX}")
        return sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())

    @classmethod
    def load(cls, directory: Path, *, embedder: str, encode: Encode, rrf_k: int = 60) -> MemoryBackend:
        def arr(name: str) -> np.ndarray:
            return np.load(directory / name, mmap_mode="r")

        titles: Sequence[str]
        texts: Sequence[str]
        spo: Sequence[tuple[str, str, str]]
        entities: Sequence[str]
        try:
            if (directory / "passages.json").exists():  # format 1
                with (directory / "passages.json").open(encoding="utf-8") as fh:
                    p = json.load(fh)
                titles, texts = p["titles"], p["texts"]
                with (directory / "triples.json").open(encoding="utf-8") as fh:
                    spo = [tuple(t) for t in json.load(fh)]
                with (directory / "entities.json").open(encoding="utf-8") as fh:
                    entities = json.load(fh)
            else:
                titles = TextColumn.load(directory, "passage_titles")
                texts = TextColumn.load(directory, "passage_texts")
                spo = TripleColumns.load(directory)
                entities = TextColumn.load(directory, "entities")
            for part in ("bm25_passages", "bm25_triples"):  # fail now, not at the first search, when one is missing
                if not (directory / part / "params.index.json").exists():
                    raise OSError(f"{part} is missing")
            pb = _bm25_loader(directory / "bm25_passages")
            tb = _bm25_loader(directory / "bm25_triples")
            adjacency = Adjacency(np.asarray(arr("triple_head.npy")), np.asarray(arr("triple_tail.npy")),
                                  np.asarray(arr("entity_indptr.npy")), np.asarray(arr("entity_triples.npy")))
            pvec, tvec = arr("passage_vectors.npy"), arr("triple_vectors.npy")
            tp = np.asarray(arr("triple_passage.npy"))
            pindex = VectorIndex.load(pvec, directory / f"passage_vectors{IVF_SUFFIX}")
            tindex = VectorIndex.load(tvec, directory / f"triple_vectors{IVF_SUFFIX}")
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise StoreError(f"{directory}: index is incomplete or corrupt ({exc}); rebuild it with `gear index`") \
                from None
        return cls(embedder=embedder, encode=encode, titles=titles, texts=texts, spo=spo,
                   triple_passage=tp, passages=Table(pb, pvec, len(titles), pindex),
                   triples=Table(tb, tvec, len(spo), tindex),
                   adjacency=adjacency, entities=entities, rrf_k=rrf_k)

    # -- protocol -------------------------------------------------------------------------------------------------
    @property
    def n_passages(self) -> int:
        return len(self.titles)

    @property
    def n_triples(self) -> int:
        return len(self.spo)

    @property
    def embedder(self) -> str:
        return self._embedder

    def passages(self, ids: Sequence[int]) -> list[Passage]:
        return [Passage(int(i), self.titles[i], self.texts[i]) for i in ids]

    def triples(self, ids: Sequence[int]) -> list[Triple]:
        return [Triple(int(i), *self.spo[i], int(self.triple_passage[i])) for i in ids]

    def passage_of(self, triple_id: int) -> int:
        return int(self.triple_passage[triple_id])

    def passages_of(self, triple_ids: Sequence[int]) -> np.ndarray:
        return self.triple_passage[np.asarray(triple_ids, dtype=np.int64)]

    def triples_of(self, passage_id: int) -> list[int]:
        lo, hi = self._by_passage_ptr[passage_id], self._by_passage_ptr[passage_id + 1]
        return [int(t) for t in self._by_passage[lo:hi]]

    def neighbours(self, triple_id: int) -> np.ndarray:
        return self.adjacency.neighbours(triple_id)

    def triple_text_lengths(self) -> np.ndarray:
        """Length (UTF-8 bytes) of each triple's text; free for format-2 indexes (from the offsets)."""
        if self._text_lengths is None:
            if isinstance(self.spo, TripleColumns):
                self._text_lengths = self.spo.text_lengths()
            else:
                self._text_lengths = np.fromiter((len(triple_text(*t).encode("utf-8")) for t in self.spo),
                                                 dtype=np.int64, count=len(self.spo))
        return self._text_lengths

    def triple_vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        return self._triple_matrix[np.asarray(ids, dtype=np.intp)]

    def search_passages(self, queries: Sequence[str], k: int, method: Retriever,
                        query_vectors: np.ndarray | None = None) -> list[list[Scored]]:
        return self.passage_table.search(queries, k, method, query_vectors, self._encode, self.rrf_k)

    def search_triples(self, queries: Sequence[str], k: int, method: Retriever,
                       query_vectors: np.ndarray | None = None) -> list[list[Scored]]:
        return self.triple_table.search(queries, k, method, query_vectors, self._encode, self.rrf_k)

    def graph_tables(self, cache: Path | None = None) -> GraphTables:
        """Views of the index's own arrays (memory-mapped when loaded): nothing is copied, nothing cached."""
        return GraphTables(self.entities, np.asarray(self.adjacency.head), np.asarray(self.adjacency.tail),
                           self.triple_passage, self._triple_matrix, np.asarray(self.passage_table.vectors))

    def find_passage(self, title: str, text: str | None) -> int | None:
        with self._lock:
            if self._key_index is None:
                self._key_index = {(t, x): i for i, (t, x) in enumerate(zip(self.titles, self.texts, strict=True))}
                self._title_index = {}
                for i, t in enumerate(self.titles):
                    self._title_index.setdefault(t, []).append(i)
        if text is not None:
            found = self._key_index.get((title, text))
            if found is None:
                found = self._key_index.get((title, text.strip()))
            return found
        same = self._title_index.get(title, []) if self._title_index else []
        return same[0] if len(same) == 1 else None
