"""What the embedded extraction is worth: an index of the first 10 MuSiQue dev50 questions' paragraphs (their 200
candidate passages) built from the embedded model's triples, beside the same corpus with HippoRAG's GPT-3.5 OpenIE
triples, on those 10 questions: hybrid, NaiveGE and GeAR R@5/10/15.

This is the number that tells a user what an index of their own text is worth (README, beside the extraction speed).
The extraction is journaled in `--work-dir` (re-running is free; an interrupted run resumes). Both indexes use the
same passages, embedder (MiniLM) and settings; only the triples differ. GeAR runs live on the embedded model (paper
prompts, no recorded answers) on both indexes. Hybrid does not use triples, so its two rows must agree (a check).

    .venv/bin/python bench/llm_extraction_value.py [--questions 10] [--work-dir /tmp/gear-extraction-200]
                                                   [--methods naive,hybrid,gear] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


def _progress(result: Any, done: int, total: int) -> None:
    print(f"  extracted {done}/{total}: {result.n_triples} triples, {result.calls} calls, "
          f"{result.llm_seconds:.0f} s of model time", file=sys.stderr, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/gear-extraction-200"))
    parser.add_argument("--methods", default="hybrid,naive,gear")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("GEAR_CACHE_DIR", tempfile.mkdtemp(prefix="gear-bench-extraction-"))

    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.corpus import Document, LoadReport, align_openie, load_openie, load_qa
    from gear.embed import Encoder
    from gear.eval.report import evaluate
    from gear.extract.runner import ExtractionConfig, extract_passages
    from gear.index import build_index
    from gear.llm import llm_from_settings

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    raw = json.loads(DEV50.read_text(encoding="utf-8"))[: args.questions]
    passages = list(dict.fromkeys((p["title"], p["paragraph_text"]) for q in raw for p in q["paragraphs"]))
    print(f"{len(passages)} passages of the first {len(raw)} dev50 questions")
    work = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    qa_path = work / "qa.json"
    qa_path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    questions = load_qa(qa_path)[0]

    settings = Settings(_env_file=None).with_(llm="local", prompts="paper")
    llm = llm_from_settings(settings)
    started = time.perf_counter()
    extraction = extract_passages(passages, llm, work / "journal", ExtractionConfig(), progress=_progress)
    wall = time.perf_counter() - started
    if extraction.failed:
        raise SystemExit(f"{extraction.failed} passages failed: {extraction.errors[:3]}")
    seconds = [r.seconds for r in extraction.records if r is not None]
    print(f"extraction: {extraction.calls} model calls this run ({extraction.reused} from the journal), "
          f"{statistics.mean(seconds):.1f} s per passage (median {statistics.median(seconds):.1f}), "
          f"{extraction.n_triples / len(passages):.1f} triples per passage, wall {wall:.0f} s this run")

    docs = [Document(title, text) for title, text in passages]
    report = LoadReport("bench")
    gpt = align_openie(docs, load_openie(GPT_OPENIE)[0], report)
    ours = extraction.triples
    encoder = Encoder("all-MiniLM-L6-v2")
    indexes = {}
    for name, triples in (("embedded", ours), ("gpt-3.5", gpt)):
        out = work / f"index-{name}"
        if not (out / "manifest.json").is_file():
            build_index(docs, triples, out, encoder)
        indexes[name] = out
    print(f"triples: embedded {sum(map(len, ours))}, gpt-3.5 {sum(map(len, gpt))} "
          f"({sum(1 for t in gpt if not t)} passages without GPT triples)")

    rows: dict[str, dict[str, Any]] = {}
    for method in args.methods.split(","):
        for name, path in indexes.items():
            s = settings.with_(retriever="hybrid", expand={"hybrid": "none", "naive": "naive", "gear": "gear"}[method])
            engine = Engine.open(path, s, encoder=encoder)
            began = time.perf_counter()
            result = evaluate(engine, questions, s).to_dict()
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
        args.json.write_text(json.dumps({"passages": len(passages), "questions": len(questions),
                                         "seconds_per_passage": seconds, "extraction_wall_seconds": wall,
                                         "triples": {"embedded": sum(map(len, ours)), "gpt-3.5": sum(map(len, gpt))},
                                         "rows": rows, "load_after": os.getloadavg()}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
