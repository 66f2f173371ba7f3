"""Writing an index into a cluster: bulk loading into new concrete indices, the atomic alias switch, deleting.
(Copying an embedded index directory in is gear.index.migrate.)"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from gear.store.base import StoreError, passage_text, triple_text
from gear.store.elastic.client import es_errors, safe_url
from gear.store.elastic.layout import (
    ES_FORMAT,
    META_MAPPING,
    EsNames,
    index_settings,
    passage_key,
    passage_mapping,
    triple_mapping,
)
from gear.types import StageProgress

if TYPE_CHECKING:
    from elasticsearch import Elasticsearch

    from gear.store.memory import MemoryBackend



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
              progress: StageProgress | None, chunk_size: int = 500) -> int:
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
                    raise StoreError(f"Elasticsearch rejected document {op.get('_id')} of {stage}: "
                                      f"{str(reason)[:300]}")
                done += 1
                if progress and (done % chunk_size == 0 or done == total):
                    progress(stage, done, total)
        except helpers.BulkIndexError as exc:  # only raised with raise_on_error; kept for safety
            raise StoreError(f"Elasticsearch rejected {len(exc.errors)} documents of {stage}") from None
    if progress:
        progress(stage, done, total)
    return done


def load_into_elastic(client: Elasticsearch, backend: MemoryBackend, names: EsNames, *, url: str, embedder: str,
                      dims: int, n_entities: int, index_type: str = "int8_hnsw", shards: int = 1, replicas: int = 0,
                      progress: StageProgress | None = None, keep_old: bool = False) -> dict[str, Any]:
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
                    raise StoreError(f"{alias} exists at {safe_url(url)} as an index, not an alias; delete it or "
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
                raise StoreError(f"Elasticsearch holds {counts[0]} passages / {counts[1]} triples after bulk "
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


def delete_from_elastic(client: Elasticsearch, names: EsNames, url: str) -> None:
    """Remove a GeAR index (its aliases and the concrete indices behind them) from a cluster."""
    with es_errors(url, "deleting an index"):
        targets: list[str] = []
        for alias in names.aliases().values():
            if client.indices.exists_alias(name=alias):
                targets += list(client.indices.get_alias(name=alias).keys())
        if targets:
            client.options(ignore_status=404).indices.delete(index=",".join(dict.fromkeys(targets)))
