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
(gear.store.fusion.rrf) over a BM25 and a kNN request sent together in one msearch: Elasticsearch's own RRF needs a
paid licence.

PPR reads the whole graph at once (SearchBackend.graph_tables): two scrolls, entity ids derived from the stored
normalised head/tail, kept memory-mapped beside the index directory, keyed by the concrete indices.

Modules: client (connecting, errors), layout (names, mappings, settings, metadata), backend (ElasticBackend and
opening it), load (bulk loading, alias switch, delete), tables (the graph tables by scroll, and their cache);
gear.index.migrate copies an index directory in. Everything is re-exported here.
"""

from gear.store.elastic.backend import ElasticBackend, open_elastic_backend
from gear.store.elastic.client import check_cluster, connect, es_errors, safe_url
from gear.store.elastic.layout import (
    ANALYSIS,
    ES_FORMAT,
    META_MAPPING,
    SIMILARITY,
    STOPWORDS_EN,
    EsNames,
    check_prefix,
    index_options,
    index_settings,
    passage_key,
    passage_mapping,
    read_meta,
    slug,
    triple_mapping,
)
from gear.store.elastic.load import bulk_load, delete_from_elastic, load_into_elastic

__all__ = [
    "ANALYSIS",
    "ES_FORMAT",
    "META_MAPPING",
    "SIMILARITY",
    "STOPWORDS_EN",
    "ElasticBackend",
    "EsNames",
    "bulk_load",
    "check_cluster",
    "check_prefix",
    "connect",
    "delete_from_elastic",
    "es_errors",
    "index_options",
    "index_settings",
    "load_into_elastic",
    "open_elastic_backend",
    "passage_key",
    "passage_mapping",
    "read_meta",
    "safe_url",
    "slug",
    "triple_mapping",
]
