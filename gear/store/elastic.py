"""The Elasticsearch backend: the same SearchBackend protocol as the embedded index, served by a cluster.

Layout per GeAR index (`{prefix}-{name}`), each name an alias onto a concrete index built at migrate time:
  {prefix}-{name}-passages   id (int), title/text (stored), title_key and key (keyword: exact lookups), body (BM25), vec
  {prefix}-{name}-triples    id (int), s/p/o (stored), body (BM25), head/tail (keyword: normalised entity),
                             passage_id (keyword), pid (int), vec
  {prefix}-{name}-meta       one document: format version, embedder, dims, counts (checked on open)
A build writes new concrete indices and moves the aliases in one atomic `_aliases` call only when every document is in,
so a failed build never breaks the index that was serving.

BM25 uses an analyzer that reproduces the embedded backend's bm25s tokenisation (lower case, words of ≥ 2 letters or
digits, Lucene's English stopwords, Snowball/Porter2 stemming) and bm25s's parameters (k1 = 1.5, b = 0.75). Dense search
is kNN over `dense_vector` (cosine, `int8_hnsw` unless configured). Hybrid is RRF computed here
(gear.retrieve.fusion.rrf) over a BM25 and a kNN request sent together in one msearch: Elasticsearch's own RRF needs a
paid licence.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from gear.retrieve.fusion import rrf
from gear.store.base import IndexError_, Method, passage_text, triple_text
from gear.types import Passage, Scored, Triple

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

    from gear.config import Settings
    from gear.embed import Encoder
    from gear.index import Manifest
    from gear.store.memory import MemoryBackend

ES_FORMAT = 1  # layout version of the indices written here; bump when mappings change
Progress = Callable[[str, int, int], None]

STOPWORDS_EN = ["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
                "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to",
                "was", "will", "with"]  # Lucene's English stop set, which is also bm25s's "en" list

ANALYSIS = {
    "tokenizer": {"gear_words": {"type": "pattern", "pattern": r"[^\p{L}\p{N}_]+"}},
    "filter": {
        "gear_min2": {"type": "length", "min": 2},  # bm25s keeps \w\w+ only
        "gear_stop": {"type": "stop", "stopwords": STOPWORDS_EN},
        "gear_stem": {"type": "stemmer", "language": "porter2"},  # Snowball English, as PyStemmer("english")
    },
    "analyzer": {"gear_english": {"type": "custom", "tokenizer": "gear_words",
                                  "filter": ["lowercase", "gear_min2", "gear_stop", "gear_stem"]}},
}
SIMILARITY = {"gear_bm25": {"type": "BM25", "k1": 1.5, "b": 0.75}}  # bm25s defaults (Lucene's are k1 = 1.2)


# -- names and connection --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EsNames:
    """Alias names of one GeAR index in a cluster."""

    prefix: str
    name: str

    @property
    def base(self) -> str:
        return f"{self.prefix}-{self.name}"

    @property
    def passages(self) -> str:
        return f"{self.base}-passages"

    @property
    def triples(self) -> str:
        return f"{self.base}-triples"

    @property
    def meta(self) -> str:
        return f"{self.base}-meta"

    def aliases(self) -> dict[str, str]:
        return {"passages": self.passages, "triples": self.triples, "meta": self.meta}


_NAME_OK = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def slug(text: str) -> str:
    """An Elasticsearch-safe index name part: lower case, [a-z0-9_-]."""
    s = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_.")
    return s or "index"


def check_prefix(prefix: str) -> str:
    if not _NAME_OK.match(prefix) or len(prefix) > 100:
        raise IndexError_(f"Elasticsearch prefix {prefix!r} is not a valid index name part; use lower-case letters, "
                          "digits, '-' or '_' (GEAR_ES_PREFIX / --prefix)")
    return prefix


def safe_url(url: str) -> str:
    """The URL without any user:password part, for messages and the manifest."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _secret(value: Any) -> str | None:
    if value is None:
        return None
    getter = getattr(value, "get_secret_value", None)
    return getter() if getter else str(value)


