"""Dense search (exact NumPy / faiss IVF above a threshold) and the format-2 text columns of the memory backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gear.index import FORMAT_VERSION, Manifest, build_index, open_memory_backend, verify_index
from gear.store import vectors as V
from gear.store.base import triple_text
from gear.store.memory import MemoryBackend, TextColumn, TripleColumns
from gear.store.vectors import VectorIndex, exact_top_k


def unit_rows(n: int, d: int = 16, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_exact_top_k_is_brute_force_with_lower_id_first_on_ties() -> None:
    m = unit_rows(50)
    q = m[7] + 0.1 * m[3]
    [got] = exact_top_k(m, q, 5)
    sims = m @ q.astype(np.float32)
    assert [s.id for s in got] == sorted(range(50), key=lambda i: (-sims[i], i))[:5]
    assert got[0].score == pytest.approx(float(sims.max()))
    dup = np.stack([m[0], m[1], m[0], m[0]])
    assert [s.id for s in exact_top_k(dup, m[0], 3)[0]] == [0, 2, 3]
    assert [s.id for s in exact_top_k(dup, m[0], 10)[0]] == [0, 2, 3, 1]  # k > n: everything, ranked
    assert exact_top_k(np.zeros((0, 16), np.float32), m[:2], 3) == [[], []]
    assert len(exact_top_k(m, m[:3], 2)) == 3  # one list per query row


def test_below_threshold_search_is_exact_and_writes_no_ivf(tmp_path: Path) -> None:
    m = unit_rows(100)
    index = VectorIndex(m)
    assert index.kind == "numpy-exact"
    assert index.save_ivf(tmp_path / "x.ivf") is False
    assert not (tmp_path / "x.ivf").exists()
    loaded = VectorIndex.load(m, tmp_path / "x.ivf")
    assert loaded.kind == "numpy-exact"
    assert loaded.search(m[4], 3) == exact_top_k(m, m[4], 3)


def test_ivf_above_threshold_round_trips_and_finds_near_duplicates(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("faiss")
    monkeypatch.setattr(V, "IVF_THRESHOLD", 500)
    m = unit_rows(2000, d=32, seed=1)
    index = VectorIndex(m)
    assert index.save_ivf(tmp_path / "t.ivf") is True
    loaded = VectorIndex.load(m, tmp_path / "t.ivf")
    assert loaded.kind == "faiss-ivf"
    hits = 0
    for i in range(0, 2000, 100):  # a query equal to a stored row finds that row first
        [res] = loaded.search(m[i], 5)
        hits += res[0].id == i
        assert res[0].score == pytest.approx(1.0, abs=1e-4)
        assert loaded.search(m[i], 5, exact=True) == exact_top_k(m, m[i], 5)
    assert hits == 20


def test_ivf_params_grow_with_size() -> None:
    assert V.ivf_params(10_000) == (100, 8)
    nlist, nprobe = V.ivf_params(1_500_000)
    assert nlist == 1225 and nprobe == nlist // 16


@pytest.mark.parametrize("strings", [[], [""], ["a", "", "Straße", "東京 タワー", "x" * 1000, "tab\there"]])
def test_text_column_round_trip(tmp_path: Path, strings: list[str]) -> None:
    col = TextColumn.from_strings(strings)
    col.save(tmp_path, "c")
    loaded = TextColumn.load(tmp_path, "c")
    assert len(loaded) == len(strings)
    assert list(loaded) == strings
    assert [loaded[i] for i in range(len(strings))] == strings
    assert loaded[0:2] == strings[0:2]
    if strings:
        assert loaded[-1] == strings[-1]
        assert loaded[np.int64(0)] == strings[0]
    with pytest.raises(IndexError):
        loaded[len(strings)]
    assert loaded.byte_lengths().tolist() == [len(s.encode()) for s in strings]


def test_triple_columns_and_their_text_lengths(tmp_path: Path) -> None:
    spo = [("Mount Etna", "located on", "Sicily"), ("É", "", "ß")]
    cols = TripleColumns.from_spo(spo)
    cols.save(tmp_path)
    loaded = TripleColumns.load(tmp_path)
    assert list(loaded) == spo and loaded[1] == spo[1]
    assert loaded.text_lengths().tolist() == [len(triple_text(*t).encode()) for t in spo]


def test_format_two_index_has_no_json_texts_and_loads_the_same(tiny_index: Path, tiny_docs, tiny_triples,
                                                              make_encoder) -> None:
    manifest = Manifest.read(tiny_index)
    assert manifest.format_version == FORMAT_VERSION == 2
    assert "passage_texts.utf8.npy" in manifest.files and "passages.json" not in manifest.files
    assert verify_index(tiny_index) == []
    backend = open_memory_backend(tiny_index, manifest, make_encoder())
    assert [backend.passages([i])[0].title for i in range(len(tiny_docs))] == [d.title for d in tiny_docs]
    assert [backend.triples([i])[0].spo for i in range(backend.n_triples)] == [t for ts in tiny_triples for t in ts]
    assert backend.find_passage(tiny_docs[2].title, tiny_docs[2].text) == 2
    assert backend.triple_text_lengths().tolist() == [
        len(triple_text(*t).encode()) for ts in tiny_triples for t in ts]


def test_format_one_index_still_loads(tmp_path: Path, tiny_index: Path, make_encoder) -> None:
    """An index written before format 2 (texts as JSON lists) opens and answers the same."""
    import json
    import shutil

    old = tmp_path / "old"
    shutil.copytree(tiny_index, old)
    b2 = MemoryBackend.load(tiny_index, embedder="fake-hash-64", encode=make_encoder().encode_cached)
    for part in ("passage_titles", "passage_texts", "entities", *TripleColumns.PARTS):
        for suffix in (".offsets.npy", ".utf8.npy"):
            (old / f"{part}{suffix}").unlink()
    (old / "passages.json").write_text(json.dumps({"titles": list(b2.titles), "texts": list(b2.texts)}))
    (old / "triples.json").write_text(json.dumps([list(t) for t in b2.spo]))
    (old / "entities.json").write_text(json.dumps(list(b2.entities)))
    data = json.loads((old / "manifest.json").read_text())
    data["format_version"] = 1
    (old / "manifest.json").write_text(json.dumps(data))
    assert Manifest.read(old).format_version == 1
    b1 = MemoryBackend.load(old, embedder="fake-hash-64", encode=make_encoder().encode_cached)
    assert list(b1.spo) == list(b2.spo) and list(b1.texts) == list(b2.texts)
    assert b1.triple_text_lengths().tolist() == b2.triple_text_lengths().tolist()
    q = b2.triple_vectors([0])
    assert b1.search_triples(["Etna"], 3, "dense", q) == b2.search_triples(["Etna"], 3, "dense", q)


def test_index_above_the_threshold_saves_and_uses_ivf(tmp_path: Path, tiny_docs, tiny_triples, make_encoder,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("faiss")
    monkeypatch.setattr(V, "IVF_THRESHOLD", 5)
    out = tmp_path / "ivf"
    manifest = build_index(tiny_docs, tiny_triples, out, make_encoder())
    assert {"passage_vectors.ivf", "triple_vectors.ivf"} <= set(manifest.files)
    backend = open_memory_backend(out, manifest, make_encoder())
    assert backend.triple_table.index is not None and backend.triple_table.index.kind == "faiss-ivf"
    q = backend.triple_vectors([3])
    [res] = backend.search_triples(["x"], 1, "dense", q)
    assert res[0].id == 3
