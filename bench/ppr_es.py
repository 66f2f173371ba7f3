"""PPR on the Elasticsearch backend against the embedded one, on a real index and QA set: the same Recall@k and the
same ranking for every question, and what it costs (the migrate, the one-off scroll of the graph tables, reading
them back from the index's `ppr/` cache, each question).

    python bench/ppr_es.py [data/indexes/musique] [--qa assets/musique/musique_dev50.json] [--es-url URL]

Without --es-url the noida-db emulator (`pip install noida-db==0.2.3`) is started on a free 127.0.0.1 port and
stopped at the end. The index directory is copied to a temporary directory first (migrate records the cluster in the
manifest, PPR writes its cache), so the given index is left as it was; the copy keeps the index's PPR cache of entity
vectors and synonym edges (else the embedded run encodes the entity names once, and the Elasticsearch run reads them
from the cache: the same key, the same names) but never a copy of the Elasticsearch tables, which are scrolled cold.
Output: one measurement per line, `name value unit`, script-readable; the exit status is 1 when anything differs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.questions import load_qa
from gear.eval.report import evaluate
from gear.index.migrate import migrate_to_elastic

KS = (5, 10, 15)


@contextlib.contextmanager
def noida(work: Path) -> Iterator[str]:
    """The noida-db emulator on a free port, in its own process group (stopped by that group only)."""
    from importlib.resources import files

    binary = Path(str(files("noida_db").joinpath("noida-db")))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (work / "noida.log").open("wb")
    proc = subprocess.Popen([str(binary), "start", "--only", "elasticsearch", "--host", "127.0.0.1",
                             "--elasticsearch-port", str(port), "--data-dir", str(work / "noida")],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"noida-db did not start: {(work / 'noida.log').read_text(errors='replace')[-300:]}")
            time.sleep(0.1)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(10)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("index", nargs="?", default="data/indexes/musique")
    parser.add_argument("--qa", default="assets/musique/musique_dev50.json")
    parser.add_argument("--es-url", help="a cluster to use instead of starting the emulator")
    args = parser.parse_args()
    questions, _ = load_qa(Path(args.qa))
    with tempfile.TemporaryDirectory(prefix="ppr_es-") as tmp, contextlib.ExitStack() as stack:
        work = Path(tmp)
        url = args.es_url or stack.enter_context(noida(work))
        directory = work / Path(args.index).resolve().name
        shutil.copytree(args.index, directory, ignore=shutil.ignore_patterns("es-*"))  # the tables start cold
        memory_settings = Settings(backend="memory", retriever="dense", method="ppr")
        es_settings = memory_settings.with_(backend="elasticsearch", es_url=url, es_prefix="gearbench")
        if not args.es_url:  # the emulator needs no credentials: none from the environment
            es_settings = es_settings.with_(es_api_key=None, es_username=None, es_password=None, es_ca_certs=None)

        t = time.perf_counter()
        migrate_to_elastic(directory, es_settings, None)
        print(f"migrate {time.perf_counter() - t:.1f} s", flush=True)

        memory = Engine.open(directory, memory_settings)
        memory.encoder.encode_cached([q.question for q in questions])  # queries encoded up front: not timed
        t = time.perf_counter()
        built = memory.ppr_index(memory_settings)
        print(f"memory_graph_build {time.perf_counter() - t:.2f} s cached={built.cost.cached}", flush=True)

        engines = {"memory": memory}
        for run in ("cold", "warm"):  # cold: the tables scrolled out of the cluster; warm: read back from ppr/
            engine = Engine.open(directory, es_settings, encoder=memory.encoder)
            t = time.perf_counter()
            index = engine.ppr_index(es_settings)
            print(f"es_graph_build_{run} {time.perf_counter() - t:.2f} s "
                  + " ".join(f"{part.replace(' ', '_')}={s:.2f}s" for part, s in index.cost.seconds.items())
                  + f" cached={index.cost.cached}", flush=True)
            engines["es"] = engine
        mib = {part: round(b / 2**20, 1) for part, b in index.cost.bytes.items()}
        print(f"es_graph_memory {sum(index.cost.bytes.values()) / 2**20:.1f} MiB {mib}")

        reports, rankings = {}, {}
        for name, engine in engines.items():
            settings = memory_settings if name == "memory" else es_settings
            t = time.perf_counter()
            reports[name] = evaluate(engine, questions, settings, ks=KS, protocol="paper").to_dict()  # per cut-off
            seconds = time.perf_counter() - t
            runs = len(questions) * len(KS)
            print(f"{name}_eval {seconds:.1f} s ({1000 * seconds / runs:.0f} ms per run, {runs} runs) recall "
                  + " / ".join(f"{reports[name]['recall'][str(k)]:.1f}" for k in KS), flush=True)
            rankings[name] = [engine.retrieve(q.question, k=max(KS), settings=settings).ids for q in questions]

        same_recall = reports["memory"]["recall"] == reports["es"]["recall"]
        same = sum(a == b for a, b in zip(rankings["memory"], rankings["es"], strict=True))
        print(f"recall_equal {same_recall} (memory {reports['memory']['recall']}, es {reports['es']['recall']})")
        print(f"top{max(KS)}_identical {same}/{len(questions)} questions")
        sys.exit(0 if same_recall and same == len(questions) else 1)


if __name__ == "__main__":
    main()
