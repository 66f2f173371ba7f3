"""`gear migrate`: copy an embedded index directory into Elasticsearch (the stored vectors, nothing re-encoded) and
record the cluster's index names in the directory's manifest."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gear.config import Settings
from gear.index.manifest import Manifest, require_intact
from gear.store.base import StoreError
from gear.store.elastic.client import check_cluster, connect, safe_url
from gear.store.elastic.layout import ES_FORMAT, EsNames, check_prefix, index_options, slug
from gear.store.elastic.load import load_into_elastic
from gear.store.memory import MemoryBackend
from gear.types import StageProgress


def migrate_to_elastic(directory: Path, settings: Settings, progress: StageProgress | None = None, *,
                       name: str | None = None, index_type: str | None = None) -> dict[str, Any]:
    """Copy the embedded index in `directory` into Elasticsearch (stored vectors, no re-encoding) and record the
    cluster's index names in its manifest; returns that record."""
    directory = Path(directory)
    manifest = Manifest.read(directory)
    require_intact(directory, manifest)
    if not settings.es_url:
        raise StoreError("migrating needs the cluster's URL: set GEAR_ES_URL or pass --es-url")

    def no_encoding(_texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("migrate uses the stored vectors; nothing is encoded")

    backend = MemoryBackend.load(directory, embedder=manifest.embedder, encode=no_encoding)
    if backend.n_passages != manifest.n_passages or backend.n_triples != manifest.n_triples:
        raise StoreError(f"{directory}: manifest counts do not match the stored data; rebuild the index")
    dims = int(backend.passage_table.vectors.shape[1]) if backend.n_passages else manifest.dims
    if dims != manifest.dims:
        raise StoreError(f"{directory}: stored vectors have {dims} dims, manifest says {manifest.dims}; rebuild")
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
    manifest.write(directory)
    return record