def connect(url: str, settings: Settings | None = None, *, request_timeout: float = 30.0,
            max_retries: int = 3) -> Elasticsearch:
    """A client with retries on timeouts and connection errors (with the transport's backoff); credentials from
    settings (API key preferred over user/password), never logged."""
    from elasticsearch import Elasticsearch

    kwargs: dict[str, Any] = {"request_timeout": request_timeout, "max_retries": max_retries,
                              "retry_on_timeout": True, "retry_on_status": (502, 503, 504)}
    if settings is not None:
        api_key = _secret(settings.es_api_key)
        if api_key:
            kwargs["api_key"] = api_key
        elif settings.es_username:
            kwargs["basic_auth"] = (settings.es_username, _secret(settings.es_password) or "")
        if settings.es_ca_certs:
            kwargs["ca_certs"] = str(settings.es_ca_certs)
    try:
        return Elasticsearch(url, **kwargs)
    except (ValueError, TypeError) as exc:
        raise IndexError_(f"invalid Elasticsearch URL {safe_url(url)!r} ({type(exc).__name__}); set GEAR_ES_URL to "
                          "something like http://127.0.0.1:9200") from None


def check_cluster(client: Elasticsearch, url: str, timeout: float = 10.0) -> dict[str, Any]:
    """One quick request (`timeout` s, one retry) so a wrong URL fails fast; returns the server's version info."""
    from elasticsearch import NotFoundError, UnsupportedProductError

    try:
        with es_errors(url, "connecting"):
            return dict(client.options(request_timeout=timeout, max_retries=1).info())
    except IndexError_ as exc:
        if isinstance(exc.__context__, NotFoundError):
            raise IndexError_(f"{safe_url(url)} does not answer like Elasticsearch (HTTP 404 on /); check GEAR_ES_URL")\
                from None
        raise
    except UnsupportedProductError:
        raise IndexError_(f"{safe_url(url)} is not an Elasticsearch server the client supports; check GEAR_ES_URL")\
            from None


@contextmanager
def es_errors(url: str, what: str, *, hint_missing: str = "run `gear migrate INDEX_DIR --to elasticsearch`"
              ) -> Iterator[None]:
    """Turn client exceptions into one-line IndexError_ messages that say what to do; never include credentials."""
    from elasticsearch import (
        ApiError,
        AuthenticationException,
        AuthorizationException,
        ConnectionError,
        ConnectionTimeout,
        NotFoundError,
        SerializationError,
        TransportError,
    )

    where = safe_url(url)
    try:
        yield
    except IndexError_:
        raise
    except ConnectionTimeout:
        raise IndexError_(f"Elasticsearch at {where} timed out while {what} (after retries); check the cluster's "
                          "health and load, or retry later") from None
    except ConnectionError as exc:
        reason = "TLS/certificate problem" if "ssl" in str(exc).lower() or "certificate" in str(exc).lower() \
            else "connection failed"
        raise IndexError_(f"cannot reach Elasticsearch at {where} while {what} ({reason}); check GEAR_ES_URL, "
                          "that the cluster is running, and GEAR_ES_CA_CERTS for https") from None
    except AuthenticationException:
        raise IndexError_(f"Elasticsearch at {where} rejected the credentials while {what}; set GEAR_ES_API_KEY or "
                          "GEAR_ES_USERNAME and GEAR_ES_PASSWORD") from None
    except AuthorizationException:
        raise IndexError_(f"Elasticsearch at {where}: the configured user may not do this ({what}); grant it "
                          "read (and for migrate: create_index, write, manage aliases) on the gear indices") from None
    except NotFoundError as exc:
        index = _error_index(exc)
        raise IndexError_(f"Elasticsearch index {index or '?'} not found at {where} while {what}; {hint_missing}") \
            from None
    except ApiError as exc:
        raise IndexError_(f"Elasticsearch at {where} refused {what}: {exc.meta.status} {_error_reason(exc)}") \
            from None
    except (TransportError, SerializationError) as exc:
        raise IndexError_(f"Elasticsearch at {where} failed while {what}: {type(exc).__name__}") from None


def _error_index(exc: Any) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            return err.get("index") or (err.get("root_cause") or [{}])[0].get("index")
    return None


