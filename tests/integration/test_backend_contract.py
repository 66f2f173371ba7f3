"""One contract for every SearchBackend: the embedded index ("memory"), the noida-db Elasticsearch emulator ("noida",
started by a session fixture) and a real cluster ("es", only when GEAR_ES_URL is set).

The same hand-written corpus is indexed everywhere with a deterministic hashed bag-of-words encoder, so no model is
needed. Every backend is compared with the memory backend, which is the reference:
- lookups, triples_of, passage_of, neighbours, stored vectors: identical;
- BM25: identical ranked ids; scores equal up to one constant factor, within 5 % (Lucene stores document lengths in
  one lossy byte, bm25s keeps them exact; the emulator's scores drift up to 3.4 % from bm25s's; the analyzer
  reproduces bm25s's tokens exactly on this corpus). The factor
  is 1 for Lucene ≥ 8 scoring (bm25s "lucene", real Elasticsearch 8/9); the noida-db emulator still multiplies by
  (k1 + 1) = 2.5, the pre-Lucene-8 formula — the ranking is the same;
- kNN: see _dense_close (int8 + HNSW are approximate; the backend re-ranks candidates by exact cosine);
- hybrid: exactly the RRF of the backend's own BM25 and kNN lists, and within one id of the memory backend's.
"""

from __future__ import annotations

import hashlib
import shutil
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gear.config import Settings
from gear.data.corpus import Document
from gear.index import Manifest, build_index, open_memory_backend
from gear.store.base import SearchBackend, StoreError, triple_text
from gear.store.memory import tokenize

pytestmark = pytest.mark.es

DIM = 128


class HashEncoder:
    """Deterministic stand-in for a sentence encoder: hashed bag of (stemmed) words plus a bias, L2-normalised."""

    name = "test-hash-bow-128"
    dim = DIM

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, tokens in enumerate(tokenize(list(texts)) if texts else []):
            for tok in tokens:  # each token: 3 hashed dims with signed weights (fewer exact ties than one-hot)
                h = int(hashlib.md5(tok.encode()).hexdigest(), 16)
                for _ in range(3):
                    h, r = divmod(h, 1 << 24)
                    out[i, r % (DIM - 1)] += (1.0 if r & 1 else -1.0) * (0.5 + (r >> 12) / 4096)
            out[i, DIM - 1] = 0.5  # never a zero vector (cosine similarity is undefined for it)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def encode_cached(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode(texts)


STATES = ["Bavaria", "Saxony", "Hesse", "Thuringia", "Brandenburg", "Berlin", "Hamburg", "Bremen", "Saarland",
          "Lower Saxony", "Saxony-Anhalt", "Schleswig-Holstein", "Rhineland-Palatinate", "North Rhine-Westphalia",
          "Baden-Wuerttemberg"]
CITIES = ["Munich", "Cologne", "Frankfurt", "Stuttgart", "Dusseldorf", "Leipzig", "Dortmund", "Essen", "Dresden",
          "Hanover", "Nuremberg", "Duisburg", "Bochum", "Wuppertal", "Bielefeld"]

