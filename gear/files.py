"""Atomic writes, the one way GeAR writes a file or a directory: into a temporary sibling, then renamed into place.

A crash or a kill mid-write therefore never leaves a truncated cache entry, trace, manifest, OpenIE file or half an
index, and never damages what was there before. Everything that writes data (indexes, the LLM cache, traces,
reports, extraction output) goes through here, and `data_dir` says where a person's own files go — one folder for
the app, the CLI and Python alike, so a question asked in one replays the same run in the others.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

#: the project's checkout when gear runs from one (its assets/, and data/ beside them); for an installed package
#: this is site-packages, which is never written to (data_dir checks that it is a checkout first)
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The user's data folder: where everything a person makes or saves is written — indexes, traces, tags and
    verdicts, evaluations and the recorded LLM answers — by the app, `gear ask/eval/diagnose` and the library alike,
    never into the project's assets/. $GEAR_STUDIO_DATA; else ./data in the project when gear runs from a checkout
    that can be written to (a clone); else the user's own folder ($XDG_DATA_HOME/gear-studio, by default
    ~/.local/share/gear-studio), so a read-only checkout (installed once for a class) or an installed package still
    saves."""
    env = os.environ.get("GEAR_STUDIO_DATA")
    if env:
        return Path(env)
    local = PROJECT_ROOT / "data"
    checkout = (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "gear").is_dir()
    if checkout and os.access(local if local.exists() else PROJECT_ROOT, os.W_OK):
        return local
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "gear-studio"


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


LOCK_NAME = ".lock"  # inside a directory `atomic_directory` may swap: see directory_lock


class LockTimeout(TimeoutError):
    """Another writer held a directory's lock longer than the caller would wait."""


@contextmanager
def directory_lock(directory: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the lock around read-modify-write of the files a person keeps inside `directory` (an index's own QA set):
    one writer at a time, across threads and processes, and never while `atomic_directory` swaps the directory. The
    lock is a file inside the directory (`.lock`, flock'ed, removed by its holder on release): a writer that got the
    lock of a file no longer at that path (released and removed, or the directory swapped away while it waited) takes
    the one there now instead. Raises LockTimeout."""
    import fcntl

    path = Path(directory) / LOCK_NAME
    deadline = time.monotonic() + timeout
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise LockTimeout(f"{path}: held by another writer for {timeout:.0f} s") from None
                    time.sleep(0.02)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                try:
                    yield
                finally:
                    _unlink_if_ours(path, fd)  # before unlocking: a waiter then sees the path is not its file
                    fcntl.flock(fd, fcntl.LOCK_UN)
                return
            fcntl.flock(fd, fcntl.LOCK_UN)  # the directory was swapped while we waited: the new one's lock
        finally:
            os.close(fd)


def _unlink_if_ours(path: Path, fd: int) -> None:
    """Remove the lock file when the path still names the file we hold (after a swap it names the new directory's):
    no lock file outlives its writer, and whoever waited on it takes the next one."""
    try:
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            os.unlink(path)
    except FileNotFoundError:
        pass


def atomic_directory(out: Path, write: Callable[[Path], None], keep: Sequence[str] = ()) -> None:
    """Let `write` fill a temporary sibling directory, then swap it into place (the old one is restored on error).

    `keep`: files of the directory being replaced that the new one inherits unless `write` made its own (a person's
    files inside an index, which a rebuild must not lose), copied under the old directory's `directory_lock` just
    before the swap, so a save that lands while `write` runs is carried over too, and one waiting for the lock lands
    in the new directory."""
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
        with _swapping, directory_lock(out) if keep and out.is_dir() else nullcontext():
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


def slug(text: str) -> str:
    """A short file-name form of a text a person wrote (a question, a label): ASCII letters and digits, every other
    run of characters one "-", at most 48 characters, lower case; "run" when nothing is left. One rule for every file
    named after a question (saved traces, reports, handouts), so one question's files sort together."""
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:48].rstrip("-").lower() or "run"