def _error_reason(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        return f"{err.get('type', '')}: {err.get('reason', '')}"[:300]
    return str(getattr(exc, "message", type(exc).__name__))[:300]


# -- mappings ---------------------------------------------------------------------------------------------------------
def index_options(kind: str) -> dict[str, Any]:
    """Explicit dense_vector index_options (from 9.1 the default for ≥ 384 dims would be bbq_hnsw)."""
    allowed = {"hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw", "flat", "int8_flat", "int4_flat", "bbq_flat"}
    if kind not in allowed:
        raise IndexError_(f"unknown dense_vector index type {kind!r}; choose one of {sorted(allowed)}")
    return {"type": kind}


def _vector(dims: int, kind: str) -> dict[str, Any]:
    return {"type": "dense_vector", "dims": dims, "index": True, "similarity": "cosine",
            "index_options": index_options(kind)}


def passage_mapping(dims: int, kind: str) -> dict[str, Any]:
    text = {"type": "text", "analyzer": "gear_english", "similarity": "gear_bm25"}
    return {"dynamic": "strict", "properties": {
        "id": {"type": "integer"},
        "title": {"type": "keyword", "index": False, "doc_values": False},
        "title_key": {"type": "keyword"},
        "text": {"type": "keyword", "index": False, "doc_values": False},
        "body": text,  # passage_text(title, text): what BM25 sees, as in the embedded backend
        "key": {"type": "keyword"},
        "vec": _vector(dims, kind),
    }}


def triple_mapping(dims: int, kind: str) -> dict[str, Any]:
    stored = {"type": "keyword", "index": False, "doc_values": False}
    return {"dynamic": "strict", "properties": {
        "id": {"type": "integer"},
        "s": stored, "p": stored, "o": stored,
        "body": {"type": "text", "analyzer": "gear_english", "similarity": "gear_bm25"},
        "head": {"type": "keyword"},
        "tail": {"type": "keyword"},
        "passage_id": {"type": "keyword"},
        "pid": {"type": "integer"},
        "vec": _vector(dims, kind),
    }}


META_MAPPING = {"dynamic": False, "properties": {"format": {"type": "integer"}}}


def index_settings(shards: int = 1, replicas: int = 0) -> dict[str, Any]:
    # one shard by default: BM25 statistics are per shard, so one shard scores exactly like the embedded index
    return {"number_of_shards": shards, "number_of_replicas": replicas, "refresh_interval": "-1",
            "analysis": ANALYSIS, "similarity": SIMILARITY}


def passage_key(title: str, text: str) -> str:
    return hashlib.sha1(f"{title}\x00{text}".encode()).hexdigest()


# -- the backend ------------------------------------------------------------------------------------------------------
class _LRU:
    def __init__(self, size: int) -> None:
        self.size, self.data, self.lock = size, OrderedDict(), threading.Lock()

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
            raise IndexError_(f"{what}: ids {missing[:5]} not in Elasticsearch index {index} (of {len(ids)} asked); "
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

    def triple_vectors(self, ids: Sequence[int]) -> np.ndarray:
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
                raise IndexError_(f"Elasticsearch index {err.get('index', '?')} not found while {what}; run "
                                  "`gear migrate INDEX_DIR --to elasticsearch`")
            raise IndexError_(f"Elasticsearch refused {what}: {resp.get('status', '')} {reason[:300]}")

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

    def _search(self, index: str, size: int, queries: Sequence[str], k: int, method: Method,
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

    def search_passages(self, queries: Sequence[str], k: int, method: Method,
                        query_vectors: np.ndarray | None = None) -> list[list[Scored]]:
        return self._search(self.names.passages, self._n_passages, queries, k, method, query_vectors,
                            "searching passages")

    def search_triples(self, queries: Sequence[str], k: int, method: Method,
                       query_vectors: np.ndarray | None = None) -> list[list[Scored]]:
        return self._search(self.names.triples, self._n_triples, queries, k, method, query_vectors,
                            "searching triples")


# -- opening ----------------------------------------------------------------------------------------------------------
def _names_for(directory: Path, manifest: Manifest, settings: Settings) -> EsNames:
    recorded = manifest.elasticsearch or {}
    if recorded.get("prefix") and recorded.get("name"):
        return EsNames(recorded["prefix"], recorded["name"])
    return EsNames(check_prefix(settings.es_prefix), slug(Path(directory).resolve().name))


def read_meta(client: Elasticsearch, names: EsNames, url: str) -> dict[str, Any]:
    from elasticsearch import NotFoundError

    with es_errors(url, "reading the index metadata"):
        try:
            doc = client.get(index=names.meta, id="meta")
        except NotFoundError:
            raise IndexError_(f"no GeAR index {names.base} at {safe_url(url)} (metadata {names.meta} missing); run "
                              "`gear migrate INDEX_DIR --to elasticsearch` (or check GEAR_ES_PREFIX)") from None
    return dict(doc["_source"])


def open_elastic_backend(directory: Path, manifest: Manifest, settings: Settings, encoder: Encoder) -> ElasticBackend:
    """Open the cluster copy of the index in `directory` (written by `gear migrate`), checking that it matches."""
    url = settings.es_url or (manifest.elasticsearch or {}).get("url")
    if not url:
        raise IndexError_("GEAR_BACKEND=elasticsearch needs GEAR_ES_URL (e.g. http://127.0.0.1:9200), and the index "
                          "copied there with `gear migrate INDEX_DIR --to elasticsearch`")
    names = _names_for(directory, manifest, settings)
    client = connect(url, settings, request_timeout=settings.es_timeout)
    check_cluster(client, url)
    meta = read_meta(client, names, url)
    if meta.get("format") != ES_FORMAT:
        raise IndexError_(f"Elasticsearch index {names.base} has layout version {meta.get('format')}, this gear "
                          f"expects {ES_FORMAT}; re-run `gear migrate {directory} --to elasticsearch`")
    if meta.get("embedder") != manifest.embedder or int(meta.get("dims", -1)) != manifest.dims:
        raise IndexError_(f"Elasticsearch index {names.base} holds {meta.get('embedder')} vectors "
                          f"({meta.get('dims')} dims) but {directory} uses {manifest.embedder} ({manifest.dims}); "
                          f"re-run `gear migrate {directory} --to elasticsearch`")
    if encoder.name != manifest.embedder:
        raise IndexError_(f"{directory}: index was built with {manifest.embedder}, but the configured embedder is "
                          f"{encoder.name}; set GEAR_EMBEDDER={manifest.embedder}")
    if (int(meta.get("n_passages", -1)), int(meta.get("n_triples", -1))) != (manifest.n_passages, manifest.n_triples):
        raise IndexError_(f"Elasticsearch index {names.base} has {meta.get('n_passages')} passages / "
                          f"{meta.get('n_triples')} triples but {directory} has {manifest.n_passages} / "
                          f"{manifest.n_triples}; it is out of date — re-run `gear migrate {directory} --to "
                          "elasticsearch`")
    return ElasticBackend(client, names, url=url, embedder=manifest.embedder, encode=encoder.encode_cached,
                          n_passages=manifest.n_passages, n_triples=manifest.n_triples, dims=manifest.dims,
                          rrf_k=settings.rrf_k, num_candidates=settings.es_num_candidates,
                          neighbour_cap=settings.es_neighbour_cap,
                          rescore=settings.es_rescore,
                          oversample=settings.es_oversample)


# -- building ---------------------------------------------------------------------------------------------------------
def _passage_actions(index: str, backend: MemoryBackend) -> Iterator[dict[str, Any]]:
    vecs = backend.passage_table.vectors
    for i, (title, text) in enumerate(zip(backend.titles, backend.texts, strict=True)):
        yield {"_index": index, "_id": str(i), "_source": {
            "id": i, "title": title, "title_key": title, "text": text, "body": passage_text(title, text),
            "key": passage_key(title, text), "vec": np.asarray(vecs[i], dtype=np.float32).tolist()}}


def _triple_actions(index: str, backend: MemoryBackend) -> Iterator[dict[str, Any]]:
    vecs = backend.triple_table.vectors
    head, tail, ents = backend.adjacency.head, backend.adjacency.tail, backend.entities
    for i, (s, p, o) in enumerate(backend.spo):
        pid = int(backend.triple_passage[i])
        yield {"_index": index, "_id": str(i), "_source": {
            "id": i, "s": s, "p": p, "o": o, "body": triple_text(s, p, o),
            "head": ents[int(head[i])], "tail": ents[int(tail[i])],  # = normalise_entity(s), normalise_entity(o)
            "passage_id": str(pid), "pid": pid, "vec": np.asarray(vecs[i], dtype=np.float32).tolist()}}


def bulk_load(client: Elasticsearch, actions: Iterator[dict[str, Any]], total: int, stage: str, url: str,
              progress: Progress | None, chunk_size: int = 500) -> int:
    """Stream documents in chunks; 429 (too many requests) is retried with exponential backoff by the helper."""
    from elasticsearch import helpers

    done = 0
    if progress:
        progress(stage, 0, total)
    with es_errors(url, f"bulk indexing {stage}"):
        try:
            for ok, item in helpers.streaming_bulk(client, actions, chunk_size=chunk_size, max_retries=6,
                                                   initial_backoff=1, max_backoff=60, raise_on_error=False,
                                                   raise_on_exception=True):
                if not ok:
                    op = next(iter(item.values()))
                    err = op.get("error", {})
                    reason = f"{err.get('type', '')}: {err.get('reason', '')}" if isinstance(err, dict) else err
                    raise IndexError_(f"Elasticsearch rejected document {op.get('_id')} of {stage}: "
                                      f"{str(reason)[:300]}")
                done += 1
                if progress and (done % chunk_size == 0 or done == total):
                    progress(stage, done, total)
        except helpers.BulkIndexError as exc:  # only raised with raise_on_error; kept for safety
            raise IndexError_(f"Elasticsearch rejected {len(exc.errors)} documents of {stage}") from None
    if progress:
        progress(stage, done, total)
    return done


def load_into_elastic(client: Elasticsearch, backend: MemoryBackend, names: EsNames, *, url: str, embedder: str,
                      dims: int, n_entities: int, index_type: str = "int8_hnsw", shards: int = 1, replicas: int = 0,
                      progress: Progress | None = None, keep_old: bool = False) -> dict[str, Any]:
    """Build new concrete indices, fill them, verify the counts, then move the aliases in one atomic call."""
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime()) + f"-{uuid.uuid4().hex[:6]}"
    concrete = {"passages": f"{names.passages}-{stamp}", "triples": f"{names.triples}-{stamp}",
                "meta": f"{names.meta}-{stamp}"}
    created: list[str] = []
    ok = False
    try:
        with es_errors(url, "creating indices"):
            for alias in names.aliases().values():  # an alias name taken by a real index cannot be switched
                if client.indices.exists(index=alias) and not client.indices.exists_alias(name=alias):
                    raise IndexError_(f"{alias} exists at {safe_url(url)} as an index, not an alias; delete it or "
                                      "choose another --prefix")
            client.indices.create(index=concrete["passages"], settings=index_settings(shards, replicas),
                                  mappings=passage_mapping(dims, index_type))
            created.append(concrete["passages"])
            client.indices.create(index=concrete["triples"], settings=index_settings(shards, replicas),
                                  mappings=triple_mapping(dims, index_type))
            created.append(concrete["triples"])
            client.indices.create(index=concrete["meta"], settings={"number_of_shards": 1,
                                                                    "number_of_replicas": replicas},
                                  mappings=META_MAPPING)
            created.append(concrete["meta"])
        n_p = bulk_load(client, _passage_actions(concrete["passages"], backend), backend.n_passages, "passages", url,
                        progress)
        n_t = bulk_load(client, _triple_actions(concrete["triples"], backend), backend.n_triples, "triples", url,
                        progress)
        meta = {"format": ES_FORMAT, "embedder": embedder, "dims": dims, "n_passages": n_p, "n_triples": n_t,
                "n_entities": n_entities, "index_type": index_type, "built": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                         time.gmtime()),
                "indices": concrete}
        with es_errors(url, "finishing the indices"):
            client.index(index=concrete["meta"], id="meta", document=meta)
            for idx in created:
                client.indices.put_settings(index=idx, settings={"index": {"refresh_interval": None}})
                client.indices.refresh(index=idx)
            counts = (client.count(index=concrete["passages"])["count"],
                      client.count(index=concrete["triples"])["count"])
            if counts != (backend.n_passages, backend.n_triples):
                raise IndexError_(f"Elasticsearch holds {counts[0]} passages / {counts[1]} triples after bulk "
                                  f"indexing, expected {backend.n_passages} / {backend.n_triples}; the previous "
                                  "index (if any) is untouched — retry `gear migrate`")
            old: dict[str, list[str]] = {}
            for alias in names.aliases().values():
                old[alias] = list(client.indices.get_alias(name=alias).keys()) \
                    if client.indices.exists_alias(name=alias) else []
            actions: list[dict[str, Any]] = []
            for part, alias in names.aliases().items():
                actions += [{"remove": {"index": i, "alias": alias}} for i in old[alias]]
                actions.append({"add": {"index": concrete[part], "alias": alias}})
            client.indices.update_aliases(actions=actions)
        ok = True
        if not keep_old:
            stale = [i for idxs in old.values() for i in idxs if i not in concrete.values()]
            if stale:
                with es_errors(url, "deleting the previous indices"):
                    client.options(ignore_status=404).indices.delete(index=",".join(stale))
        return meta
    finally:
        if not ok and created:  # leave nothing half-built behind; the aliases never moved
            with contextlib.suppress(Exception):  # best effort; the original error is what matters
                client.options(ignore_status=404, request_timeout=10).indices.delete(index=",".join(created))


def _write_manifest_atomically(directory: Path, manifest: Manifest) -> None:
    from gear.index import MANIFEST

    path = directory / MANIFEST
    tmp = directory / f".{MANIFEST}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(asdict(manifest), indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def migrate_to_elastic(directory: Path, settings: Settings, progress: Progress | None = None, *,
                       name: str | None = None, index_type: str | None = None) -> dict[str, Any]:
    """Copy the embedded index in `directory` into Elasticsearch (stored vectors, no re-encoding) and record the
    cluster's index names in its manifest; returns that record."""
    from gear.index import Manifest
    from gear.store.memory import MemoryBackend

    directory = Path(directory)
    manifest = Manifest.read(directory)
    for fname, meta in manifest.files.items():
        path = directory / fname
        if not path.exists() or path.stat().st_size != meta["bytes"]:
            raise IndexError_(f"{directory}: file {fname} is missing or truncated; rebuild the index before migrating")
    if not settings.es_url:
        raise IndexError_("migrating needs the cluster's URL: set GEAR_ES_URL or pass --es-url")

    def no_encoding(_texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("migrate uses the stored vectors; nothing is encoded")

    backend = MemoryBackend.load(directory, embedder=manifest.embedder, encode=no_encoding)
    if backend.n_passages != manifest.n_passages or backend.n_triples != manifest.n_triples:
        raise IndexError_(f"{directory}: manifest counts do not match the stored data; rebuild the index")
    dims = int(backend.passage_table.vectors.shape[1]) if backend.n_passages else manifest.dims
    if dims != manifest.dims:
        raise IndexError_(f"{directory}: stored vectors have {dims} dims, manifest says {manifest.dims}; rebuild")
    names = EsNames(check_prefix(settings.es_prefix), slug(name or directory.resolve().name))
    kind = index_type or settings.es_index_type
    index_options(kind)
    client = connect(settings.es_url, settings, request_timeout=120.0)
    check_cluster(client, settings.es_url)
    meta = load_into_elastic(client, backend, names, url=settings.es_url, embedder=manifest.embedder, dims=dims,
                             n_entities=manifest.n_entities, index_type=kind, progress=progress)
    record = {"url": safe_url(settings.es_url), "prefix": names.prefix, "name": names.name,
              "aliases": names.aliases(), "indices": meta["indices"], "format": ES_FORMAT, "index_type": kind,
              "migrated": meta["built"], "n_passages": meta["n_passages"], "n_triples": meta["n_triples"]}
    manifest.elasticsearch = record
    _write_manifest_atomically(directory, manifest)
    return record


def delete_from_elastic(client: Elasticsearch, names: EsNames, url: str) -> None:
    """Remove a GeAR index (its aliases and the concrete indices behind them) from a cluster."""
    with es_errors(url, "deleting an index"):
        targets: list[str] = []
        for alias in names.aliases().values():
            if client.indices.exists_alias(name=alias):
                targets += list(client.indices.get_alias(name=alias).keys())
        if targets:
            client.options(ignore_status=404).indices.delete(index=",".join(dict.fromkeys(targets)))
