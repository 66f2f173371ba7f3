"""What the embedded extraction is worth, and what `gear index` costs: the 200 candidate paragraphs of the first 10
MuSiQue dev50 questions indexed by `gear index` (the command a user runs: extraction with the embedded model, then
encoding) once per extraction answer shape (gear/extract/outputs.py), timed, beside the same corpus with HippoRAG's
GPT-3.5 OpenIE triples; then hybrid, NaiveGE and GeAR R@5/10/15 on those 10 questions over each index.

This is the number that tells a user what an index of their own text is worth and how long it takes (docs/setup.md,
beside the extraction speed). Each shape's `gear index` runs from scratch in a fresh work folder (its journal and
index), one after another in this run, so their minutes compare; `--reuse` keeps what an earlier run built. Every index
uses the same passages, embedder (MiniLM) and settings; only the triples differ. GeAR runs live on the embedded model
(paper prompts, no recorded answers) on every index. Hybrid does not use triples, so its rows must agree (a check).

    .venv/bin/python bench/llm_extraction_value.py [--questions 10] [--outputs joint:0,triples]
           [--work-dir /tmp/gear-extraction-200] [--methods hybrid,naive,gear] [--reuse] [--json OUT]

A method is a registered method name with an optional "@retriever" (hybrid by default): naive@bm25, sync@dense, ….
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MUSIQUE = ROOT / "assets" / "musique"
DEV50 = MUSIQUE / "musique_dev50.json"
GPT_OPENIE = MUSIQUE / "openie_musique_gpt-3.5-turbo-1106_1890.json"
GEAR_CLI = "import sys; from gear.cli import app; app(sys.argv[1:])"


def gear_index(corpus: Path, out: Path, spec: str, log: Path) -> float:
    """`gear index CORPUS --out OUT` with the embedded model and this answer shape ("name[:stop_repeats]", as in
    bench/extraction_outputs.py: joint:0 is the paper's joint extraction without the loop guard); its wall seconds."""
    output, _, stop = spec.partition(":")
    env = {**os.environ, "GEAR_LLM": "local", "GEAR_EXTRACTION_OUTPUT": output, "COLUMNS": "200",
           "PYTHONPATH": str(ROOT), **({"GEAR_EXTRACTION_STOP_REPEATS": stop} if stop else {})}
    began = time.perf_counter()
    with log.open("w") as handle:
        done = subprocess.run([sys.executable, "-c", GEAR_CLI, "index", str(corpus), "--out", str(out)], env=env,
                              stdout=handle, stderr=subprocess.STDOUT, cwd=ROOT)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"gear index ({output}) failed: see {log}")
    return seconds


def extraction_stats(index: Path) -> dict[str, Any]:
    """Per-passage seconds and token counts from the index's extraction journal (INDEX.extract/)."""
    from gear.extract.journal import Journal

    records = list(Journal(index.parent / f"{index.name}.extract").records.values())
    seconds = [r.seconds for r in records]
    return {"passages": len(records), "seconds_mean": statistics.mean(seconds),
            "seconds_median": statistics.median(seconds),
            "completion_tokens_mean": statistics.mean(r.completion_tokens for r in records),
            "triples": sum(len(r.triples) for r in records)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--outputs", default="joint:0,triples",
                        help="extraction answer shapes, name[:stop_repeats]; joint:0 is joint extraction "
                             "without the loop guard")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/gear-extraction-200"))
    parser.add_argument("--methods", default="hybrid,naive,gear")
    parser.add_argument("--reuse", action="store_true", help="keep indexes an earlier run built")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("GEAR_CACHE_DIR", tempfile.mkdtemp(prefix="gear-bench-extraction-"))

    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.corpus import Document, LoadReport
    from gear.data.openie import align_openie, load_openie
    from gear.data.questions import load_qa
    from gear.embed import Encoder
    from gear.eval.report import evaluate
    from gear.index import build_index

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    raw = json.loads(DEV50.read_text(encoding="utf-8"))[: args.questions]
    passages = list(dict.fromkeys((p["title"], p["paragraph_text"]) for q in raw for p in q["paragraphs"]))
    print(f"{len(passages)} passages of the first {len(raw)} dev50 questions")
    work = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    qa_path = work / "qa.json"
    qa_path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    corpus = work / "corpus.json"
    corpus.write_text(json.dumps([{"title": t, "text": x} for t, x in passages], ensure_ascii=False), encoding="utf-8")
    questions = load_qa(qa_path)[0]

    indexes: dict[str, Path] = {}
    built: dict[str, dict[str, Any]] = {}
    for output in args.outputs.split(","):
        out = work / f"index-{output.replace(':', '-')}"
        if not (args.reuse and (out / "manifest.json").is_file()):
            import shutil

            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(out.parent / f"{out.name}.extract", ignore_errors=True)
            load = os.getloadavg()[0]
            seconds = gear_index(corpus, out, output, work / f"gear-{out.name}.log")
            built[output] = {"gear_index_minutes": seconds / 60, "load_before": load,
                             "load_after": os.getloadavg()[0], **extraction_stats(out)}
            b = built[output]
            print(f"gear index ({output}): {b['gear_index_minutes']:.1f} min, {b['seconds_mean']:.1f} s per passage "
                  f"(median {b['seconds_median']:.1f}), {b['completion_tokens_mean']:.0f} tokens written per passage, "
                  f"{b['triples']} triples; load {load:.1f} → {b['load_after']:.1f}", flush=True)
        indexes[output] = out

    docs = [Document(title, text) for title, text in passages]
    gpt = align_openie(docs, load_openie(GPT_OPENIE)[0], LoadReport("bench"))
    encoder = Encoder("all-MiniLM-L6-v2")
    gpt_index = work / "index-gpt-3.5"
    if not (gpt_index / "manifest.json").is_file():
        build_index(docs, gpt, gpt_index, encoder)
    indexes["gpt-3.5"] = gpt_index

    settings = Settings(_env_file=None).with_(llm="local", prompts="paper")
    rows: dict[str, dict[str, Any]] = {}
    for method in args.methods.split(","):
        for name, path in indexes.items():
            name, _, retriever = method.partition("@")  # "naive@bm25": NaiveGE over BM25 (default: hybrid)
            s = settings.with_(retriever=retriever or "hybrid",
                               method={"hybrid": "none", "base": "none"}.get(name, name))
            engine = Engine.open(path, s, encoder=encoder)
            began = time.perf_counter()
            result = evaluate(engine, questions, s, protocol="paper").to_dict()  # docs/results.md's rows: Table 1's
            rows[f"{method} / {name}"] = {"recall": result["recall"], "em": result.get("em"),
                                          "f1": result.get("f1"), "seconds": time.perf_counter() - began}
            print(f"  {method} on {name} triples: R@5/10/15 "
                  f"{' / '.join(format(result['recall'][k], '.1f') for k in ('5', '10', '15'))}", flush=True)
    print("\n| method | triples | R@5 | R@10 | R@15 |\n| --- | --- | --- | --- | --- |")
    for label, row in rows.items():
        method, name = label.split(" / ")
        print(f"| {method} | {name} | " + " | ".join(f"{row['recall'][k]:.1f}" for k in ("5", "10", "15")) + " |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"passages": len(passages), "questions": len(questions), "built": built,
                                         "rows": rows, "load_after": os.getloadavg()}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
