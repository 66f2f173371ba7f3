"""Shared fixtures: a deterministic fake encoder (no model), a tiny corpus with triples, and a network guard."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import socket
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).parent / "fixtures"

_WORD = re.compile(r"[a-z0-9]+")


class FakeEncoder:
    """Hashed bag-of-words vectors, L2-normalised: the same text always gives the same vector, no model needed.

    Mirrors gear.embed.Encoder's surface (name, dim, encode, encode_cached) and counts the texts it encodes.
    """

    def __init__(self, name: str = "fake-hash-64", dim: int = 64) -> None:
        self.name, self.dim = name, dim
        self.encode_calls: list[list[str]] = []
        self._cache: dict[str, np.ndarray] = {}

    def vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        v[0] = 0.05  # a small constant component, so no text encodes to the zero vector
        for word in _WORD.findall(text.lower()):
            h = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little")
            v[1 + h % (self.dim - 1)] += 1.0
        return v / np.linalg.norm(v)

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        self.encode_calls.append(list(texts))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.vector(t) for t in texts]).astype(np.float32)

    def encode_cached(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for t, v in zip(missing, self.encode(missing), strict=True):
                self._cache[t] = v
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    @property
    def encoded_texts(self) -> list[str]:
        return [t for call in self.encode_calls for t in call]


TINY_DOCS: list[tuple[str, str]] = [
    ("Magic Johnson", "Magic Johnson played basketball for Michigan State."),
    ("Michigan State", "Michigan State won the national championship in 1979."),
    ("Mount Etna", "Mount Etna is an active volcano on the island of Sicily."),
    ("Sicily", "Sicily is the largest island in the Mediterranean Sea."),
    ("Paris", "Paris is the capital of France and sits on the Seine."),
    ("Seine", "The Seine flows through Paris into the English Channel."),
    ("Ada Lovelace", "Ada Lovelace wrote the first published computer program."),
    ("Lonely", "A passage without any extracted triples about gardening tulips."),
]

TINY_TRIPLES: list[list[tuple[str, str, str]]] = [
    [("Magic Johnson", "played for", "Michigan State")],
    [("Michigan State", "won", "national championship"), ("national championship", "year", "1979")],
    [("Mount Etna", "is", "active volcano"), ("Mount Etna", "located on", "Sicily")],
    [("Sicily", "largest island in", "Mediterranean Sea")],
    [("Paris", "capital of", "France"), ("Paris", "on river", "Seine")],
    [("Seine", "flows into", "English Channel")],
    [("Ada Lovelace", "wrote", "first computer program")],
    [],
]


@pytest.fixture
def fake_encoder() -> FakeEncoder:
    return FakeEncoder()


@pytest.fixture
def make_encoder():
    """The FakeEncoder class, for tests that need a second, fresh encoder (e.g. to open a saved index)."""
    return FakeEncoder


@pytest.fixture
def tiny_docs():
    from gear.data.corpus import Document

    return [Document(t, x) for t, x in TINY_DOCS]


@pytest.fixture
def tiny_triples() -> list[list[tuple[str, str, str]]]:
    return [list(t) for t in TINY_TRIPLES]


@pytest.fixture
def tiny_index(tmp_path: Path, tiny_docs, tiny_triples, fake_encoder: FakeEncoder) -> Path:
    """A saved index of the tiny corpus, built with the fake encoder."""
    from gear.index import build_index

    out = tmp_path / "index"
    build_index(tiny_docs, tiny_triples, out, fake_encoder, source={"corpus": "tiny"})
    return out


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # AF_UNIX paths and the like
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach the network: outbound connections to anything but loopback fail at once."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(address: object) -> None:
        if not _is_local(address):
            raise OSError(f"network access blocked in tests: {address!r}")

    def connect(self, address):
        guard(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        guard(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
