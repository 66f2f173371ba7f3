"""Build, save and open an embedded index directory: corpus + triples + search structures + a manifest.

The directory is written into a temporary sibling and swapped into place (gear.files), so a crash never leaves half
an index and never damages the index that was there before.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gear.config import Settings
from gear.data.corpus import Document
from gear.data.qa_set import QA_FILE
from gear.data.text_files import source_files
from gear.embed import Encoder
from gear.files import atomic_directory
from gear.index.manifest import FORMAT_VERSION, Manifest, require_intact, sha256_file
from gear.store.base import SearchBackend, StoreError
from gear.store.memory import MemoryBackend
from gear.types import StageProgress

DEFAULT_PPR_THRESHOLD: float = Settings.model_fields["ppr_synonym_threshold"].default


def density(counts: np.ndarray) -> dict[str, float]:
    if len(counts) == 0:
        return {}
    return {
        "mean": float(counts.mean()),
        "median": float(np.median(counts)),
        "max": float(counts.max()),
        "zero": float((counts == 0).sum()),
    }


def with_files(source: dict[str, Any], docs: Sequence[Document]) -> dict[str, Any]:
    """The manifest's record of the build's inputs, with the files whose names became titles ("files": title → its
    files): a passage's title is its file's name as words, and its source stays known (gear.data.corpus)."""
    files = source_files(docs)
    return {**source, "files": files} if files else source


def build_index(
    docs: Sequence[Document],
    triples_by_doc: Sequence[Sequence[tuple[str, str, str]]],
    out: Path,
    encoder: Encoder,
    *,
    source: dict[str, Any] | None = None,
    progress: StageProgress | None = None,
    extraction: dict[str, Any] | None = None,
    ppr_threshold: float | None = None,
) -> Manifest:
    """Encode and index passages and triples, then save atomically to `out` — with PPR's entity graph parts when
    `ppr_threshold` (the synonym threshold PPR will run with, DEFAULT_PPR_THRESHOLD by default) is given; without,
    PPR builds them on its first use."""
    titles = [d.title for d in docs]
    texts = [d.text for d in docs]
    spo: list[tuple[str, str, str]] = []
    owner: list[int] = []
    for pid, triples in enumerate(triples_by_doc):
        for t in dict.fromkeys(triples):
            spo.append(t)
            owner.append(pid)

    def encode_batch(items: Sequence[str], what: str) -> np.ndarray:
        chunk = 512
        parts = []
        for start in range(0, len(items), chunk):
            parts.append(encoder.encode(items[start : start + chunk]))
            if progress:
                progress(f"encoding {what}", min(start + chunk, len(items)), len(items))
        return np.concatenate(parts) if parts else np.zeros((0, encoder.dim), np.float32)

    backend = MemoryBackend.build(
        titles, texts, spo, owner, embedder=encoder.name, encode=encoder.encode_cached, encode_batch=encode_batch
    )
    counts = np.bincount(np.asarray(owner, dtype=np.int64), minlength=len(docs)) if docs else np.zeros(0)
    manifest = Manifest(
        FORMAT_VERSION,
        "memory",
        encoder.name,
        encoder.dim,
        len(docs),
        len(spo),
        backend.adjacency.n_entities,
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        with_files(source or {}, docs),
        {},
        density(counts),
        extraction or {},
    )

    save_index(out, backend, manifest, counts, progress, ppr=(encoder, ppr_threshold) if ppr_threshold else None)
    return manifest


def save_index(out: Path, backend: MemoryBackend, manifest: Manifest, counts: np.ndarray,
               progress: StageProgress | None = None, ppr: tuple[Encoder, float] | None = None) -> None:
    """Write backend, triple densities and manifest (with every file's size and checksum) atomically to `out`; with
    `ppr` (the encoder, a synonym threshold), PPR's entity graph parts too (`ppr/`, gear.retrieve.ppr's cache), so
    the first PPR run on the index does not stop to build them."""

    def write(directory: Path) -> None:
        if progress:
            progress("saving", 0, 1)
        files = backend.save(directory)
        manifest.files = {f: {"bytes": (directory / f).stat().st_size, "sha256": sha256_file(directory / f)}
                          for f in files}
        np.save(directory / "triples_per_passage.npy", counts.astype(np.int32))
        manifest.write(directory)
        if progress:
            progress("saving", 1, 1)
        if ppr is not None:
            encoder, threshold = ppr
            build_ppr_cache(directory, backend, in_turns(encoder.encode), threshold, progress=progress)

    atomic_directory(out, write, keep=(QA_FILE,))  # the person's own QA set outlives a rebuild (gear.data.qa_set)


def in_turns(encode: Callable[[Sequence[str]], np.ndarray], batch: int = 128) -> Callable[[Sequence[str]], np.ndarray]:
    """`encode` a long list in batches with a pause between them: an encoder is shared (one lock per model), and
    its other users (a question being asked on another index) get their turn instead of waiting minutes."""

    def encode_in_turns(texts: Sequence[str]) -> np.ndarray:
        parts = []
        for start in range(0, len(texts), batch):
            parts.append(encode(list(texts[start:start + batch])))
            time.sleep(0.005)  # the lock is free here: a waiting caller takes it
        return np.concatenate(parts) if parts else encode([])

    return encode_in_turns


def build_ppr_cache(directory: Path, backend: SearchBackend, encode: Callable[[Sequence[str]], np.ndarray],
                    threshold: float, progress: StageProgress | None = None) -> None:
    """PPR's entity graph parts — every entity name's vector (by `encode`) and the synonym edges at `threshold` —
    written into `<index>/ppr/`, where gear.retrieve.ppr.PPRIndex.open reads them: once, while the index is built
    (or in the background), instead of on the first PPR question (MuSiQue's demo: ≈20k names)."""
    from gear.retrieve.ppr import PPRIndex

    stage = "building PPR's entity graph (every entity name encoded)"
    if progress:
        progress(stage, 0, 1)
    PPRIndex.open(backend, encode, threshold, directory / "ppr")
    if progress:
        progress(stage, 1, 1)


def open_memory_backend(directory: Path, manifest: Manifest, encoder: Encoder, rrf_k: int = 60) -> MemoryBackend:
    require_intact(directory, manifest)  # cheap structural check; full checksums in `gear info --verify`
    if encoder.name != manifest.embedder:
        raise StoreError(
            f"{directory}: index was built with {manifest.embedder}, but the configured embedder is "
            f"{encoder.name}; set GEAR_EMBEDDER={manifest.embedder} or rebuild"
        )
    return MemoryBackend.load(directory, embedder=manifest.embedder, encode=encoder.encode_cached, rrf_k=rrf_k)
