"""An index's graph tables (gear.store.base.GraphTables) read out of a cluster for PPR: one scroll over the triples
(head, tail, passage, vector) and one over the passages (vector), with the client's `helpers.scan`, page by page.

Entity ids are derived from what every GeAR index already stores, the normalised head and tail (keyword fields):
numbered by first occurrence over the heads in triple order, then the tails, which is exactly how
gear.store.graph.build_adjacency numbers them for the embedded index (build, update and migrate all go through it),
so both backends hand PPR the same graph and no mapping change is needed.

The tables are kept beside the index (`<index>/ppr/es-<base>-<key>/`, .npy files read memory-mapped afterwards),
written into place atomically while the scroll streams (vectors go straight into memory-mapped files, so the scan
never holds them twice). The key hashes the concrete indices the aliases point at (a `gear migrate` always writes new
ones), the counts, dims and embedder, so a changed index is never served a stale copy; the copies of earlier builds
are deleted when a new one is written. A read-only index directory keeps the tables in memory only.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gear.files import atomic_directory
from gear.store.base import GraphTables, StoreError
from gear.store.elastic.client import es_errors
from gear.store.elastic.layout import EsNames
from gear.store.memory import TextColumn

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

TABLES_FORMAT = 1  # bump when what is written here changes
SCAN_PAGE = 1000  # documents per scroll page
SCROLL = "10m"  # how long the cluster keeps the scroll context between pages

Encode = Callable[[Sequence[int]], np.ndarray]  # ids → their stored texts encoded (when _source has no vectors)


@dataclass(frozen=True)
class TableSource:
    """Where the tables come from: the client, the concrete index per part, and what they must hold."""

    client: Elasticsearch
    url: str
    names: EsNames
    passages_index: str
    triples_index: str
    n_passages: int
    n_triples: int
    dims: int
    embedder: str

    @property
    def key(self) -> str:
        h = hashlib.sha256(f"{TABLES_FORMAT}\n{self.names.base}\n{self.passages_index}\n{self.triples_index}\n"
                           f"{self.n_passages}\n{self.n_triples}\n{self.dims}\n{self.embedder}".encode())
        return h.hexdigest()[:16]

    @property
    def folder(self) -> str:
        return f"es-{self.names.base}-{self.key}"


def concrete_index(client: Elasticsearch, alias: str, url: str) -> str:
    """The one concrete index behind `alias` (what a scroll reads: the alias may move while it runs)."""
    with es_errors(url, "resolving the index aliases"):
        found = list(client.indices.get_alias(name=alias))
    if len(found) != 1:
        raise StoreError(f"Elasticsearch alias {alias} points at {len(found)} indices, expected one; re-run "
                         "`gear migrate`")
    return found[0]


def _pages(source: TableSource, index: str, fields: list[str], what: str) -> Iterator[list[dict[str, Any]]]:
    """The documents of `index` (only `fields` of their _source), a scroll page at a time, in no particular order."""
    from elasticsearch import helpers

    with es_errors(source.url, what):
        page: list[dict[str, Any]] = []
        try:
            for hit in helpers.scan(source.client, index=index, query={"_source": fields}, size=SCAN_PAGE,
                                    scroll=SCROLL, clear_scroll=True):
                page.append(hit)
                if len(page) == SCAN_PAGE:
                    yield page
                    page = []
        except helpers.ScanError as exc:
            raise StoreError(f"Elasticsearch could not scroll through {index} while {what} ({str(exc)[:200]}); "
                             "check the cluster's health and retry") from None
        if page:
            yield page


def _ids(hits: list[dict[str, Any]], n: int, index: str) -> np.ndarray:
    ids = np.fromiter((int(h["_id"]) for h in hits), dtype=np.int64, count=len(hits))
    bad = ids[(ids < 0) | (ids >= n)]
    if len(bad):
        raise StoreError(f"Elasticsearch index {index} holds document id {int(bad[0])}, outside 0…{n - 1}; the index "
                         "is out of date — re-run `gear migrate`")
    return ids


def _field(hit: dict[str, Any], name: str, index: str) -> Any:
    value = hit.get("_source", {}).get(name)
    if value is None:
        raise StoreError(f"Elasticsearch index {index}, document {hit['_id']}: field {name!r} is missing; re-run "
                         "`gear migrate`")
    return value


def _put_vectors(target: np.ndarray, ids: np.ndarray, hits: list[dict[str, Any]], index: str) -> list[int]:
    """Write the hits' stored vectors into their rows; returns the ids whose _source has none (a cluster that
    keeps vectors out of _source: they are encoded again from the text)."""
    rows = [(int(i), h["_source"]["vec"]) for i, h in zip(ids, hits, strict=True) if h.get("_source", {}).get("vec")]
    if rows:
        values = np.asarray([v for _, v in rows], dtype=np.float32)
        if values.ndim != 2 or values.shape[1] != target.shape[1]:
            raise StoreError(f"Elasticsearch index {index}: stored vectors do not have {target.shape[1]} dims; "
                             "re-run `gear migrate`")
        target[np.asarray([i for i, _ in rows], dtype=np.int64)] = values
    return [int(i) for i, h in zip(ids, hits, strict=True) if not h.get("_source", {}).get("vec")]


def _complete(seen: np.ndarray, index: str, what: str) -> None:
    if len(seen) and (seen != 1).any():
        missing, twice = int((seen == 0).sum()), int((seen > 1).sum())
        raise StoreError(f"Elasticsearch index {index}: {missing} {what} missing and {twice} seen twice while reading "
                         f"all {len(seen)}; the index is out of date — re-run `gear migrate`")


def _allocate(out: Path | None, name: str, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    if out is None:
        return np.zeros(shape, dtype=dtype)
    return np.lib.format.open_memmap(out / f"{name}.npy", mode="w+", dtype=dtype, shape=shape)


def _entity_ids(first: np.ndarray, second: np.ndarray, names: list[str]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Renumber provisional ids (given in scan order) by first occurrence over `first`, then `second`: the order in
    which build_adjacency numbers the heads and then the tails."""
    sequence = np.concatenate([first, second])
    provisional, position = np.unique(sequence, return_index=True)
    order = provisional[np.argsort(position, kind="stable")]
    final = np.empty(len(names), dtype=np.int32)
    final[order] = np.arange(len(order), dtype=np.int32)
    return final[first], final[second], [names[p] for p in order]


