"""Atomic writes, the one way GeAR writes a file or a directory: into a temporary sibling, then renamed into place.

A crash or a kill mid-write therefore never leaves a truncated cache entry, trace, manifest, OpenIE file or half an
index, and never damages what was there before. Everything that writes data (indexes, the LLM cache, traces,
reports, extraction output) goes through here.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from filelock import FileLock


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically; the file gets the usual permissions (0666 less the umask, as `open` gives).

    The temporary file is created with mode 0666 and the kernel applies the umask itself, so the umask is never read
    or changed: setting it to 0 and back (the usual way to read it) is process-wide, and a thread of the app server
    creating a file in between would get world-writable permissions.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, data: Any, *, indent: int | None = 1, sort_keys: bool = False) -> None:
    """`data` as JSON (UTF-8, non-ASCII kept, trailing newline), written atomically."""
    atomic_write_text(path, json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n")


_swapping = threading.Lock()  # one directory swap at a time in this process (two renames that must not interleave)


def directory_lock(directory: Path, timeout: float = 60.0) -> FileLock:
    """The lock around read-modify-write of the files a person keeps inside `directory` (an index's own QA set), held
    by every writer of them and by `atomic_directory` while it swaps the directory: one process or thread at a time,
    across processes too. A sibling file (`.NAME.lock`), so it outlives the swap it guards."""
    directory = Path(directory).resolve()
    return FileLock(directory.parent / f".{directory.name}.lock", timeout=timeout)


def atomic_directory(out: Path, write: Callable[[Path], None], keep: Sequence[str] = ()) -> None:
    """Let `write` fill a temporary sibling directory, then swap it into place (the old one is restored on error).

    `keep`: files of the directory being replaced that the new one inherits unless `write` made its own (a person's
    files inside an index, which a rebuild must not lose), copied under `directory_lock` just before the swap, so a
    save that lands while `write` runs is carried over too."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    # unique per call, not only per process: two threads (app sessions) writing the same directory must not share
    # (and delete) each other's temporary copy; their swaps take turns, and the last one wins
    unique = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp = out.parent / f".{out.name}.tmp-{unique}"
    old = out.parent / f".{out.name}.old-{unique}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        write(tmp)
        with _swapping, directory_lock(out) if keep else nullcontext():
            for name in keep:
                if (out / name).is_file() and not (tmp / name).exists():
                    shutil.copy2(out / name, tmp / name)
            if out.exists():
                out.rename(old)
            try:
                tmp.rename(out)
            except BaseException:
                if old.exists() and not out.exists():
                    old.rename(out)  # put the previous one back before `finally` cleans up
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
