"""The embedded backend and the index directory, built with a deterministic fake encoder (no model)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gear.index import FORMAT_VERSION, MANIFEST, Manifest, build_index, open_memory_backend, verify_index
from gear.store.base import StoreError, passage_text, triple_text
from gear.store.fusion import rrf
from gear.store.graph import normalise_entity
from gear.store.memory import MemoryBackend


@pytest.fixture
def backend(fake_encoder, tiny_docs, tiny_triples) -> MemoryBackend:
    spo = [t for ts in tiny_triples for t in ts]
    owner = [p for p, ts in enumerate(tiny_triples) for _ in ts]
    return MemoryBackend.build([d.title for d in tiny_docs], [d.text for d in tiny_docs], spo, owner,
                               embedder=fake_encoder.name, encode=fake_encoder.encode_cached)


def test_counts_and_lookups(backend: MemoryBackend) -> None:
    assert backend.n_passages == 8 and backend.n_triples == 10
    assert backend.embedder == "fake-hash-64"
    [t] = backend.triples([3])
    assert (t.subject, t.predicate, t.object, t.passage_id) == ("Mount Etna", "is", "active volcano", 2)
    assert backend.passages([4])[0].title == "Paris"
    assert backend.passage_of(3) == 2
    assert backend.passages_of([0, 9, 3]).tolist() == [0, 6, 2]
    assert backend.triples_of(1) == [1, 2]
    assert backend.triples_of(7) == []


def test_neighbours_follow_shared_entities(backend: MemoryBackend) -> None:
    # 0: Magic Johnson→Michigan State; 1: Michigan State→national championship; 2: national championship→1979
    assert backend.neighbours(0).tolist() == [1]
    assert backend.neighbours(1).tolist() == [0, 2]
    # 3, 4 share Mount Etna; 4 and 5 share Sicily
    assert backend.neighbours(4).tolist() == [3, 5]
    assert backend.neighbours(9).tolist() == []
    assert backend.neighbours(7).tolist() == [6, 8]  # Paris (head of 6) and Seine (head of 8)


def test_bm25_finds_the_passage_with_the_term(backend: MemoryBackend) -> None:
    [hits] = backend.search_passages(["volcano"], 3, "bm25")
    assert [h.id for h in hits] == [2]  # passages sharing no term are not returned
    [hits] = backend.search_passages(["volcanoes of Sicily"], 5, "bm25")  # stemming: volcanoes → volcano
    assert {h.id for h in hits} == {2, 3}
    assert backend.search_passages(["zzzz"], 3, "bm25") == [[]]
    [thits] = backend.search_triples(["English Channel"], 3, "bm25")
    assert thits[0].id == 8


def test_dense_returns_the_vectors_own_passage_first(backend: MemoryBackend, fake_encoder, tiny_docs) -> None:
    for pid in range(backend.n_passages):
        qv = fake_encoder.vector(passage_text(tiny_docs[pid].title, tiny_docs[pid].text))[None, :]
        [hits] = backend.search_passages(["ignored"], 3, "dense", qv)
        assert hits[0].id == pid
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)
        assert hits[0].score >= hits[1].score >= hits[2].score
    tv = fake_encoder.vector(triple_text("Paris", "on river", "Seine"))[None, :]
    assert backend.search_triples(["x"], 1, "dense", tv)[0][0].id == 7


def test_hybrid_is_rrf_of_bm25_and_dense(backend: MemoryBackend) -> None:
    query = "capital of France river"
    [sparse] = backend.search_passages([query], 4, "bm25")
    [dense] = backend.search_passages([query], 4, "dense")
    [hybrid] = backend.search_passages([query], 4, "hybrid")
    expected = rrf([[s.id for s in sparse], [d.id for d in dense]])[:4]
    assert hybrid == expected
    assert hybrid[0].id == 4


def test_dense_query_is_encoded_when_no_vector_is_given(backend: MemoryBackend, fake_encoder) -> None:
    before = len(fake_encoder.encode_calls)
    backend.search_passages(["what is Paris"], 2, "dense")
    assert fake_encoder.encode_calls[before:] == [["what is Paris"]]


def test_find_passage(backend: MemoryBackend) -> None:
    assert backend.find_passage("Seine", "The Seine flows through Paris into the English Channel.") == 5
    assert backend.find_passage("Seine", "The Seine flows through Paris into the English Channel. ") == 5
    assert backend.find_passage("Seine", "other text") is None
    assert backend.find_passage("Seine", None) == 5
    assert backend.find_passage("Unknown", None) is None


# index directory ----------------------------------------------------------------------------------------------------
def test_manifest_records_format_model_dims_counts_and_checksums(tiny_index: Path) -> None:
    raw = json.loads((tiny_index / MANIFEST).read_text(encoding="utf-8"))
    assert raw["format_version"] == FORMAT_VERSION
    m = Manifest.read(tiny_index)
    assert (m.backend, m.embedder, m.dims) == ("memory", "fake-hash-64", 64)
    assert (m.n_passages, m.n_triples) == (8, 10)
    assert m.n_entities == 14
    assert m.source == {"corpus": "tiny"}
    assert m.triples_per_passage == {"mean": 10 / 8, "median": 1.0, "max": 2.0, "zero": 1.0}
    assert {"passage_vectors.npy", "triple_vectors.npy", "triple_passage.npy"} <= set(m.files)
    assert MANIFEST not in m.files
    assert sorted(m.files) == sorted(str(p.relative_to(tiny_index)) for p in tiny_index.rglob("*")
                                     if p.is_file() and p.name not in (MANIFEST, "triples_per_passage.npy"))
    for name, meta in m.files.items():
        assert meta["bytes"] == (tiny_index / name).stat().st_size
        assert len(meta["sha256"]) == 64
    assert verify_index(tiny_index) == []


def test_round_trip_gives_identical_results_without_re_encoding(tiny_index: Path, backend: MemoryBackend,
                                                                make_encoder) -> None:
    fresh = make_encoder()
    loaded = open_memory_backend(tiny_index, Manifest.read(tiny_index), fresh)
    assert fresh.encode_calls == []  # the corpus vectors come from disk
    qv = fresh.vector("river through the capital")[None, :]
    for method in ("bm25", "dense", "hybrid"):
        for query in ("river through the capital", "volcano island", "basketball championship"):
            assert loaded.search_passages([query], 5, method, qv) == backend.search_passages([query], 5, method, qv)
            assert loaded.search_triples([query], 5, method, qv) == backend.search_triples([query], 5, method, qv)
    assert fresh.encode_calls == []
    assert [loaded.neighbours(i).tolist() for i in range(10)] == [backend.neighbours(i).tolist() for i in range(10)]
    assert loaded.triples(range(10)) == backend.triples(range(10))
    assert loaded.passages(range(8)) == backend.passages(range(8))
    assert [loaded.triples_of(p) for p in range(8)] == [backend.triples_of(p) for p in range(8)]
    np.testing.assert_array_equal(loaded.triple_vectors([0, 5]), backend.triple_vectors([0, 5]))
    assert list(loaded.entities) == list(backend.entities)


def test_graph_tables_are_views_of_the_loaded_index_not_copies(tiny_index: Path, backend: MemoryBackend,
                                                                make_encoder) -> None:
    loaded = open_memory_backend(tiny_index, Manifest.read(tiny_index), make_encoder())
    tables = loaded.graph_tables(tiny_index / "ppr")  # a memory backend caches nothing: the index is the table
    assert tables.source == "index" and not (tiny_index / "ppr").exists()
    for part, own in ((tables.triple_vectors, loaded.triple_table.vectors),
                      (tables.passage_vectors, loaded.passage_table.vectors),
                      (tables.head, loaded.adjacency.head), (tables.tail, loaded.adjacency.tail),
                      (tables.triple_passage, loaded.triple_passage)):
        assert np.shares_memory(part, own)  # the memory-mapped arrays themselves
    assert tables.entity_names is loaded.entities
    # and they hold what the index holds: each triple's normalised subject and object, its passage, its vector
    spo = backend.triples(range(backend.n_triples))
    assert [tables.entity_names[h] for h in tables.head] == [normalise_entity(t.subject) for t in spo]
    assert [tables.entity_names[t] for t in tables.tail] == [normalise_entity(t.object) for t in spo]
    assert tables.triple_passage.tolist() == [t.passage_id for t in spo]
    np.testing.assert_array_equal(tables.triple_vectors, backend.triple_vectors(range(backend.n_triples)))
    assert tables.passage_vectors.shape == (backend.n_passages, tables.triple_vectors.shape[1])
    assert tables.n_entities == loaded.adjacency.n_entities
    sizes = tables.nbytes()
    assert sizes["vectors"] == 4 * tables.triple_vectors.shape[1] * (backend.n_triples + backend.n_passages)
    assert sizes["ids"] == 3 * 4 * backend.n_triples and sizes["entity names"] > 0


def test_open_with_a_different_embedder_is_refused(tiny_index: Path, make_encoder) -> None:
    with pytest.raises(StoreError, match=r"built with fake-hash-64.*GEAR_EMBEDDER=fake-hash-64"):
        open_memory_backend(tiny_index, Manifest.read(tiny_index), make_encoder(name="other"))


def test_open_detects_a_truncated_file(tiny_index: Path, make_encoder) -> None:
    path = tiny_index / "triple_vectors.npy"
    path.write_bytes(path.read_bytes()[:-8])
    with pytest.raises(StoreError, match=r"triple_vectors\.npy is missing or truncated"):
        open_memory_backend(tiny_index, Manifest.read(tiny_index), make_encoder())


def test_verify_detects_modified_truncated_and_missing_files(tiny_index: Path) -> None:
    path = tiny_index / "passage_vectors.npy"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0xFF  # same size, different content
    path.write_bytes(bytes(data))
    assert verify_index(tiny_index) == ["passage_vectors.npy: checksum mismatch"]
    (tiny_index / "triple_passage.npy").write_bytes(b"xy")
    (tiny_index / "entity_indptr.npy").unlink()
    problems = verify_index(tiny_index)
    assert "entity_indptr.npy: missing" in problems
    assert any(p.startswith("triple_passage.npy: size 2 != ") for p in problems)
    assert len(problems) == 3


def test_crash_during_write_keeps_the_old_index_and_leaves_no_temp_dirs(
        tiny_index: Path, tiny_docs, tiny_triples, make_encoder, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {p.name: p.read_bytes() for p in tiny_index.iterdir() if p.is_file()}
    real_save = MemoryBackend.save

    def crash(self: MemoryBackend, directory: Path) -> list[str]:
        real_save(self, directory)  # half the work is on disk...
        raise RuntimeError("disk full")

    monkeypatch.setattr(MemoryBackend, "save", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        build_index(tiny_docs[:2], tiny_triples[:2], tiny_index, make_encoder())
    after = {p.name: p.read_bytes() for p in tiny_index.iterdir() if p.is_file()}
    assert after == before
    assert verify_index(tiny_index) == []
    assert Manifest.read(tiny_index).n_passages == 8
    assert sorted(p.name for p in tiny_index.parent.iterdir()) == ["index"]


def test_crash_on_first_build_leaves_nothing(tmp_path: Path, tiny_docs, tiny_triples, make_encoder,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(self: MemoryBackend, directory: Path) -> list[str]:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "partial").write_text("x")
        raise KeyboardInterrupt

    monkeypatch.setattr(MemoryBackend, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        build_index(tiny_docs, tiny_triples, tmp_path / "new", make_encoder())
    assert list(tmp_path.iterdir()) == []


def test_rebuild_replaces_the_index(tiny_index: Path, tiny_docs, tiny_triples, make_encoder) -> None:
    build_index(tiny_docs[:3], tiny_triples[:3], tiny_index, make_encoder())
    assert Manifest.read(tiny_index).n_passages == 3
    assert verify_index(tiny_index) == []
    assert sorted(p.name for p in tiny_index.parent.iterdir()) == ["index"]


def test_no_such_directory_or_no_manifest(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such index directory; build one with `gear index`") as err:
        Manifest.read(tmp_path / "missing")
    assert str(tmp_path / "missing") in str(err.value)
    with pytest.raises(StoreError, match=r"not a GeAR index \(no manifest.json\)"):
        Manifest.read(tmp_path)


def test_wrong_format_version_or_corrupt_manifest(tiny_index: Path) -> None:
    path = tiny_index / MANIFEST
    data = json.loads(path.read_text(encoding="utf-8"))
    data["format_version"] = 99
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StoreError, match=f"index format 99 is not supported .*expects {FORMAT_VERSION}.*rebuild"):
        Manifest.read(tiny_index)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match="corrupt manifest"):
        Manifest.read(tiny_index)


def test_load_of_a_corrupt_part_raises_index_error(tiny_index: Path, make_encoder) -> None:
    (tiny_index / "entity_indptr.npy").write_bytes(b"garbage")
    with pytest.raises(StoreError, match="incomplete or corrupt"):
        MemoryBackend.load(tiny_index, embedder="fake-hash-64", encode=make_encoder().encode_cached)


def test_failed_swap_restores_the_previous_index(tiny_index: Path, tiny_docs, tiny_triples, make_encoder,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    before = {p.name: p.read_bytes() for p in tiny_index.iterdir() if p.is_file()}
    real_rename = Path.rename

    def rename(self: Path, target):
        if self.name.startswith(".index.tmp-"):
            raise OSError("rename failed")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", rename)
    with pytest.raises(OSError, match="rename failed"):
        build_index(tiny_docs[:2], tiny_triples[:2], tiny_index, make_encoder())
    assert {p.name: p.read_bytes() for p in tiny_index.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in tiny_index.parent.iterdir()) == ["index"]


def test_two_writers_of_one_directory_at_once_never_share_a_temporary_copy(tmp_path: Path) -> None:
    """Two app sessions building the same index name at the same moment: each writes its own temporary copy, and
    the directory ends as one writer's whole version (never a mix, never an error)."""
    import threading

    from gear.files import atomic_directory

    out = tmp_path / "index"
    both_writing = threading.Barrier(2, timeout=10)
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        def write(directory: Path) -> None:
            directory.mkdir()
            both_writing.wait()  # both temporary copies exist at once
            for part in ("a", "b", "c"):
                (directory / part).write_text(name)

        try:
            atomic_directory(out, write)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(name,)) for name in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert errors == []
    assert len({(out / part).read_text() for part in ("a", "b", "c")}) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # no temporary copy left behind