def scan_tables(source: TableSource, encode_triples: Encode, encode_passages: Encode,
                out: Path | None = None) -> GraphTables:
    """Read the tables with two scrolls, into memory, or into `out` (an empty directory) as .npy files: the vectors
    then stream into memory-mapped files, which `load_tables` maps again."""
    n_t, n_p = source.n_triples, source.n_passages
    triple_vectors = _allocate(out, "triple_vectors", (n_t, source.dims), np.float32)
    triple_passage = np.zeros(n_t, dtype=np.int32)
    heads, tails = np.zeros(n_t, dtype=np.int32), np.zeros(n_t, dtype=np.int32)
    seen = np.zeros(n_t, dtype=np.int8)
    provisional: dict[str, int] = {}
    absent: list[int] = []
    index = source.triples_index
    for hits in _pages(source, index, ["head", "tail", "pid", "vec"], "reading the triples for the PPR graph"):
        ids = _ids(hits, n_t, index)
        np.add.at(seen, ids, 1)
        for i, hit in zip(ids, hits, strict=True):
            heads[i] = provisional.setdefault(str(_field(hit, "head", index)), len(provisional))
            tails[i] = provisional.setdefault(str(_field(hit, "tail", index)), len(provisional))
            triple_passage[i] = int(_field(hit, "pid", index))
        absent += _put_vectors(triple_vectors, ids, hits, index)
    _complete(seen, index, "triples")
    if n_t and not ((triple_passage >= 0) & (triple_passage < n_p)).all():
        raise StoreError(f"Elasticsearch index {index}: a triple's pid is outside 0…{n_p - 1}; re-run `gear migrate`")
    if absent:
        triple_vectors[np.asarray(absent)] = np.asarray(encode_triples(absent), dtype=np.float32)
    head, tail, names = _entity_ids(heads, tails, list(provisional))

    passage_vectors = _allocate(out, "passage_vectors", (n_p, source.dims), np.float32)
    seen = np.zeros(n_p, dtype=np.int8)
    absent = []
    index = source.passages_index
    for hits in _pages(source, index, ["vec"], "reading the passage vectors for the PPR graph"):
        ids = _ids(hits, n_p, index)
        np.add.at(seen, ids, 1)
        absent += _put_vectors(passage_vectors, ids, hits, index)
    _complete(seen, index, "passages")
    if absent:
        passage_vectors[np.asarray(absent)] = np.asarray(encode_passages(absent), dtype=np.float32)

    if out is not None:
        for name, values in (("head", head), ("tail", tail), ("triple_passage", triple_passage)):
            np.save(out / f"{name}.npy", values)
        TextColumn.from_strings(names).save(out, "entities")
        for written in (triple_vectors, passage_vectors):
            if isinstance(written, np.memmap):
                written.flush()
    return GraphTables(names, head, tail, triple_passage, np.asarray(triple_vectors), np.asarray(passage_vectors),
                       source="scan")


