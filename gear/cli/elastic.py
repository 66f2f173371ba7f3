"""`gear migrate`: copy an embedded index into Elasticsearch (see gear/store/elastic/)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from gear.cli.app import app, console, friendly_errors, out, progress_bar, settings_from


@app.command()
def migrate(
    index_dir: Annotated[Path, typer.Argument(help="embedded index directory (built by `gear index`)")],
    to: Annotated[str, typer.Option("--to", help="target backend (only: elasticsearch)")] = "elasticsearch",
    es_url: Annotated[str | None, typer.Option("--es-url", help="cluster URL (default: GEAR_ES_URL)")] = None,
    prefix: Annotated[str | None, typer.Option("--prefix", help="index name prefix (default: GEAR_ES_PREFIX)")] = None,
    name: Annotated[str | None, typer.Option("--name", help="index name (default: the directory's name)")] = None,
    index_type: Annotated[str, typer.Option("--index-type", help="dense_vector index type")] = "int8_hnsw",
) -> None:
    """Copy an index into Elasticsearch (stored vectors, no re-encoding); then run any command on the same
    INDEX_DIR with GEAR_BACKEND=elasticsearch."""
    with friendly_errors():
        from gear.index.migrate import migrate_to_elastic
        from gear.store.base import StoreError

        if to != "elasticsearch":
            raise StoreError(f"--to {to!r}: the only target is elasticsearch")
        settings = settings_from(es_url=es_url, es_prefix=prefix)
        started = time.perf_counter()
        with progress_bar() as update:
            record = migrate_to_elastic(index_dir, settings, update, name=name, index_type=index_type)
        console.print(f"copied {record['n_passages']} passages and {record['n_triples']} triples to {record['url']} "
                      f"in {time.perf_counter() - started:.1f} s", highlight=False)
        out.print(f"aliases: {record['aliases']['passages']}, {record['aliases']['triples']}, "
                  f"{record['aliases']['meta']}", highlight=False)
        out.print(f"use it: GEAR_BACKEND=elasticsearch GEAR_ES_URL={record['url']} gear retrieve {index_dir} "
                  "\"your question\"", highlight=False)