PASSAGES: list[tuple[str, str, list[tuple[str, str, str]]]] = [
    ("Bremen Cathedral", "Bremen Cathedral, dedicated to St. Peter, is a church in the market square of Bremen.",
     [("Bremen Cathedral", "dedicated to", "St. Peter"), ("Bremen Cathedral", "located in", "Bremen")]),
    ("Bremen", "Bremen is a city in northern Germany on the river Weser, with a large port.",
     [("Bremen", "country", "Germany"), ("Bremen", "on river", "Weser")]),
    ("Weser", "The Weser is a river in Lower Saxony; it flows into the North Sea near Bremerhaven.",
     [("Weser", "flows into", "North Sea"), ("Weser", "located in", "Lower Saxony")]),
    ("St. Peter's Basilica", "St. Peter's Basilica is a church in Vatican City, designed by Michelangelo and others.",
     [("St. Peter's Basilica", "located in", "Vatican City"), ("St. Peter's Basilica", "designed by", "Michelangelo")]),
    ("Michelangelo", "Michelangelo was an Italian sculptor and painter of the High Renaissance, born in Caprese.",
     [("Michelangelo", "born in", "Caprese"), ("Michelangelo", "occupation", "sculptor")]),
    ("Vatican City", "Vatican City is an independent city-state enclaved within Rome, Italy.",
     [("Vatican City", "enclaved in", "Rome"), ("vatican city", "country", "Italy")]),
    ("Rome", "Rome is the capital city of Italy, founded according to legend by Romulus in 753 BC.",
     [("Rome", "capital of", "Italy"), ("Rome", "founded by", "Romulus")]),
    ("Werder Bremen", "SV Werder Bremen is a football club from Bremen, founded in 1899, playing at the Weserstadion.",
     [("Werder Bremen", "based in", "Bremen"), ("Werder Bremen", "founded in", "1899")]),
    ("The Magic Flute", "The Magic Flute is an opera composed by Wolfgang Amadeus Mozart, premiered in Vienna in 1791.",
     [("The Magic Flute", "composed by", "Mozart"), ("The Magic Flute", "premiered in", "Vienna")]),
    ("Mozart", "Wolfgang Amadeus Mozart was a composer born in Salzburg who worked in Vienna.",
     [("Mozart", "born in", "Salzburg"), ("Mozart", "worked in", "Vienna")]),
    ("Zugspitze", "The Zugspitze is the highest mountain in Germany, with a height of 2,962 metres.",
     [("Zugspitze", "country", "Germany"), ("Zugspitze", "height", "2,962 metres")]),
    ("Hanseatic League", "The Hanseatic League was a trading alliance; Bremen and Hamburg were members.",
     [("Bremen", "member of", "Hanseatic League"), ("Hamburg", "member of", "Hanseatic League")]),
    # a hub: 30 triples about one entity (normalised: "germany"), so neighbour lists exceed 10
    ("States of Germany", "Germany is a federal republic of sixteen states, among them Bavaria, Saxony and Bremen.",
     [("GERMANY", "has state", s) for s in STATES]),
    ("Cities of Germany", "Germany has many large cities such as Berlin, Munich, Cologne and Frankfurt.",
     [("Germany.", "has city", c) for c in CITIES]),
]

BM25_QUERIES = [
    "Which river flows through Bremen?", "church dedicated to St. Peter", "who composed the opera premiered in Vienna",
    "highest mountain height metres", "football club founded 1899", "capital of Italy founded by Romulus",
    "Hanseatic trading alliance members", "sculptor born in Caprese", "states of Germany", "the and of",  # stopwords
]
DENSE_QUERIES = ["river Weser North Sea", "Mozart opera Vienna", "church in Vatican City", "German football club",
                 "mountain in Germany"]


# -- fixtures ---------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def encoder() -> HashEncoder:
    return HashEncoder()


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory, encoder: HashEncoder) -> Path:
    out = tmp_path_factory.mktemp("contract") / "contract-index"
    docs = [Document(t, x) for t, x, _ in PASSAGES]
    build_index(docs, [tr for _, _, tr in PASSAGES], out, encoder)  # type: ignore[arg-type]
    return out


@pytest.fixture(scope="module")
def reference(index_dir: Path, encoder: HashEncoder) -> SearchBackend:
    return open_memory_backend(index_dir, Manifest.read(index_dir), encoder)  # type: ignore[arg-type]


def es_settings(url: str, prefix: str) -> Settings:
    import os

    if url == os.environ.get("GEAR_ES_URL"):  # a real cluster: credentials from the environment
        return Settings(backend="elasticsearch", es_url=url, es_prefix=prefix)
    return Settings(backend="elasticsearch", es_url=url, es_prefix=prefix, es_api_key=None, es_username=None,
                    es_password=None, es_ca_certs=None)


class EsIndex:
    """A migrated copy of the contract index on one cluster."""

    def __init__(self, url: str, directory: Path, settings: Settings) -> None:
        self.url, self.directory, self.settings = url, directory, settings


