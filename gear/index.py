"""Build, save and open an index directory: corpus + triples + search structures + a manifest.

The directory is written into a temporary sibling and renamed into place, so a crash never leaves half an index and
never damages the index that was there before.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gear.corpus import Document, LoadReport, OpenIEDoc
from gear.embed import Encoder
from gear.store.base import IndexError_
from gear.store.memory import MemoryBackend

FORMAT_VERSION = 2  # 2: texts as UTF-8 blob + offsets .npy (memory-mapped), optional faiss IVF files
READABLE_FORMATS = (1, 2)  # format 1 (texts as JSON lists) still loads
MANIFEST = "manifest.json"

Progress = Callable[[str, int, int], None]


@dataclass
class Manifest:
    format_version: int
    backend: str
    embedder: str
    dims: int
    n_passages: int
    n_triples: int
    n_entities: int
    created: str
    source: dict[str, Any] = field(default_factory=dict)
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> {"bytes": int, "sha256": str}
    triples_per_passage: dict[str, float] = field(default_factory=dict)
    extraction: dict[str, Any] = field(default_factory=dict)
    elasticsearch: dict[str, Any] | None = None

    @classmethod
    def read(cls, directory: Path) -> Manifest:
        path = directory / MANIFEST
        if not directory.exists():
            raise IndexError_(f"{directory}: no such index directory; build one with `gear index`")
        if not path.exists():
            raise IndexError_(f"{directory}: not a GeAR index (no {MANIFEST}); build one with `gear index`")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise IndexError_(f"{path}: corrupt manifest ({exc.msg}); rebuild the index") from None
        if data.get("format_version") not in READABLE_FORMATS:
            raise IndexError_(
                f"{directory}: index format {data.get('format_version')} is not supported by this "
                f"version of gear (expects {FORMAT_VERSION}); rebuild it with `gear index`"
            )
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})

    def write(self, directory: Path) -> None:
        (directory / MANIFEST).write_text(json.dumps(asdict(self), indent=2, ensure_ascii=False), encoding="utf-8")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def align_openie(
    docs: Sequence[Document], openie: Sequence[OpenIEDoc], report: LoadReport
) -> list[list[tuple[str, str, str]]]:
    """Triples for each document, matched by (title, text), then by text alone; unmatched docs get none."""
    by_key = {(d.title, d.text): d for d in openie}
    by_text = {d.text.strip(): d for d in openie}
    out: list[list[tuple[str, str, str]]] = []
    missing = 0
    for doc in docs:
        found = by_key.get((doc.title, doc.text)) or by_text.get(doc.text.strip())
        if found is None:
            missing += 1
            out.append([])
        else:
            out.append(list(found.triples))
    if missing:
        report.warn(f"{missing} of {len(docs)} passages have no OpenIE record and get no triples")
    return out


def _density(counts: np.ndarray) -> dict[str, float]:
    if len(counts) == 0:
        return {}
    return {
        "mean": float(counts.mean()),
        "median": float(np.median(counts)),
        "max": float(counts.max()),
        "zero": float((counts == 0).sum()),
    }


def atomic_directory(out: Path, write: Callable[[Path], None]) -> None:
    """Write into a temporary sibling directory, then swap it into place."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        write(tmp)
        if out.exists():
            out.rename(old)
        try:
            tmp.rename(out)
        except BaseException:
            if old.exists() and not out.exists():
                old.rename(out)  # put the previous index back before `finally` cleans up
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def build_index(
    docs: Sequence[Document],
    triples_by_doc: Sequence[Sequence[tuple[str, str, str]]],
    out: Path,
    encoder: Encoder,
    *,
    source: dict[str, Any] | None = None,
    progress: Progress | None = None,
    extraction: dict[str, Any] | None = None,
) -> Manifest:
    """Encode and index passages and triples, then save atomically to `out`."""
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
        source or {},
        {},
        _density(counts),
        extraction or {},
    )

    save_index(out, backend, manifest, counts, progress)
    return manifest


def save_index(out: Path, backend: MemoryBackend, manifest: Manifest, counts: np.ndarray,
               progress: Progress | None = None) -> None:
    """Write backend, triple densities and manifest (with every file's size and checksum) atomically to `out`."""

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

    atomic_directory(out, write)


def verify_index(directory: Path) -> list[str]:
    """Checksum every file against the manifest; returns the problems found (empty = intact)."""
    manifest = Manifest.read(directory)
    problems = []
    for name, meta in manifest.files.items():
        path = directory / name
        if not path.exists():
            problems.append(f"{name}: missing")
        elif path.stat().st_size != meta["bytes"]:
            problems.append(f"{name}: size {path.stat().st_size} != {meta['bytes']}")
        elif sha256_file(path) != meta["sha256"]:
            problems.append(f"{name}: checksum mismatch")
    return problems


def open_memory_backend(directory: Path, manifest: Manifest, encoder: Encoder, rrf_k: int = 60) -> MemoryBackend:
    for name, meta in manifest.files.items():  # cheap structural check; full checksums in `gear info --verify`
        path = directory / name
        if not path.exists() or path.stat().st_size != meta["bytes"]:
            raise IndexError_(f"{directory}: file {name} is missing or truncated; rebuild the index")
    if encoder.name != manifest.embedder:
        raise IndexError_(
            f"{directory}: index was built with {manifest.embedder}, but the configured embedder is "
            f"{encoder.name}; set GEAR_EMBEDDER={manifest.embedder} or rebuild"
        )
    return MemoryBackend.load(directory, embedder=manifest.embedder, encode=encoder.encode_cached, rrf_k=rrf_k)