def load_tables(directory: Path, source: TableSource) -> GraphTables | None:
    """The tables kept in `directory`, memory-mapped; None when absent or not what `source` holds (rebuilt)."""
    try:
        arrays = {name: np.asarray(np.load(directory / f"{name}.npy", mmap_mode="r"))
                  for name in ("head", "tail", "triple_passage", "triple_vectors", "passage_vectors")}
        names = TextColumn.load(directory, "entities")
    except (OSError, ValueError):
        return None
    n_t, n_p, dims = source.n_triples, source.n_passages, source.dims
    shapes_ok = (arrays["head"].shape == arrays["tail"].shape == arrays["triple_passage"].shape == (n_t,)
                 and arrays["triple_vectors"].shape == (n_t, dims) and arrays["passage_vectors"].shape == (n_p, dims))
    if not shapes_ok or (n_t and max(int(arrays["head"].max()), int(arrays["tail"].max())) >= len(names)):
        return None
    return GraphTables(names, arrays["head"], arrays["tail"], arrays["triple_passage"], arrays["triple_vectors"],
                       arrays["passage_vectors"], source="cache")


def _writable(directory: Path) -> bool:
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
    return directory.is_dir() and os.access(directory, os.W_OK)


def graph_tables(source: TableSource, encode_triples: Encode, encode_passages: Encode,
                 cache: Path | None) -> GraphTables:
    """The tables from `cache` when a copy for this very index is there; else scanned, and kept there when the
    directory is writable (replacing the copies of earlier builds of this index)."""
    target = cache / source.folder if cache is not None else None
    found = load_tables(target, source) if target is not None else None
    if found is not None:
        return found
    if cache is None or target is None or not _writable(cache):
        return scan_tables(source, encode_triples, encode_passages)

    def write(tmp: Path) -> None:
        tmp.mkdir(parents=True)
        scan_tables(source, encode_triples, encode_passages, tmp)

    atomic_directory(target, write)
    for stale in cache.glob(f"es-{source.names.base}-*"):  # earlier builds of this index (a key is 16 hex digits)
        key = stale.name.removeprefix(f"es-{source.names.base}-")
        if stale.name != source.folder and len(key) == 16 and all(c in "0123456789abcdef" for c in key):
            shutil.rmtree(stale, ignore_errors=True)
    found = load_tables(target, source)
    if found is None:
        raise StoreError(f"{target}: the PPR tables just written cannot be read back; check the disk")
    return GraphTables(found.entity_names, found.head, found.tail, found.triple_passage, found.triple_vectors,
                       found.passage_vectors, source="scan")
