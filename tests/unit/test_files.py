"""Atomic writes keep the usual permissions without touching the process-wide umask (the app server is threaded)."""

from __future__ import annotations

import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gear.files import atomic_write_bytes, atomic_write_json

UMASK = 0o027  # not the default 0o022, so a file that ignores the umask (or uses mkstemp's 0600) shows


@pytest.fixture
def umask() -> Iterator[int]:
    old = os.umask(UMASK)
    try:
        yield UMASK
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_written_file_has_0666_less_the_umask_and_replaces_the_old_one(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "sub" / "data.json"
    atomic_write_json(target, {"a": 1})
    atomic_write_json(target, {"a": 2})
    assert target.read_text() == '{\n "a": 2\n}\n'
    assert _mode(target) == 0o666 & ~umask == 0o640
    assert [p.name for p in target.parent.iterdir()] == ["data.json"]  # no temporary file left behind


def test_the_umask_is_never_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Setting the umask to read it (0, then back) opens a window in which another thread's files are created
    world-writable; atomic writes must not call os.umask at all."""
    calls: list[int] = []
    real = os.umask
    monkeypatch.setattr(os, "umask", lambda mask: calls.append(mask) or real(mask))
    atomic_write_bytes(tmp_path / "x.bin", b"x")
    assert calls == []


def test_writes_from_threads_keep_every_files_permissions(tmp_path: Path, umask: int) -> None:
    """Threads writing atomically beside threads creating files the plain way: every file, theirs and ours, gets
    0666 less the umask, every atomic file holds one writer's whole content, and the umask is unchanged after."""
    writers, rounds = 8, 40
    start = threading.Barrier(writers * 2)
    errors: list[BaseException] = []

    def atomic(n: int) -> None:
        start.wait()
        for i in range(rounds):
            atomic_write_bytes(tmp_path / "shared.bin", f"{n}:{i}".encode() * 100)
            atomic_write_bytes(tmp_path / f"own-{n}-{i}.bin", b"x")

    def plain(n: int) -> None:
        start.wait()
        for i in range(rounds):
            (tmp_path / f"plain-{n}-{i}.txt").write_bytes(b"y")

    def guarded(job, n: int) -> None:
        try:
            job(n)
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(job, n)) for n in range(writers) for job in (atomic, plain)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    files = sorted(tmp_path.iterdir())
    assert len(files) == 1 + 2 * writers * rounds  # no temporary file left behind
    assert {p.name: _mode(p) for p in files} == {p.name: 0o640 for p in files}
    whole = {f"{n}:{i}".encode() * 100 for n in range(writers) for i in range(rounds)}
    assert (tmp_path / "shared.bin").read_bytes() in whole  # one writer's whole content, never a mix
    assert os.umask(umask) == umask


@given(st.text())
def test_a_slug_is_a_short_safe_file_name_part(text: str) -> None:
    """Saved traces, reports and handouts are named by one rule (gear.files.slug): whatever a person typed."""
    from gear.files import slug

    name = slug(text)
    assert re.fullmatch(r"[a-z0-9]([a-z0-9-]{0,46}[a-z0-9])?", name), name  # no "-" at either end, ≤ 48
    assert slug("GeAR (hybrid)") == "gear-hybrid" and slug("¿?") == "run"