def _migrated(request: pytest.FixtureRequest, url: str, index_dir: Path, tmp: Path) -> Iterator[EsIndex]:
    from gear.index.migrate import migrate_to_elastic
    from gear.store.elastic import EsNames, connect, delete_from_elastic

    directory = tmp / "contract-index"
    shutil.copytree(index_dir, directory)
    prefix = f"geartest-{uuid.uuid4().hex[:8]}"
    settings = es_settings(url, prefix)
    record = migrate_to_elastic(directory, settings, None)
    try:
        yield EsIndex(url, directory, settings)
    finally:
        delete_from_elastic(connect(url, settings), EsNames(record["prefix"], record["name"]), url)


@pytest.fixture(scope="module")
def noida_index(request: pytest.FixtureRequest, noida_url: str, index_dir: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[EsIndex]:
    yield from _migrated(request, noida_url, index_dir, tmp_path_factory.mktemp("noida"))


@pytest.fixture(scope="module")
def real_index(request: pytest.FixtureRequest, real_es_url: str, index_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[EsIndex]:
    yield from _migrated(request, real_es_url, index_dir, tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module", params=["noida", "es"])
def es_index(request: pytest.FixtureRequest) -> EsIndex:
    return request.getfixturevalue("noida_index" if request.param == "noida" else "real_index")


def open_es(es: EsIndex, encoder: HashEncoder) -> SearchBackend:
    from gear.store.elastic import open_elastic_backend

    return open_elastic_backend(es.directory, Manifest.read(es.directory), es.settings, encoder)  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=["memory", "noida", "es"])
def backend(request: pytest.FixtureRequest, reference: SearchBackend, encoder: HashEncoder) -> SearchBackend:
    if request.param == "memory":
        return reference
    es = request.getfixturevalue("noida_index" if request.param == "noida" else "real_index")
    return open_es(es, encoder)


# -- the contract -----------------------------------------------------------------------------------------------------
def test_is_a_search_backend(backend: SearchBackend, reference: SearchBackend) -> None:
    assert isinstance(backend, SearchBackend)
    assert (backend.n_passages, backend.n_triples, backend.embedder) == \
        (reference.n_passages, reference.n_triples, reference.embedder)
    assert backend.n_triples == sum(len(tr) for _, _, tr in PASSAGES)


def test_lookups(backend: SearchBackend, reference: SearchBackend) -> None:
    pids = [3, 0, 13, 3]
    assert backend.passages(pids) == reference.passages(pids)
    tids = list(range(reference.n_triples))[::-1]
    assert backend.triples(tids) == reference.triples(tids)
    assert backend.passages([]) == [] and backend.triples([]) == []
    for t in (0, 5, 30, reference.n_triples - 1):
        assert backend.passage_of(t) == reference.passage_of(t)
    assert backend.passages_of(tids).tolist() == reference.passages_of(tids).tolist()
    for p in range(reference.n_passages):
        assert backend.triples_of(p) == reference.triples_of(p)


def test_triple_vectors(backend: SearchBackend, reference: SearchBackend) -> None:
    ids = [7, 1, 40, 1]
    np.testing.assert_allclose(backend.triple_vectors(ids), reference.triple_vectors(ids), atol=1e-6)
    assert backend.triple_vectors(ids).dtype == np.float32


def test_neighbours_same_sets_beyond_ten(backend: SearchBackend, reference: SearchBackend) -> None:
    sizes = []
    for t in range(reference.n_triples):
        got, want = backend.neighbours(t), reference.neighbours(t)
        assert got.tolist() == want.tolist(), t
        sizes.append(len(want))
    # the hub: "GERMANY" / "Germany." / "Germany" normalise to one entity → 29 + 3 neighbours, far beyond a page of 10
    assert max(sizes) >= 30


def test_find_passage(backend: SearchBackend, reference: SearchBackend) -> None:
    title, text, _ = PASSAGES[4]
    assert backend.find_passage(title, text) == reference.find_passage(title, text) == 4
    assert backend.find_passage(title, f"  {text} ") == 4  # stripped text still matches
    assert backend.find_passage(title, None) == 4
    assert backend.find_passage("No Such Title", None) is None
    assert backend.find_passage(title, "different text") is None


def test_bm25_identical_to_memory(backend: SearchBackend, reference: SearchBackend) -> None:
    for k in (1, 5, 20):
        got = backend.search_passages(BM25_QUERIES, k, "bm25")
        want = reference.search_passages(BM25_QUERIES, k, "bm25")
        for q, g, w in zip(BM25_QUERIES, got, want, strict=True):
            assert [s.id for s in g] == [s.id for s in w], q
            if g:  # same scores up to one constant factor (see the module docstring), within 2 %
                ratio = np.asarray([s.score for s in g]) / np.asarray([s.score for s in w])
                np.testing.assert_allclose(ratio, np.median(ratio), rtol=0.05, err_msg=q)
                assert 0.9 <= np.median(ratio) <= 2.6
    assert backend.search_passages(["the and of"], 5, "bm25") == [[]]  # only stopwords: nothing matches


def test_bm25_triples_batched(backend: SearchBackend, reference: SearchBackend) -> None:
    # tripleLink: many queries (the text of proximal triples) in one call, top-1 each
    queries = [triple_text(*t.spo) for t in reference.triples(range(0, reference.n_triples, 3))]
    got = backend.search_triples(queries, 1, "bm25")
    want = reference.search_triples(queries, 1, "bm25")
    assert [[s.id for s in g] for g in got] == [[s.id for s in w] for w in want]


def _dense_close(got: list, want: list, vectors: np.ndarray, qv: np.ndarray, k: int) -> None:
    """kNN tolerance. int8_hnsw is approximate twice over: HNSW may miss a neighbour, and int8 quantisation perturbs
    the candidate scores (the emulator imitates it: up to 0.06 on these sparse toy vectors, ~0.005 on MiniLM's dense
    ones). The backend re-ranks 2k candidates by the exact cosine of their stored float vectors, so: every reported
    score is the exact cosine; the best hit is the exact best; rank by rank the score is within 0.05 of the exact
    one, and at most one of the top k differs unless the scores tie."""
    assert len(got) == len(want) == k
    for s in got:
        assert abs(s.score - float(vectors[s.id] @ qv)) <= 1e-5
    assert abs(got[0].score - want[0].score) <= 1e-5
    for g, w in zip(got, want, strict=True):
        assert g.score <= w.score + 1e-5 and w.score - g.score <= 0.05
    g_ids, w_ids = {s.id for s in got}, {s.id for s in want}
    if len(g_ids & w_ids) < k - 1:
        assert max(w.score - g.score for g, w in zip(got, want, strict=True)) <= 1e-4, (got, want)


def test_knn_within_tolerance(backend: SearchBackend, reference: SearchBackend, encoder: HashEncoder) -> None:
    qv = encoder.encode(DENSE_QUERIES)
    pvec = np.asarray(reference.passage_table.vectors)  # type: ignore[attr-defined]
    tvec = reference.triple_vectors(range(reference.n_triples))
    for k in (3, 5):
        got = backend.search_passages(DENSE_QUERIES, k, "dense", qv)
        want = reference.search_passages(DENSE_QUERIES, k, "dense", qv)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _dense_close(g, w, pvec, qv[i], k)
        got = backend.search_triples(DENSE_QUERIES, k, "dense", qv)
        want = reference.search_triples(DENSE_QUERIES, k, "dense", qv)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _dense_close(g, w, tvec, qv[i], k)
    # without query vectors the backend encodes the queries itself
    assert [s.id for s in backend.search_passages(DENSE_QUERIES[:1], 3, "dense")[0]] == \
        [s.id for s in backend.search_passages(DENSE_QUERIES[:1], 3, "dense", qv[:1])[0]]


def test_hybrid_is_rrf_of_both(backend: SearchBackend, reference: SearchBackend, encoder: HashEncoder) -> None:
    from gear.store.fusion import rrf

    qv = encoder.encode(DENSE_QUERIES)
    k = 5
    hybrid = backend.search_passages(DENSE_QUERIES, k, "hybrid", qv)
    sparse = backend.search_passages(DENSE_QUERIES, k, "bm25", qv)
    dense = backend.search_passages(DENSE_QUERIES, k, "dense", qv)
    want = reference.search_passages(DENSE_QUERIES, k, "hybrid", qv)
    for h, s, d, w in zip(hybrid, sparse, dense, want, strict=True):
        assert [x.id for x in h] == [x.id for x in rrf([[x.id for x in s], [x.id for x in d]])[:k]]
        assert len(set(x.id for x in h) & set(x.id for x in w)) >= k - 1
    triples = backend.search_triples(DENSE_QUERIES, 3, "hybrid", qv)
    assert all(len(t) == 3 for t in triples)


def test_naive_ge_runs_unchanged(backend: SearchBackend, reference: SearchBackend, encoder: HashEncoder) -> None:
    """The engine (NaiveGE: base BM25 → all triples of the base passages → beam search → RRF) on this backend."""
    from gear.agent.engine import Engine

    settings = Settings(retriever="bm25", expand="naive", score_mode="exact")
    question = "Which river flows through the city whose cathedral is dedicated to St. Peter?"
    got = Engine(backend, encoder, settings).retrieve(question, k=5)  # type: ignore[arg-type]
    want = Engine(reference, encoder, settings).retrieve(question, k=5)  # type: ignore[arg-type]
    assert got.ids == want.ids


PPR_QUESTIONS = ["Which river flows through the city whose cathedral is dedicated to St. Peter?",
                 "Who designed the church in the city-state enclaved within Rome?", *DENSE_QUERIES]


def test_graph_tables_same_as_memory(backend: SearchBackend, reference: SearchBackend, tmp_path: Path) -> None:
    """PPR's view of the index: entity ids numbered as the embedded index numbers them (on Elasticsearch derived
    from the stored normalised head/tail, so indexes migrated before this method existed work too), each triple's
    passage, every stored vector."""
    want = reference.graph_tables()
    got = backend.graph_tables(tmp_path / "ppr")
    assert list(got.entity_names) == list(want.entity_names)
    assert len(got.entity_names) < 2 * reference.n_triples  # shared entities are one id ("GERMANY", "Germany.")
    for part in ("head", "tail", "triple_passage"):
        assert getattr(got, part).dtype == np.int32
        assert getattr(got, part).tolist() == getattr(want, part).tolist(), part
    for part in ("triple_vectors", "passage_vectors"):
        assert getattr(got, part).dtype == np.float32
        np.testing.assert_array_equal(getattr(got, part), getattr(want, part), err_msg=part)


def test_ppr_same_as_memory(backend: SearchBackend, reference: SearchBackend, encoder: HashEncoder) -> None:
    """The PPR method end to end (fact matching, seeds, the walk, the trace's entities and edges) on this backend."""
    from gear.agent.engine import Engine
    from gear.events import PPRRanked, PPRSeeded
    from gear.trace import Trace

    settings = Settings(retriever="dense", expand="ppr", ppr_synonym_threshold=0.5)
    engines = [Engine(b, encoder, settings) for b in (backend, reference)]  # type: ignore[arg-type]
    index = engines[0].ppr_index(settings)
    assert index.graph.counts() == engines[1].ppr_index(settings).graph.counts()
    assert index.graph.counts()["synonym_edges"] > 0
    for question in PPR_QUESTIONS:
        traces = [Trace(), Trace()]
        got, want = (e.retrieve(question, k=5, trace=t) for e, t in zip(engines, traces, strict=True))
        assert got.ids == want.ids, question
        assert [r.score for r in got.ranked] == pytest.approx([r.score for r in want.ranked], abs=1e-12)
        for kind in (PPRSeeded, PPRRanked):
            assert traces[0].first(kind) == traces[1].first(kind), (question, kind.__name__)


# -- Elasticsearch only -----------------------------------------------------------------------------------------------
def test_neighbour_cap_and_paging(es_index: EsIndex, reference: SearchBackend, encoder: HashEncoder) -> None:
    backend = open_es(es_index, encoder)
    hub = max(range(reference.n_triples), key=lambda t: len(reference.neighbours(t)))
    want = reference.neighbours(hub).tolist()
    backend.page_size = 7  # type: ignore[attr-defined]  # force several search_after pages
    assert backend.neighbours(hub).tolist() == want
    capped = open_es(es_index, encoder)
    capped.neighbour_cap = 20  # type: ignore[attr-defined]
    got = capped.neighbours(hub).tolist()
    assert len(got) == 20 and set(got) <= set(want)
    assert [a.tolist() for a in backend.neighbours_many([hub, 0, hub])] == \
        [want, reference.neighbours(0).tolist(), want]  # type: ignore[attr-defined]


def test_triples_of_many(es_index: EsIndex, reference: SearchBackend, encoder: HashEncoder) -> None:
    backend = open_es(es_index, encoder)
    pids = [12, 0, 13, 12, 5]
    assert backend.triples_of_many(pids) == [reference.triples_of(p) for p in pids]  # type: ignore[attr-defined]
    small = open_es(es_index, encoder)
    small.page_size = 4  # type: ignore[attr-defined]  # passages with 15 triples need the paged path
    assert small.triples_of_many(pids) == [reference.triples_of(p) for p in pids]  # type: ignore[attr-defined]


def test_graph_tables_scanned_once_and_kept_beside_the_index(es_index: EsIndex, reference: SearchBackend,
                                                             encoder: HashEncoder, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from elasticsearch import helpers

    import gear.store.elastic.tables as tables

    backend = open_es(es_index, encoder)
    cache = tmp_path / "ppr"
    scans: list[str] = []
    real_scan = helpers.scan

    def counted(client: object, **kwargs: object) -> object:
        scans.append(str(kwargs["index"]))
        return real_scan(client, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(helpers, "scan", counted)
    monkeypatch.setattr(tables, "SCAN_PAGE", 7)  # several scroll pages per index
    first = backend.graph_tables(cache)
    assert first.source == "scan" and len(scans) == 2  # one scroll over the triples, one over the passages
    built = Manifest.read(es_index.directory).elasticsearch or {}
    assert sorted(scans) == sorted([built["indices"]["passages"], built["indices"]["triples"]])  # not the aliases
    [folder] = [p.name for p in cache.iterdir()]
    assert folder.startswith(f"es-{es_index.settings.es_prefix}-")
    again = open_es(es_index, encoder).graph_tables(cache)
    assert again.source == "cache" and len(scans) == 2  # read from disk, memory-mapped: no scroll
    assert list(again.entity_names) == list(reference.graph_tables().entity_names)
    np.testing.assert_array_equal(again.triple_vectors, reference.graph_tables().triple_vectors)
    sizes = again.nbytes()
    assert sizes["vectors"] == 4 * DIM * (reference.n_triples + reference.n_passages)

    (cache / folder / "head.npy").write_bytes(b"damaged")  # a damaged copy is read again
    assert backend.graph_tables(cache).source == "scan" and len(scans) == 4

    # a new build of the index (new concrete indices) is never served the old copy, which is then deleted
    from gear.index.migrate import migrate_to_elastic

    migrate_to_elastic(es_index.directory, es_index.settings, None)
    rebuilt = open_es(es_index, encoder).graph_tables(cache)
    assert rebuilt.source == "scan" and len(scans) == 6
    assert [p.name for p in cache.iterdir()] != [folder] and len(list(cache.iterdir())) == 1
    assert rebuilt.head.tolist() == reference.graph_tables().head.tolist()


def test_graph_tables_without_a_writable_cache(es_index: EsIndex, reference: SearchBackend, encoder: HashEncoder,
                                               tmp_path: Path) -> None:
    backend = open_es(es_index, encoder)
    (tmp_path / "a-file").write_text("not a directory")  # no directory can be made under it, even by root
    for cache in (None, tmp_path / "a-file" / "ppr"):
        got = backend.graph_tables(cache)
        assert got.source == "scan" and (cache is None or not cache.exists())
        assert got.tail.tolist() == reference.graph_tables().tail.tolist()


def test_graph_tables_encode_vectors_missing_from_source(es_index: EsIndex, reference: SearchBackend,
                                                          encoder: HashEncoder, monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """A cluster that keeps dense vectors out of _source (a 9.x option): those vectors are encoded again from the
    stored texts with the index's encoder."""
    import gear.store.elastic.tables as tables

    real_pages = tables._pages

    def without_some_vectors(*args: object, **kwargs: object) -> object:
        for page in real_pages(*args, **kwargs):  # type: ignore[arg-type]
            for hit in page[::3]:
                hit["_source"].pop("vec", None)
            yield page

    monkeypatch.setattr(tables, "_pages", without_some_vectors)
    got = open_es(es_index, encoder).graph_tables()
    want = reference.graph_tables()
    np.testing.assert_allclose(got.triple_vectors, want.triple_vectors, atol=1e-6)
    np.testing.assert_allclose(got.passage_vectors, want.passage_vectors, atol=1e-6)


def test_graph_tables_of_an_incomplete_index_is_a_clear_error(es_index: EsIndex, encoder: HashEncoder,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import gear.store.elastic.tables as tables

    real_pages = tables._pages

    def one_missing(*args: object, **kwargs: object) -> object:
        for page in real_pages(*args, **kwargs):  # type: ignore[arg-type]
            yield [hit for hit in page if hit["_id"] != "3"]

    monkeypatch.setattr(tables, "_pages", one_missing)
    with pytest.raises(StoreError, match=r"1 triples missing .*re-run `gear migrate`"):
        open_es(es_index, encoder).graph_tables()


def test_ppr_engine_keeps_the_tables_in_the_index_directory(es_index: EsIndex, encoder: HashEncoder) -> None:
    from gear.agent.engine import Engine

    settings = es_index.settings.with_(retriever="dense", expand="ppr")
    first = Engine.open(es_index.directory, settings, encoder=encoder).ppr_index(settings)  # type: ignore[arg-type]
    second = Engine.open(es_index.directory, settings, encoder=encoder).ppr_index(settings)  # type: ignore[arg-type]
    assert second.cost.cached == {"graph tables": True, "entity vectors": True, "synonym edges": True}
    assert first.cost.bytes["graph"] > 0 and first.cost.bytes["vectors"] > 0
    assert any(p.name.startswith("es-") for p in (es_index.directory / "ppr").iterdir())
    from gear.index import verify_index

    assert verify_index(es_index.directory) == []  # the cache is no part of the checked index


def test_manifest_records_cluster_and_checksums_stay_valid(es_index: EsIndex) -> None:
    from gear.index import verify_index

    m = Manifest.read(es_index.directory)
    assert m.elasticsearch is not None
    assert m.elasticsearch["aliases"]["passages"].endswith("-passages")
    assert "@" not in m.elasticsearch["url"]
    assert verify_index(es_index.directory) == []


def test_missing_index_is_a_clear_error(es_index: EsIndex, encoder: HashEncoder, tmp_path: Path) -> None:
    directory = tmp_path / "never-migrated"
    shutil.copytree(es_index.directory, directory)
    m = Manifest.read(directory)
    m.elasticsearch = {**(m.elasticsearch or {}), "prefix": "gear-missing", "name": "nothing-here"}
    m.write(directory)
    from gear.store.elastic import open_elastic_backend

    with pytest.raises(StoreError, match=r"gear migrate"):
        open_elastic_backend(directory, m, es_index.settings, encoder)  # type: ignore[arg-type]


def test_mismatched_embedder_is_a_clear_error(es_index: EsIndex, encoder: HashEncoder) -> None:
    from gear.store.elastic import open_elastic_backend

    m = Manifest.read(es_index.directory)
    m.embedder = "all-mpnet-base-v2"
    with pytest.raises(StoreError, match=r"re-run `gear migrate"):
        open_elastic_backend(es_index.directory, m, es_index.settings, encoder)  # type: ignore[arg-type]
    m = Manifest.read(es_index.directory)
    m.n_triples += 1
    with pytest.raises(StoreError, match=r"out of date"):
        open_elastic_backend(es_index.directory, m, es_index.settings, encoder)  # type: ignore[arg-type]


def attempts_made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """(path, request timeout) of every HTTP attempt the Elasticsearch client makes, retries included."""
    from elastic_transport import Urllib3HttpNode

    made: list[tuple[str, object]] = []
    real = Urllib3HttpNode.perform_request

    def counting(self: Urllib3HttpNode, method: str, target: str, *args: Any, **kwargs: Any) -> Any:
        made.append((target, kwargs.get("request_timeout")))
        return real(self, method, target, *args, **kwargs)

    monkeypatch.setattr(Urllib3HttpNode, "perform_request", counting)
    return made


def test_unreachable_cluster_fails_fast(index_dir: Path, encoder: HashEncoder, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from gear.index.migrate import migrate_to_elastic
    from gear.store.elastic import open_elastic_backend

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    settings = Settings(backend="elasticsearch", es_url=f"http://127.0.0.1:{port}", es_api_key=None,
                        es_username="elastic", es_password="s3cret-do-not-print")
    made = attempts_made(monkeypatch)
    with pytest.raises(StoreError, match=r"cannot reach Elasticsearch") as err:
        open_elastic_backend(index_dir, Manifest.read(index_dir), settings, encoder)  # type: ignore[arg-type]
    assert made == [("/", 10.0)] * 2  # fails fast: check_cluster's one quick request and its one retry, nothing more
    assert "s3cret" not in str(err.value)
    with pytest.raises(StoreError, match=r"cannot reach Elasticsearch"):
        migrate_to_elastic(index_dir, settings, None)
    assert Manifest.read(index_dir).elasticsearch is None  # nothing recorded for a failed migrate


def test_failed_rebuild_keeps_the_working_index(es_index: EsIndex, encoder: HashEncoder) -> None:
    from gear.index.migrate import migrate_to_elastic

    before = Manifest.read(es_index.directory).elasticsearch

    def explode(stage: str, done: int, total: int) -> None:
        if stage == "triples" and done == 0:
            raise StoreError("simulated failure in the middle of a build")

    with pytest.raises(StoreError, match="simulated"):
        migrate_to_elastic(es_index.directory, es_index.settings, explode)
    assert Manifest.read(es_index.directory).elasticsearch == before
    backend = open_es(es_index, encoder)
    assert backend.search_passages(["Weser river"], 1, "bm25")[0][0].id == 2
    from gear.store.elastic import connect

    client = connect(es_index.url, es_index.settings)
    names = [i for i in client.indices.get(index=f"{before['prefix']}-*")]  # type: ignore[index]
    assert sorted(names) == sorted(before["indices"].values())  # type: ignore[index]  # the half-built ones are gone


def test_rebuild_switches_aliases(es_index: EsIndex, encoder: HashEncoder) -> None:
    from gear.index.migrate import migrate_to_elastic
    from gear.store.elastic import connect

    before = Manifest.read(es_index.directory).elasticsearch
    record = migrate_to_elastic(es_index.directory, es_index.settings, None)
    assert record["aliases"] == before["aliases"]  # type: ignore[index]
    assert record["indices"] != before["indices"]  # type: ignore[index]
    client = connect(es_index.url, es_index.settings)
    existing = set(client.indices.get(index=f"{record['prefix']}-*"))
    assert existing == set(record["indices"].values())  # the previous build was deleted after the switch
    backend = open_es(es_index, encoder)
    assert backend.passages([2])[0].title == "Weser"



class _Stub:
    """A tiny HTTP server that answers every request like an Elasticsearch that refuses us (401) or hangs."""

    def __init__(self, mode: str) -> None:
        import http.server
        import threading

        self.requests: list[str] = []
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                if mode == "hang":
                    time.sleep(3)
                    return  # the client gave up long ago
                body = b'{"error":{"type":"security_exception","reason":"unable to authenticate user"},"status":401}'
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("X-Elastic-Product", "Elasticsearch")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_auth_failure_and_timeout_are_clear_errors(index_dir: Path, encoder: HashEncoder,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from gear.store.elastic import check_cluster, connect, open_elastic_backend

    stub = _Stub("auth")
    try:
        settings = Settings(backend="elasticsearch", es_url=stub.url, es_username="elastic",
                            es_password="s3cret-do-not-print", es_api_key=None)
        with pytest.raises(StoreError, match=r"rejected the credentials.*GEAR_ES_API_KEY") as err:
            open_elastic_backend(index_dir, Manifest.read(index_dir), settings, encoder)  # type: ignore[arg-type]
        assert "s3cret" not in str(err.value)
    finally:
        stub.close()
    stub = _Stub("hang")
    made = attempts_made(monkeypatch)
    try:
        with pytest.raises(StoreError, match=r"timed out"):
            check_cluster(connect(stub.url), stub.url, timeout=0.5)
        assert made == [("/", 0.5)] * 2 and len(stub.requests) == 2  # each waited 0.5 s, retried once: no more
    finally:
        stub.close()
