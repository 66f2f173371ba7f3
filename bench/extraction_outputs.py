"""What each shape of the extraction answer costs and buys: the same passages extracted in each shape of
gear.extract.outputs, one after another in one run, with the configured LLM (GEAR_LLM, the embedded model by default).

Each shape is "name[:stop_repeats][+speculative]": the answer's shape, after how many repeated triples in a row the
model is stopped (gear/extract/repeats.py; 0: never, as before the guard existed), and optionally llama-server's
self-speculative decoding (SPECULATIVE below; the shape then runs on a server of its own). For each: seconds per
passage (mean, median), tokens written, triples, repeated triples written (dropped when read), how many triples are the
same as the first shape's (after normalise_entity), and agreement with HippoRAG's gpt-3.5-turbo-1106 triples as in
bench/extraction_compare.py. For a joint shape first it also splits the written tokens into the entity list and the
triple list (the server's own tokenizer, /tokenize), which is where the lean shapes' saving comes from.

Each shape has its own journal under --work-dir (re-running is free; delete it to measure again). The passages: the
gold passages of the first dev50 questions, in question order (bench/extraction_compare.py's set).

    .venv/bin/python bench/extraction_outputs.py [--n 20] [--outputs joint:0,triples] [--work-dir DIR]
                                                 [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.extraction_compare import agreement, make_llm_from_env, select_passages, totals
from gear.config import STOP_REPEATS
from gear.extract.runner import ExtractionConfig, extract_passages
from gear.store.graph import normalise_entity
from gear.types import SPO


def _norm(t: SPO) -> SPO:
    return (normalise_entity(t[0]), normalise_entity(t[1]), normalise_entity(t[2]))


def token_split(raw_answers: list[str]) -> dict[str, float]:
    """Mean tokens per answer of the joint shape's entity list and triple list, counted by the embedded model's
    server (/tokenize)."""
    from gear.llm.embedded import shared_embedded_llm

    root = shared_embedded_llm().server.ensure().root

    def count(text: str) -> int:
        request = urllib.request.Request(f"{root}/tokenize", data=json.dumps({"content": text}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return len(json.load(response)["tokens"])

    entities, triples = [], []
    for raw in raw_answers:
        cut = raw.find('"triples"')
        if cut < 0:
            continue
        entities.append(count(raw[:cut]))
        triples.append(count(raw[cut:]))
    return {"entity_list_tokens": statistics.mean(entities or [0]),
            "triple_list_tokens": statistics.mean(triples or [0])}


# llama-server's self-speculative decoding (drafts looked up in what was read and written, no second model), by name:
# the "+name" suffix of a shape runs it on a server of its own started with these options
SPECULATIVE = {
    "ngram-simple-3": "--spec-type ngram-simple --spec-ngram-simple-size-n 2 --spec-ngram-simple-size-m 3 "
                      "--spec-ngram-simple-min-hits 1",
    "ngram-simple-8": "--spec-type ngram-simple --spec-ngram-simple-size-n 2 --spec-ngram-simple-size-m 8 "
                      "--spec-ngram-simple-min-hits 1",
    "ngram-mod": "--spec-type ngram-mod",
    "ngram-map-k": "--spec-type ngram-map-k",
}


def llm_for(spec: str, default: Any) -> Any:
    """The configured LLM, or for a "+name" shape the embedded model on a server started with SPECULATIVE[name]."""
    _, plus, variant = spec.partition("+")
    if not plus:
        return default
    from gear.llm.embedded import EmbeddedLLM

    os.environ["GEAR_LLAMA_SERVER_ARGS"] = SPECULATIVE[variant]
    llm = EmbeddedLLM()
    llm.ensure_loaded()  # reads the options now
    del os.environ["GEAR_LLAMA_SERVER_ARGS"]
    return llm


def run_shape(spec: str, docs: list[dict[str, Any]], llm: Any, work_dir: Path) -> dict[str, Any]:
    """One shape, "name[:stop_repeats][+speculative]": 0 turns the loop guard off (as before it existed); a
    SPECULATIVE name runs it with that speculative decoding."""
    llm = llm_for(spec, llm)
    name, _, stop = spec.partition("+")[0].partition(":")
    config = ExtractionConfig(output=name, stop_repeats=int(stop) if stop else STOP_REPEATS)  # type: ignore[arg-type]
    began = time.perf_counter()
    load_before = os.getloadavg()[0]
    journal = work_dir / spec.replace(":", "-").replace("+", "_")
    result = extract_passages([(d["title"], d["text"]) for d in docs], llm, journal, config,
                              progress=lambda r, done, total: print(f"  {name}: {done}/{total} passages, "
                                                                     f"{r.n_triples} triples", file=sys.stderr,
                                                                     flush=True))
    records = [r for r in result.records if r is not None]
    if len(records) != len(docs):
        raise SystemExit(f"{name}: {result.failed} passages failed: {result.errors[:3]}")
    seconds = [r.seconds for r in records]
    rows = []
    for doc, record in zip(docs, records, strict=True):
        gpt = [tuple(t) for t in doc["extracted_triples"] if isinstance(t, list) and len(t) == 3
               and all(isinstance(x, str) and x.strip() for x in t)]
        rows.append(agreement(list(record.triples), gpt))  # type: ignore[arg-type]
    return {
        "output": spec, "stop_repeats": config.stop_repeats, "passages": len(records), "calls_this_run": result.calls,
        "wall_seconds_this_run": round(time.perf_counter() - began, 1),
        "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
        "seconds_mean": statistics.mean(seconds), "seconds_median": statistics.median(seconds),
        "completion_tokens_mean": statistics.mean(r.completion_tokens for r in records),
        "prompt_tokens_mean": statistics.mean(r.prompt_tokens for r in records),
        "triples": sum(len(r.triples) for r in records),
        "repeats_written": sum(r.dropped.get("duplicates", 0) for r in records),
        "agreement": totals(rows),
        "records": records,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--outputs", default="joint:0,triples",
                        help="shapes, each name[:stop_repeats] (the first is the reference the others are compared "
                             "with; joint:0 is the extraction as it was before the shapes and the loop guard)")
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/gear-extraction-outputs"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    docs = select_passages(args.n)
    llm = make_llm_from_env()
    print(f"{len(docs)} passages, model {llm.model}; load average {os.getloadavg()[0]:.2f}")
    shapes = {name: run_shape(name, docs, llm, args.work_dir) for name in args.outputs.split(",")}
    reference = next(iter(shapes.values()))
    print("\n| output | s/passage mean | median | tokens written | triples | repeats written | same as the first | "
          "entities agree w/ GPT-3.5 (P / R) | (s, o) pairs agree (P / R) | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, row in shapes.items():
        same = "—"
        if row is not reference:
            ours = {_norm(t) for r in row["records"] for t in r.triples}
            joint = {_norm(t) for r in reference["records"] for t in r.triples}
            same = f"{len(ours & joint)} of {len(ours)} ({len(joint)} in {reference['output']})"
            row["same_as_reference"] = len(ours & joint)
        a = row["agreement"]
        print(f"| {name} | {row['seconds_mean']:.1f} | {row['seconds_median']:.1f} | "
              f"{row['completion_tokens_mean']:.0f} | {row['triples']} | {row['repeats_written']} | {same} | "
              f"{a['same_entities']} "
              f"({a['entity_precision']:.2f} / {a['entity_recall']:.2f}) | {a['same_pairs']} "
              f"({a['pair_precision']:.2f} / {a['pair_recall']:.2f}) | {row['load_before']:.1f}→"
              f"{row['load_after']:.1f} |")
    if reference["output"].startswith("joint"):
        split = token_split([r.raw for r in reference["records"]])
        if split["entity_list_tokens"] or split["triple_list_tokens"]:
            print(f"\njoint shape, tokens written per passage: entity list {split['entity_list_tokens']:.0f}, "
                  f"triple list {split['triple_list_tokens']:.0f}")
            reference["token_split"] = split
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        out = {name: {k: v for k, v in row.items() if k != "records"} | {
            "per_passage": [{"title": r.title, "seconds": r.seconds, "completion_tokens": r.completion_tokens,
                             "triples": [list(t) for t in r.triples], "raw": r.raw} for r in row["records"]]}
            for name, row in shapes.items()}
        args.json.write_text(json.dumps(out, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
