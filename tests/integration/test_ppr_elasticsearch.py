"""PPR on the Elasticsearch backend equals PPR on the embedded index, on real data: the bundled MuSiQue dev50 index
(MiniLM, GPT-3.5 OpenIE triples) migrated into the noida-db emulator (started by the session fixture), its graph
tables read back by scroll. Same Recall@5/10/15 as the embedded run (docs/peers.md's numbers) and the same top 15
for every question. `bench/ppr_es.py` measures the same comparison with its timings (and runs against a real
cluster with --es-url)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.eval.report import evaluate

pytestmark = [pytest.mark.slow, pytest.mark.es]

PPR = Settings(_env_file=None).with_(backend="memory", retriever="dense", expand="ppr")


def test_ppr_dev50_on_the_emulator_equals_the_embedded_index(musique: Engine, questions, noida_url: str,
                                                              tmp_path: Path) -> None:
    from gear.index.migrate import migrate_to_elastic
    from gear.store.elastic import EsNames, connect, delete_from_elastic

    assert musique.directory is not None
    directory = tmp_path / "musique"
    shutil.copytree(musique.directory, directory)  # with its ppr/ cache, when another test built the entity vectors
    es = PPR.with_(backend="elasticsearch", es_url=noida_url, es_prefix=f"geartest-{uuid.uuid4().hex[:8]}",
                   es_api_key=None, es_username=None, es_password=None, es_ca_certs=None)
    record = migrate_to_elastic(directory, es, None)
    try:
        engines = {"memory": Engine(musique.backend, musique.encoder, PPR, directory=directory),
                   "es": Engine.open(directory, es, encoder=musique.encoder)}
        index = engines["es"].ppr_index(es)
        assert index.tables.source == "scan" and index.graph.counts()["entities"] == 16_243
        reports = {name: evaluate(engine, questions, engine.settings, protocol="paper")  # Table 1's protocol
                   for name, engine in engines.items()}
        recall = {name: {k: round(v, 1) for k, v in report.recall().items()} for name, report in reports.items()}
        assert recall["es"] == recall["memory"] == {"5": 66.7, "10": 75.7, "15": 81.3}
        for q in questions:
            assert engines["es"].retrieve(q.question, k=15).ids == engines["memory"].retrieve(q.question, k=15).ids
    finally:
        delete_from_elastic(connect(noida_url, es), EsNames(record["prefix"], record["name"]), noida_url)
