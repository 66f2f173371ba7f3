"""Elasticsearch fixtures: the noida-db emulator (started and stopped here) and a real cluster when GEAR_ES_URL is set.

The emulator is the `noida-db` PyPI package (a single binary that speaks the Elasticsearch 8.15 REST API). In CI
(CI=true) or with GEAR_REQUIRE_NOIDA=1 an emulator that cannot start FAILS the tests instead of skipping them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.corpus import align_openie, load_corpus, load_openie, load_qa
from gear.index import build_index


def _must_run() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get("GEAR_REQUIRE_NOIDA") == "1"


def _unavailable(reason: str) -> None:
    if _must_run():
        pytest.fail(f"noida-db emulator unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"noida-db emulator unavailable: {reason}")


def noida_binary() -> Path | None:
    """The server binary shipped inside the noida_db package (run directly, not through its Python wrapper), or
    $GEAR_NOIDA_BIN."""
    override = os.environ.get("GEAR_NOIDA_BIN")
    if override:
        return Path(override) if Path(override).is_file() else None
    try:
        from importlib.resources import files

        path = Path(str(files("noida_db").joinpath("noida-db")))
    except (ImportError, ModuleNotFoundError):
        found = shutil.which("noida-db")
        return Path(found) if found else None
    if path.is_file():
        if not os.access(path, os.X_OK):
            path.chmod(0o755)
        return path
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


@pytest.fixture(scope="session")
def noida_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start `noida-db start --only elasticsearch` on a free 127.0.0.1 port; stop it at the end of the session."""
    binary = noida_binary()
    if binary is None:
        _unavailable("package noida-db is not installed (pip install noida-db==0.2.3)")
    data = tmp_path_factory.mktemp("noida-data")
    port = free_port()
    log = (data / "noida.log").open("wb")
    cmd = [str(binary), "start", "--only", "elasticsearch", "--host", "127.0.0.1",
           "--elasticsearch-port", str(port), "--data-dir", str(data)]
    try:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    except OSError as exc:
        log.close()
        _unavailable(f"cannot execute {binary}: {exc}")
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not _ready(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            log.close()
            tail = (data / "noida.log").read_text(errors="replace")[-500:]
            _unavailable(f"noida-db did not start (exit {proc.returncode}): {tail}")
        time.sleep(0.1)
    try:
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # its own session: only what this fixture started
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        log.close()


@pytest.fixture(scope="session")
def real_es_url() -> str:
    """A real cluster given by GEAR_ES_URL (credentials from GEAR_ES_API_KEY / GEAR_ES_USERNAME+PASSWORD)."""
    url = os.environ.get("GEAR_ES_URL")
    if not url:
        pytest.skip("GEAR_ES_URL is not set: no real Elasticsearch cluster to test against")
    return url


# -- the bundled MuSiQue dev50 index (MiniLM, GPT-3.5 OpenIE triples), built once per test session ------------------
MUSIQUE = Path(__file__).resolve().parents[2] / "assets" / "musique"


@pytest.fixture(scope="session")
def musique(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    from gear.embed import Encoder

    docs, report = load_corpus(MUSIQUE / "musique_corpus1890.json")
    oie, _ = load_openie(MUSIQUE / "openie_musique_gpt-3.5-turbo-1106_1890.json")
    out = tmp_path_factory.mktemp("musique") / "index"
    encoder = Encoder("all-MiniLM-L6-v2")
    build_index(docs, align_openie(docs, oie, report), out, encoder)
    return Engine.open(out, Settings(), encoder=encoder)


@pytest.fixture(scope="session")
def questions():
    return load_qa(MUSIQUE / "musique_dev50.json")[0]
