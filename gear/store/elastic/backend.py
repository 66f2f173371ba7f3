"""ElasticBackend: the SearchBackend queries served by a cluster, and opening it for an index directory."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from gear.store.base import GraphTables, StoreError, passage_text, triple_text
from gear.store.elastic.client import check_cluster, connect, es_errors
from gear.store.elastic.layout import ES_FORMAT, EsNames, check_prefix, passage_key, read_meta, slug
from gear.store.elastic.tables import TableSource, concrete_index
from gear.store.elastic.tables import graph_tables as read_graph_tables
from gear.store.fusion import rrf
from gear.types import Passage, Retriever, Scored, Triple

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

    from gear.config import Settings
    from gear.embed import Encoder


class IndexFacts(Protocol):
    """What opening reads of an index's manifest (gear.index.Manifest has it; the index package sits above the store,
    so the store names only what it needs)."""

    embedder: str
    dims: int
    n_passages: int
    n_triples: int
    elasticsearch: dict[str, Any] | None


# -- the backend ------------------------------------------------------------------------------------------------------
class _LRU:
    def __init__(self, size: int) -> None:
        self.size, self.lock = size, threading.Lock()
        self.data: OrderedDict[int, Any] = OrderedDict()

    def get_many(self, keys: Sequence[int]) -> tuple[dict[int, Any], list[int]]:
        found, missing = {}, []
        with self.lock:
            for k in keys:
                if k in self.data:
                    self.data.move_to_end(k)
                    found[k] = self.data[k]
                else:
                    missing.append(k)
        return found, list(dict.fromkeys(missing))

    def put_many(self, items: dict[int, Any]) -> None:
        with self.lock:
            self.data.update(items)
            while len(self.data) > self.size:
                self.data.popitem(last=False)


class ElasticBackend:
    """SearchBackend over an Elasticsearch cluster; records fetched by id are cached (they never change)."""

    def __init__(self, client: Elasticsearch, names: EsNames, *, url: str, embedder: str,
                 encode: Callable[[Sequence[str]], np.ndarray], n_passages: int, n_triples: int, dims: int,
                 rrf_k: int = 60, num_candidates: int = 100, neighbour_cap: int = 10_000,
                 cache_size: int = 200_000, rescore: bool = True, oversample: int = 2) -> None:
        self.es, self.names, self.url = client, names, url
        self._embedder, self._encode = embedder, encode
        self._n_passages, self._n_triples, self.dims = n_passages, n_triples, dims
        self.rrf_k, self.num_candidates, self.neighbour_cap = rrf_k, num_candidates, neighbour_cap
        self._passages = _LRU(cache_size)
        self._triples = _LRU(cache_size)  # id -> (s, p, o, passage_id, head, tail)
        self._vectors = _LRU(cache_size)
        self._neighbours = _LRU(20_000)
        self._by_passage = _LRU(50_000)
        # kNN: fetch oversample × k candidates with their stored float vectors and rank them by exact cosine
        self.rescore, self.oversample = rescore, max(1, oversample)
        self.msearch_batch = 50  # searches per _msearch round trip (each one well inside the request timeout)
        self.page_size = 1000  # hits per request when listing every match (search_after beyond it)

    def _errors(self, what: str) -> Any:
        return es_errors(self.url, what)

    # -- protocol: sizes ---------------------------------------------------------------------------------------------
    @property
    def n_passages(self) -> int:
        return self._n_passages

    @property
    def n_triples(self) -> int:
        return self._n_triples

    @property
    def embedder(self) -> str:
        return self._embedder

    # -- lookups -----------------------------------------------------------------------------------------------------
    def _mget(self, index: str, ids: Sequence[int], fields: list[str], what: str) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        for start in range(0, len(ids), 1000):
            chunk = ids[start:start + 1000]
            with self._errors(what):
                resp = self.es.mget(index=index, ids=[str(i) for i in chunk], source_includes=fields)
            for doc in resp["docs"]:
                if doc.get("found"):
                    out[int(doc["_id"])] = doc.get("_source", {})
        missing = [i for i in ids if i not in out]
        if missing:
            raise StoreError(f"{what}: ids {missing[:5]} not in Elasticsearch index {index} (of {len(ids)} asked); "
                              "the index is out of date — re-run `gear migrate`")
        return out

    def _triple_records(self, ids: Sequence[int]) -> dict[int, tuple[str, str, str, int, str, str]]:
        ids = [int(i) for i in ids]
        found, missing = self._triples.get_many(ids)
        if missing:
            docs = self._mget(self.names.triples, missing, ["s", "p", "o", "pid", "head", "tail"], "fetching triples")
            new = {i: (d["s"], d["p"], d["o"], int(d["pid"]), d["head"], d["tail"]) for i, d in docs.items()}
            self._triples.put_many(new)
            found.update(new)
        return found

    def passages(self, ids: Sequence[int]) -> list[Passage]:
        ids = [int(i) for i in ids]
        found, missing = self._passages.get_many(ids)
        if missing:
            docs = self._mget(self.names.passages, missing, ["title", "text"], "fetching passages")
            new = {i: Passage(i, d["title"], d["text"]) for i, d in docs.items()}
            self._passages.put_many(new)
            found.update(new)
        return [found[i] for i in ids]

    def triples(self, ids: Sequence[int]) -> list[Triple]:
        rec = self._triple_records(ids)
        return [Triple(int(i), *rec[int(i)][:3], rec[int(i)][3]) for i in ids]

    def passage_of(self, triple_id: int) -> int:
        return self._triple_records([triple_id])[int(triple_id)][3]

    def passages_of(self, triple_ids: Sequence[int]) -> np.ndarray:
        ids = [int(i) for i in np.asarray(triple_ids).reshape(-1)]
        rec = self._triple_records(ids)
        return np.asarray([rec[i][3] for i in ids], dtype=np.int32)

    def triples_of(self, passage_id: int) -> list[int]:
        found, _ = self._by_passage.get_many([int(passage_id)])
        if found:
            return list(found[int(passage_id)])
        body = {"query": {"term": {"passage_id": str(int(passage_id))}}, "_source": False, "sort": [{"id": "asc"}]}
        ids = self._search_all(self.names.triples, body, "listing a passage's triples")
        self._by_passage.put_many({int(passage_id): tuple(ids)})
        return ids

    def triples_of_many(self, passage_ids: Sequence[int]) -> list[list[int]]:
        """triples_of for several passages in one msearch (NaiveGE's initial nodes: every triple of the base
        passages); a passage with more triples than one page is completed with triples_of."""
        pids = [int(p) for p in passage_ids]
        found, missing = self._by_passage.get_many(pids)
        if missing:
            searches: list[dict[str, Any]] = []
            for p in missing:
                searches += [{"index": self.names.triples},
                             {"query": {"term": {"passage_id": str(p)}}, "_source": False, "sort": [{"id": "asc"}],
                              "size": self.page_size, "track_total_hits": False}]
            responses: list[dict[str, Any]] = []
            for start in range(0, len(searches), 2 * self.msearch_batch):
                with self._errors("listing passages' triples"):
                    responses += self.es.msearch(searches=searches[start:start + 2 * self.msearch_batch])[
                        "responses"]
            new: dict[int, tuple[int, ...]] = {}
            for p, resp in zip(missing, responses, strict=True):
                self._raise_item(resp, "listing passages' triples")
                hits = resp["hits"]["hits"]
                if len(hits) < self.page_size:
                    new[p] = tuple(int(h["_id"]) for h in hits)
            self._by_passage.put_many(new)
            found.update(new)
        return [list(found[p]) if p in found else self.triples_of(p) for p in pids]

    def _search_all(self, index: str, body: dict[str, Any], what: str, cap: int | None = None) -> list[int]:
        """Every matching id (ascending), paged with search_after, at most `cap`."""
        cap = self.neighbour_cap if cap is None else cap
        out: list[int] = []
        after = None
        while len(out) < cap:
            page = dict(body, size=min(self.page_size, cap - len(out)), track_total_hits=False)
            if after is not None:
                page["search_after"] = after
            with self._errors(what):
                hits = self.es.search(index=index, body=page)["hits"]["hits"]
            out.extend(int(h["_id"]) for h in hits)
            if len(hits) < page["size"]:
                break
            after = hits[-1]["sort"]
        return out

    def neighbours(self, triple_id: int) -> np.ndarray:
        return self.neighbours_many([triple_id])[0]

    def _neighbour_query(self, triple_id: int, head: str, tail: str) -> dict[str, Any]:
        ents = list(dict.fromkeys([head, tail]))
        return {"query": {"bool": {"should": [{"terms": {"head": ents}}, {"terms": {"tail": ents}}],
                                   "minimum_should_match": 1, "must_not": [{"ids": {"values": [str(triple_id)]}}]}},
                "_source": False, "sort": [{"id": "asc"}], "track_total_hits": False}

    def neighbours_many(self, triple_ids: Sequence[int]) -> list[np.ndarray]:
        """Neighbours of several triples: one msearch of `terms` queries on head/tail, each returning every
        neighbour up to `neighbour_cap` (a page that comes back full is followed with search_after)."""
        ids = [int(t) for t in triple_ids]
        found, missing = self._neighbours.get_many(ids)
        if missing:
            rec = self._triple_records(missing)
            page = min(self.neighbour_cap, self.page_size)
            searches: list[dict[str, Any]] = []
            for t in missing:
                searches += [{"index": self.names.triples}, {**self._neighbour_query(t, rec[t][4], rec[t][5]),
                                                             "size": page}]
            responses: list[dict[str, Any]] = []
            for start in range(0, len(searches), 2 * self.msearch_batch):
                with self._errors("looking up neighbours"):
                    responses += self.es.msearch(searches=searches[start:start + 2 * self.msearch_batch])[
                        "responses"]
            new: dict[int, np.ndarray] = {}
            for t, resp in zip(missing, responses, strict=True):
                self._raise_item(resp, "looking up neighbours")
                hits = resp["hits"]["hits"]
                got = [int(h["_id"]) for h in hits]
                if len(hits) == page and len(got) < self.neighbour_cap:  # more than one page: follow it up
                    body = self._neighbour_query(t, rec[t][4], rec[t][5])
                    rest = self._search_all(self.names.triples, {**body, "search_after": hits[-1]["sort"]},
                                            "looking up neighbours", cap=self.neighbour_cap - len(got))
                    got += rest
                new[t] = np.asarray(sorted(got), dtype=np.int32)
            self._neighbours.put_many(new)
            found.update(new)
        return [found[t] for t in ids]

    def triple_vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        ids = [int(i) for i in np.asarray(ids).reshape(-1)]
        found, missing = self._vectors.get_many(ids)
        if missing:
            docs = self._mget(self.names.triples, missing, ["vec"], "fetching triple vectors")
            new: dict[int, np.ndarray] = {}
            absent = [i for i in missing if "vec" not in docs[i]]
            for i in missing:
                if "vec" in docs[i]:
                    new[i] = np.asarray(docs[i]["vec"], dtype=np.float32)
            if absent:  # a cluster that drops vectors from _source (9.x option): re-encode the triple texts
                texts = [triple_text(*t.spo) for t in self.triples(absent)]
                new.update(zip(absent, np.asarray(self._encode(texts), dtype=np.float32), strict=True))
            self._vectors.put_many(new)
            found.update(new)
        if not ids:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.stack([found[i] for i in ids]).astype(np.float32, copy=False)

    def graph_tables(self, cache: Path | None = None) -> GraphTables:
        """Every triple's entities, passage and vector and every passage's vector, read once by scroll
        (gear.store.elastic.tables) and kept under `cache` for the concrete indices now behind the aliases."""
        source = TableSource(self.es, self.url, self.names, concrete_index(self.es, self.names.passages, self.url),
                             concrete_index(self.es, self.names.triples, self.url), self._n_passages,
                             self._n_triples, self.dims, self._embedder)
        return read_graph_tables(source, self._encode_triples, self._encode_passages, cache)

    def _encode_triples(self, ids: Sequence[int]) -> np.ndarray:
        return np.asarray(self._encode([triple_text(*t.spo) for t in self.triples(ids)]), dtype=np.float32)

    def _encode_passages(self, ids: Sequence[int]) -> np.ndarray:
        return np.asarray(self._encode([passage_text(p.title, p.text) for p in self.passages(ids)]),
                          dtype=np.float32)

    def find_passage(self, title: str, text: str | None) -> int | None:
        if text is not None:
            keys = list(dict.fromkeys([passage_key(title, text), passage_key(title, text.strip())]))
            body = {"query": {"terms": {"key": keys}}, "_source": ["key"], "size": 10, "sort": [{"id": "asc"}]}
            with self._errors("looking up a passage"):
                hits = self.es.search(index=self.names.passages, body=body)["hits"]["hits"]
            by_key: dict[str, int] = {}
            for h in hits:
                by_key.setdefault(h["_source"]["key"], int(h["_id"]))
            for k in keys:
                if k in by_key:
                    return by_key[k]
            return None
        body = {"query": {"term": {"title_key": title}}, "_source": False, "size": 2, "sort": [{"id": "asc"}]}
        with self._errors("looking up a passage"):
            hits = self.es.search(index=self.names.passages, body=body)["hits"]["hits"]
        return int(hits[0]["_id"]) if len(hits) == 1 else None

    # -- search ------------------------------------------------------------------------------------------------------
    @staticmethod
    def _raise_item(resp: dict[str, Any], what: str) -> None:
        if "error" in resp:
            err = resp["error"]
            reason = f"{err.get('type', '')}: {err.get('reason', '')}" if isinstance(err, dict) else str(err)
            if isinstance(err, dict) and err.get("type") == "index_not_found_exception":
                raise StoreError(f"Elasticsearch index {err.get('index', '?')} not found while {what}; run "
                                  "`gear migrate INDEX_DIR --to elasticsearch`")
            raise StoreError(f"Elasticsearch refused {what}: {resp.get('status', '')} {reason[:300]}")

    def _bm25_body(self, query: str, k: int) -> dict[str, Any]:
        return {"query": {"match": {"body": query}}, "size": k, "_source": False,
                "sort": ["_score", {"id": "asc"}], "track_total_hits": False}

    def _knn_body(self, vector: np.ndarray, k: int, size: int) -> dict[str, Any]:
        k_fetch = min(size, k * self.oversample) if self.rescore else k
        return {"knn": {"field": "vec", "query_vector": [float(x) for x in vector], "k": k_fetch,
                        "num_candidates": max(self.num_candidates, k_fetch)}, "size": k_fetch,
                "_source": ["vec"] if self.rescore else False}

    def _hits(self, resp: dict[str, Any], qv: np.ndarray | None, k: int, vectors: _LRU | None) -> list[Scored]:
        raw = resp["hits"]["hits"]
        if qv is None:
            hits = [(int(h["_id"]), float(h["_score"] if h.get("_score") is not None else h["sort"][0]))
                    for h in raw]
        elif self.rescore and all("vec" in h.get("_source", {}) for h in raw):
            # exact cosine from the stored float vectors: undoes int8 quantisation error, as the embedded backend
            vecs = {int(h["_id"]): np.asarray(h["_source"]["vec"], dtype=np.float32) for h in raw}
            if vectors is not None:
                vectors.put_many(vecs)
            hits = [(i, float(v @ qv)) for i, v in vecs.items()]
        else:  # Elasticsearch's cosine score is (1 + cos) / 2; report the cosine like the embedded backend
            hits = [(int(h["_id"]), 2.0 * float(h["_score"]) - 1.0) for h in raw]
        hits.sort(key=lambda x: (-x[1], x[0]))  # ties by id, as the embedded backend
        return [Scored(i, s) for i, s in hits[:k]]

    def _search(self, index: str, size: int, queries: Sequence[str], k: int, method: Retriever,
                query_vectors: np.ndarray | None, what: str) -> list[list[Scored]]:
        if not queries:
            return []
        if size == 0 or k <= 0:
            return [[] for _ in queries]
        k = min(k, size)
        if method not in ("bm25", "dense", "hybrid"):
            raise ValueError(f"unknown search method {method!r}")
        qv = None
        if method != "bm25":
            qv = query_vectors if query_vectors is not None else self._encode(list(queries))
            qv = np.atleast_2d(np.asarray(qv, dtype=np.float32))
        kinds: list[np.ndarray | None] = []  # the query vector of a kNN request, None for BM25
        searches: list[dict[str, Any]] = []
        for i, q in enumerate(queries):
            if method in ("bm25", "hybrid"):
                searches += [{"index": index}, self._bm25_body(q, k)]
                kinds.append(None)
            if method in ("dense", "hybrid"):
                assert qv is not None
                searches += [{"index": index}, self._knn_body(qv[i], k, size)]
                kinds.append(qv[i])
        responses: list[dict[str, Any]] = []
        step = self.msearch_batch
        for start in range(0, len(searches), 2 * step):
            with self._errors(what):
                responses += self.es.msearch(searches=searches[start:start + 2 * step])["responses"]
        lists = []
        cache = self._vectors if index == self.names.triples else None
        for resp, vector in zip(responses, kinds, strict=True):
            self._raise_item(resp, what)
            lists.append(self._hits(resp, vector, k, cache))
        if method != "hybrid":
            return lists
        return [rrf([[s.id for s in lists[2 * i]], [s.id for s in lists[2 * i + 1]]], k=self.rrf_k)[:k]
                for i in range(len(queries))]

    def search_passages(self, queries: Sequence[str], k: int, method: Retriever,
                        query_vectors: np.ndarray | None = None) -> list[list[Scored]]:
        return self._search(self.names.passages, self._n_passages, queries, k, method, query_vectors,
                            "searching passages")

    def search_triples(self, queries: Sequence[str], k: int, method: Retriever,
                       query_vectors: np.ndarray | None = None) -> list[list[Scored]]:
        return self._search(self.names.triples, self._n_triples, queries, k, method, query_vectors,
                            "searching triples")


# -- opening ----------------------------------------------------------------------------------------------------------
def _names_for(directory: Path, manifest: IndexFacts, settings: Settings) -> EsNames:
    recorded = manifest.elasticsearch or {}
    if recorded.get("prefix") and recorded.get("name"):
        return EsNames(recorded["prefix"], recorded["name"])
    return EsNames(check_prefix(settings.es_prefix), slug(Path(directory).resolve().name))



def open_elastic_backend(directory: Path, manifest: IndexFacts, settings: Settings,
                         encoder: Encoder) -> ElasticBackend:
    """Open the cluster copy of the index in `directory` (written by `gear migrate`), checking that it matches."""
    url = settings.es_url or (manifest.elasticsearch or {}).get("url")
    if not url:
        raise StoreError("GEAR_BACKEND=elasticsearch needs GEAR_ES_URL (e.g. http://127.0.0.1:9200), and the index "
                          "copied there with `gear migrate INDEX_DIR --to elasticsearch`")
    names = _names_for(directory, manifest, settings)
    client = connect(url, settings, request_timeout=settings.es_timeout)
    check_cluster(client, url)
    meta = read_meta(client, names, url)
    if meta.get("format") != ES_FORMAT:
        raise StoreError(f"Elasticsearch index {names.base} has layout version {meta.get('format')}, this gear "
                          f"expects {ES_FORMAT}; re-run `gear migrate {directory} --to elasticsearch`")
    if meta.get("embedder") != manifest.embedder or int(meta.get("dims", -1)) != manifest.dims:
        raise StoreError(f"Elasticsearch index {names.base} holds {meta.get('embedder')} vectors "
                          f"({meta.get('dims')} dims) but {directory} uses {manifest.embedder} ({manifest.dims}); "
                          f"re-run `gear migrate {directory} --to elasticsearch`")
    if encoder.name != manifest.embedder:
        raise StoreError(f"{directory}: index was built with {manifest.embedder}, but the configured embedder is "
                          f"{encoder.name}; set GEAR_EMBEDDER={manifest.embedder}")
    if (int(meta.get("n_passages", -1)), int(meta.get("n_triples", -1))) != (manifest.n_passages, manifest.n_triples):
        raise StoreError(f"Elasticsearch index {names.base} has {meta.get('n_passages')} passages / "
                          f"{meta.get('n_triples')} triples but {directory} has {manifest.n_passages} / "
                          f"{manifest.n_triples}; it is out of date — re-run `gear migrate {directory} --to "
                          "elasticsearch`")
    return ElasticBackend(client, names, url=url, embedder=manifest.embedder, encode=encoder.encode_cached,
                          n_passages=manifest.n_passages, n_triples=manifest.n_triples, dims=manifest.dims,
                          rrf_k=settings.rrf_k, num_candidates=settings.es_num_candidates,
                          neighbour_cap=settings.es_neighbour_cap,
                          rescore=settings.es_rescore,
                          oversample=settings.es_oversample)
