"""The index manifest and the one integrity check: what an index directory holds (format, embedder, counts, every
file's size and checksum) and whether its files are all there and intact."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gear.files import atomic_write_json
from gear.store.base import StoreError

FORMAT_VERSION = 2  # 2: texts as UTF-8 blob + offsets .npy (memory-mapped), optional faiss IVF files
READABLE_FORMATS = (1, 2)  # format 1 (texts as JSON lists) still loads
MANIFEST = "manifest.json"


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
            raise StoreError(f"{directory}: no such index directory; build one with `gear index`")
        if not path.exists():
            raise StoreError(f"{directory}: not a GeAR index (no {MANIFEST}); build one with `gear index`")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise StoreError(f"{path}: corrupt manifest ({exc.msg}); rebuild the index") from None
        if data.get("format_version") not in READABLE_FORMATS:
            raise StoreError(
                f"{directory}: index format {data.get('format_version')} is not supported by this "
                f"version of gear (expects {FORMAT_VERSION}); rebuild it with `gear index`"
            )
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})

    def write(self, directory: Path) -> None:
        atomic_write_json(directory / MANIFEST, asdict(self), indent=2)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_files(directory: Path, manifest: Manifest, *, checksums: bool = False) -> list[str]:
    """Problems with the files the manifest lists (empty = intact): missing or truncated files always; with
    `checksums`, every file's sha256 too (slow on big indexes: `gear info --verify`)."""
    problems = []
    for name, meta in manifest.files.items():
        path = directory / name
        if not path.exists():
            problems.append(f"{name}: missing")
        elif path.stat().st_size != meta["bytes"]:
            problems.append(f"{name}: size {path.stat().st_size} != {meta['bytes']}")
        elif checksums and sha256_file(path) != meta["sha256"]:
            problems.append(f"{name}: checksum mismatch")
    return problems


def verify_index(directory: Path) -> list[str]:
    """Checksum every file against the manifest; returns the problems found (empty = intact)."""
    return check_files(directory, Manifest.read(directory), checksums=True)


def require_intact(directory: Path, manifest: Manifest) -> None:
    """Raise a one-line StoreError when a listed file is missing or truncated (the cheap check done on open)."""
    problems = check_files(directory, manifest)
    if problems:
        name = problems[0].split(":", 1)[0]
        raise StoreError(f"{directory}: file {name} is missing or truncated; rebuild the index")
