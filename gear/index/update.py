"""Incremental index updates: add passages (with their triples) or remove passages, without re-encoding the rest.

The saved passage and triple vectors are loaded and kept; only new passages and triples are encoded. BM25 and the
entity adjacency are rebuilt from the texts (cheap: seconds for 10k passages). The result is written with the same
atomic directory swap as `build_index`, so a crash leaves the previous index intact.

Passage ids are row numbers. Adding appends, so existing ids are unchanged. Removing renumbers: the remaining
passages keep their order and close the gaps (passage i becomes i - number of removed ids below i); saved traces and
runs that name passage ids refer to the old numbering. `remove_passages` returns the old → new mapping.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gear.data.corpus import Document
from gear.embed import Encoder
from gear.index.build import density, save_index
from gear.index.manifest import FORMAT_VERSION, Manifest, require_intact
from gear.store.base import StoreError, passage_text, triple_text
from gear.store.graph import build_adjacency
from gear.store.memory import MemoryBackend, Table, build_bm25
from gear.types import SPO, StageProgress


@dataclass
class _Saved:
    manifest: Manifest
    titles: list[str]
    texts: list[str]
    spo: list[SPO]
    owner: np.ndarray
    pvec: np.ndarray
    tvec: np.ndarray


def _load(directory: Path) -> _Saved:
    """The saved index as plain lists and in-memory arrays, whatever its storage format (via MemoryBackend.load)."""
    manifest = Manifest.read(directory)
    require_intact(directory, manifest)

    def no_encoder(_texts: Sequence[str]) -> np.ndarray:
        raise AssertionError("index updates never encode through the loaded backend")

    backend = MemoryBackend.load(directory, embedder=manifest.embedder, encode=no_encoder)
    spo: list[SPO] = [(str(t[0]), str(t[1]), str(t[2])) for t in backend.spo]
    return _Saved(manifest, list(backend.titles), list(backend.texts), spo,
                  np.array(backend.triple_passage, dtype=np.int32),
                  np.array(backend.passage_table.vectors, dtype=np.float32),
                  np.array(backend.triple_table.vectors, dtype=np.float32))


def saved_passages(directory: Path) -> tuple[list[str], list[str], list[SPO], np.ndarray]:
    """(titles, texts, triples, triple → passage ids) of a saved index, whatever its storage format."""
    saved = _load(directory)
    return saved.titles, saved.texts, saved.spo, saved.owner


def _save(directory: Path, saved: _Saved, titles: list[str], texts: list[str], spo: list[SPO], owner: np.ndarray,
          pvec: np.ndarray, tvec: np.ndarray, encoder: Encoder, change: dict[str, Any],
          progress: StageProgress | None) -> Manifest:
    if progress:
        progress("rebuilding bm25 + graph", 0, 1)
    ptexts = [passage_text(t, x) for t, x in zip(titles, texts, strict=True)]
    ttexts = [triple_text(*t) for t in spo]
    adjacency, entities = build_adjacency([t[0] for t in spo], [t[2] for t in spo])
    backend = MemoryBackend(
        embedder=saved.manifest.embedder, encode=encoder.encode_cached, titles=titles, texts=texts, spo=spo,
        triple_passage=owner, passages=Table(build_bm25(ptexts), pvec, len(ptexts)),
        triples=Table(build_bm25(ttexts) if ttexts else build_bm25(["empty"]), tvec, len(ttexts)),
        adjacency=adjacency, entities=entities,
    )
    if progress:
        progress("rebuilding bm25 + graph", 1, 1)
    counts = np.bincount(owner.astype(np.int64), minlength=len(titles)) if titles else np.zeros(0, np.int64)
    old = saved.manifest
    extraction = dict(old.extraction)
    extraction["updates"] = [*extraction.get("updates", []), change]
    manifest = Manifest(
        FORMAT_VERSION, "memory", old.embedder, old.dims, len(titles), len(spo), adjacency.n_entities,
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), old.source, {}, density(counts), extraction, None,
    )

    save_index(directory, backend, manifest, counts, progress)
    return manifest


def add_passages(directory: Path, docs: Sequence[Document], triples_by_doc: Sequence[Sequence[SPO]],
                 encoder: Encoder, *, progress: StageProgress | None = None, source: str | None = None,
                 extraction: dict[str, Any] | None = None) -> tuple[Manifest, int]:
    """Append passages and their triples; passages already in the index (same title and text) are skipped.

    Returns the new manifest and the number of passages actually added. Only the new passages and triples are
    encoded; the saved vectors are reused.
    """
    directory = Path(directory)
    saved = _load(directory)
    if encoder.name != saved.manifest.embedder:
        raise StoreError(f"{directory}: index was built with {saved.manifest.embedder}, not {encoder.name}; "
                          f"set GEAR_EMBEDDER={saved.manifest.embedder}")
    if len(docs) != len(triples_by_doc):
        raise ValueError("docs and triples_by_doc must have the same length")
    existing = set(zip(saved.titles, saved.texts, strict=True))
    new_docs: list[Document] = []
    new_triples: list[SPO] = []
    new_owner: list[int] = []
    for doc, triples in zip(docs, triples_by_doc, strict=True):
        if (doc.title, doc.text) in existing:
            continue
        existing.add((doc.title, doc.text))
        pid = len(saved.titles) + len(new_docs)
        new_docs.append(doc)
        for t in dict.fromkeys((s, p, o) for s, p, o in triples):
            new_triples.append(t)
            new_owner.append(pid)

    def encode(items: list[str], what: str) -> np.ndarray:
        parts = []
        for start in range(0, len(items), 512):
            parts.append(encoder.encode(items[start : start + 512]))
            if progress:
                progress(f"encoding new {what}", min(start + 512, len(items)), len(items))
        return np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, saved.manifest.dims), np.float32)

    pnew = encode([passage_text(d.title, d.text) for d in new_docs], "passages")
    tnew = encode([triple_text(*t) for t in new_triples], "triples")
    titles = saved.titles + [d.title for d in new_docs]
    texts = saved.texts + [d.text for d in new_docs]
    spo = saved.spo + new_triples
    owner = np.concatenate([saved.owner, np.asarray(new_owner, dtype=np.int32)]).astype(np.int32)
    pvec = np.concatenate([np.asarray(saved.pvec, np.float32), pnew]) if len(pnew) else np.asarray(saved.pvec)
    tvec = np.concatenate([np.asarray(saved.tvec, np.float32), tnew]) if len(tnew) else np.asarray(saved.tvec)
    change: dict[str, Any] = {"op": "add", "passages": len(new_docs), "triples": len(new_triples),
                              "skipped_existing": len(docs) - len(new_docs),
                              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if source:
        change["source"] = source
    if extraction:
        change["extraction"] = extraction
    manifest = _save(directory, saved, titles, texts, spo, owner, pvec, tvec, encoder, change, progress)
    return manifest, len(new_docs)


def parse_ids(text: str) -> list[int]:
    """"3,5,10-12" → [3, 5, 10, 11, 12] (ValueError on anything else)."""
    ids: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part[1:]:
            lo, hi = part.split("-", 1)
            a, b = int(lo), int(hi)
            if b < a:
                raise ValueError(f"empty range {part!r}")
            ids.extend(range(a, b + 1))
        else:
            ids.append(int(part))
    if not ids:
        raise ValueError("no passage ids given")
    return sorted(set(ids))


def remove_passages(directory: Path, ids: Sequence[int], encoder: Encoder, *, progress: StageProgress | None = None
                    ) -> tuple[Manifest, dict[int, int]]:
    """Drop passages (by id) and their triples; returns the new manifest and the old → new id mapping."""
    directory = Path(directory)
    saved = _load(directory)
    n = len(saved.titles)
    bad = [i for i in ids if not 0 <= i < n]
    if bad:
        raise StoreError(f"{directory}: no passage ids {', '.join(map(str, bad[:5]))} (ids are 0..{n - 1})")
    drop = np.zeros(n, dtype=bool)
    drop[np.asarray(list(ids), dtype=np.int64)] = True
    keep = np.flatnonzero(~drop)
    mapping = {int(old): new for new, old in enumerate(keep)}
    keep_triples = np.flatnonzero(~drop[saved.owner]) if len(saved.owner) else np.zeros(0, np.int64)
    titles = [saved.titles[i] for i in keep]
    texts = [saved.texts[i] for i in keep]
    spo = [saved.spo[i] for i in keep_triples]
    remap = np.full(n, -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    owner = remap[saved.owner[keep_triples]].astype(np.int32)
    pvec = np.asarray(saved.pvec)[keep]
    tvec = np.asarray(saved.tvec)[keep_triples]
    change = {"op": "remove", "passages": int(drop.sum()), "triples": int(len(saved.spo) - len(spo)),
              "ids": [int(i) for i in sorted(ids)][:1000], "renumbered": True,
              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    manifest = _save(directory, saved, titles, texts, spo, owner, pvec, tvec, encoder, change, progress)
    return manifest, mapping
