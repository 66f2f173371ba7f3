"""The index manifest and the one integrity check: what an index directory holds (format, embedder, counts, every
file's size and checksum) and whether its files are all there and intact."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from gear.files import atomic_write_json
from gear.saved import MAX_ITEMS, MAX_NAME, MAX_WORD, SavedFileError, check, count, read, typed
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
            data = read(path, max_bytes=MAX_BYTES)
        except SavedFileError as exc:
            raise StoreError(f"corrupt manifest: {exc}; rebuild the index") from None
        version = data.get("format_version") if isinstance(data, dict) else None
        if version not in READABLE_FORMATS or isinstance(version, bool):
            raise StoreError(
                f"{directory}: index format {version} is not supported by this "
                f"version of gear (expects {FORMAT_VERSION}); rebuild it with `gear index`"
            )
        try:  # every field checked (a manifest can come with an index someone hands over)
            manifest = check(_schema(), data, str(path))
            check(_files(), manifest.files, str(path), ("files",))
        except SavedFileError as exc:
            raise StoreError(f"{exc}; rebuild the index") from None
        return manifest

    def write(self, directory: Path) -> None:
        atomic_write_json(directory / MANIFEST, asdict(self), indent=2)


MAX_BYTES = 4_000_000  # a manifest lists an index's few dozen files


@cache
def _schema() -> TypeAdapter[Manifest]:
    return typed(Manifest, ints={"format_version": count(1_000), "dims": count(100_000),
                                 **dict.fromkeys(("n_passages", "n_triples", "n_entities"), count(10**12))},
                 texts={"backend": Field(max_length=MAX_WORD), "embedder": Field(max_length=MAX_NAME),
                        "created": Field(max_length=MAX_WORD)})


#: the file list as check_files reads it: each file's size and checksum
class FileEntry(TypedDict):
    bytes: Annotated[int, count(2 ** 62)]
    sha256: Annotated[str, Field(max_length=MAX_WORD)]


@cache
def _files() -> TypeAdapter[dict[str, Any]]:
    name = Annotated[str, Field(pattern=_IN_FOLDER)]
    return TypeAdapter(Annotated[dict[name, FileEntry], Field(max_length=MAX_ITEMS)])  # type: ignore[valid-type]


_PART = r"[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*"
_IN_FOLDER = rf"^{_PART}(?:/{_PART})*$"  # a file of the index folder: no "..", no leading "/" or "."


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
