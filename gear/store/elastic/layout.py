"""What a GeAR index looks like in a cluster: alias names, the BM25 analysis, mappings and settings, the metadata
document."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gear.store.base import StoreError
from gear.store.elastic.client import es_errors, safe_url

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch


ES_FORMAT = 1  # layout version of the indices written here; bump when mappings change

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
        raise StoreError(f"Elasticsearch prefix {prefix!r} is not a valid index name part; use lower-case letters, "
                          "digits, '-' or '_' (GEAR_ES_PREFIX / --prefix)")
    return prefix


# -- mappings ---------------------------------------------------------------------------------------------------------
def index_options(kind: str) -> dict[str, Any]:
    """Explicit dense_vector index_options (from 9.1 the default for ≥ 384 dims would be bbq_hnsw)."""
    allowed = {"hnsw", "int8_hnsw", "int4_hnsw", "bbq_hnsw", "flat", "int8_flat", "int4_flat", "bbq_flat"}
    if kind not in allowed:
        raise StoreError(f"unknown dense_vector index type {kind!r}; choose one of {sorted(allowed)}")
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



def read_meta(client: Elasticsearch, names: EsNames, url: str) -> dict[str, Any]:
    from elasticsearch import NotFoundError

    with es_errors(url, "reading the index metadata"):
        try:
            doc = client.get(index=names.meta, id="meta")
        except NotFoundError:
            raise StoreError(f"no GeAR index {names.base} at {safe_url(url)} (metadata {names.meta} missing); run "
                              "`gear migrate INDEX_DIR --to elasticsearch` (or check GEAR_ES_PREFIX)") from None
    return dict(doc["_source"])
