"""Compare this project's triple extraction with the GPT-3.5 OpenIE triples HippoRAG published for MuSiQue.

For N passages (by default the gold passages of the first dev50 questions, in question order) it extracts triples
with the configured LLM (GEAR_LLM, local by default) through gear.extract (journaled: re-running is free and an
interrupted run resumes), then reports triples/passage, seconds/passage, tokens, and how many entities and triples
agree with gpt-3.5-turbo-1106's, after gear.store.graph.normalise_entity on every part:

- entities: subjects and objects of the triples (the graph's nodes); agreement = |ours ∩ gpt|, with precision
  (share of ours that GPT also has) and recall (share of GPT's that we also have);
- triples: exact (s, p, o) after normalisation, and (s, o) pairs in either direction with any predicate;
- grounding: the share of triples whose subject and object both share a word with the passage (for ours and GPT's),
  and the same agreement numbers when ungrounded triples are dropped (`require_grounded`), recomputed from the
  journaled raw answers without new LLM calls: does the filter help?

Usage:
  .venv/bin/python bench/extraction_compare.py --n 20 --out bench/results/extraction_compare.json
  .venv/bin/python bench/extraction_compare.py --walkthrough assets/walkthrough   # the walk-through OpenIE file
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gear.extract.runner import (
    ExtractionConfig,
    ExtractionResult,
    extract_passages,
    openie_document,
    parse_extraction,
    write_openie,
)
from gear.store.graph import normalise_entity
from gear.types import SPO

SHARED = Path("/work/shared/data")
GPT_OPENIE = SHARED / "musique" / "openie_musique_gpt-3.5-turbo-1106_1890.json"
DEV50 = SHARED / "musique" / "musique_dev50.json"
WALKTHROUGH = SHARED / "walkthrough"



def _norm(t: SPO) -> SPO:
    return (normalise_entity(t[0]), normalise_entity(t[1]), normalise_entity(t[2]))


def select_passages(n: int) -> list[dict[str, Any]]:
    """Gold passages of the dev50 questions in order (deduplicated), each with its GPT-3.5 OpenIE record."""
    gpt = json.loads(GPT_OPENIE.read_text(encoding="utf-8"))["docs"]
    by_key = {(d["title"], d["text"]): d for d in gpt}
    chosen: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for question in json.loads(DEV50.read_text(encoding="utf-8")):
        for p in question["paragraphs"]:
            key = (p["title"], p["paragraph_text"])
            if p.get("is_supporting") and key in by_key and key not in seen:
                seen.add(key)
                chosen.append(by_key[key])
                if len(chosen) == n:
                    return chosen
    return chosen


def agreement(ours: list[SPO], gpt: list[SPO]) -> dict[str, int]:
    o_t = {_norm(t) for t in ours}
    g_t = {_norm(t) for t in gpt}
    o_e = {e for t in o_t for e in (t[0], t[2])}
    g_e = {e for t in g_t for e in (t[0], t[2])}
    o_so = {(t[0], t[2]) for t in o_t}
    g_so = {(t[0], t[2]) for t in g_t} | {(t[2], t[0]) for t in g_t}
    return {
        "ours_triples": len(o_t), "gpt_triples": len(g_t), "same_triples": len(o_t & g_t),
        "same_pairs": len(o_so & g_so), "ours_entities": len(o_e), "gpt_entities": len(g_e),
        "same_entities": len(o_e & g_e),
    }


def _words(text: str) -> set[str]:
    import re

    return {w.casefold() for w in re.findall(r"\w+", text)}


def grounded_share(triples: list[SPO], title: str, text: str) -> float:
    words = _words(f"{title} {text}")
    if not triples:
        return 1.0
    ok = sum(1 for s, _, o in triples if _words(s) & words and _words(o) & words)
    return ok / len(triples)


def totals(rows: list[dict[str, int]]) -> dict[str, float]:
    total = {k: sum(r[k] for r in rows) for k in rows[0]}
    return {
        **total,
        "entity_precision": total["same_entities"] / max(total["ours_entities"], 1),
        "entity_recall": total["same_entities"] / max(total["gpt_entities"], 1),
        "triple_precision": total["same_triples"] / max(total["ours_triples"], 1),
        "triple_recall": total["same_triples"] / max(total["gpt_triples"], 1),
        "pair_precision": total["same_pairs"] / max(total["ours_triples"], 1),
        "pair_recall": total["same_pairs"] / max(total["gpt_triples"], 1),
    }


def make_llm_from_env() -> Any:
    from gear.config import Settings
    from gear.llm import llm_from_settings

    return llm_from_settings(Settings())


def _progress(result: ExtractionResult, done: int, total: int) -> None:
    print(f"  {done}/{total} passages, {result.n_triples} triples, {result.calls} calls, "
          f"{result.prompt_tokens}+{result.completion_tokens} tokens", file=sys.stderr, flush=True)


def compare(args: argparse.Namespace) -> dict[str, Any]:
    docs = select_passages(args.n)
    llm = make_llm_from_env()
    config = ExtractionConfig()
    started = time.perf_counter()
    result = extract_passages([(d["title"], d["text"]) for d in docs], llm, Path(args.work_dir), config,
                              progress=_progress)
    wall = time.perf_counter() - started
    rows, rows_grounded, per_passage = [], [], []
    for doc, record in zip(docs, result.records, strict=True):
        assert record is not None, f"extraction failed for {doc['title']}: {result.errors}"
        gpt = [tuple(t) for t in doc["extracted_triples"] if isinstance(t, list) and len(t) == 3
               and all(isinstance(x, str) and x.strip() for x in t)]
        ours = list(record.triples)
        filtered, _, _, _ = parse_extraction(record.raw, doc["title"], doc["text"], require_grounded=True)
        rows.append(agreement(ours, gpt))  # type: ignore[arg-type]
        rows_grounded.append(agreement(filtered, gpt))  # type: ignore[arg-type]
        per_passage.append({
            "title": doc["title"], "seconds": record.seconds, "prompt_tokens": record.prompt_tokens,
            "completion_tokens": record.completion_tokens, **rows[-1],
            "ours_grounded_share": round(grounded_share(ours, doc["title"], doc["text"]), 3),
            "gpt_grounded_share": round(grounded_share(gpt, doc["title"], doc["text"]), 3),  # type: ignore[arg-type]
            "ours": [list(t) for t in ours], "gpt": [list(t) for t in gpt],
        })
    seconds = [p["seconds"] for p in per_passage]
    report = {
        "model": llm.model, "llm": type(llm).__name__, "n_passages": len(docs), "config": asdict(config),
        "wall_seconds_this_run": round(wall, 1), "llm_calls_this_run": result.calls,
        "triples_per_passage_ours": statistics.mean(p["ours_triples"] for p in per_passage),
        "triples_per_passage_gpt": statistics.mean(p["gpt_triples"] for p in per_passage),
        "seconds_per_passage_mean": statistics.mean(seconds), "seconds_per_passage_median": statistics.median(seconds),
        "prompt_tokens_per_passage": statistics.mean(p["prompt_tokens"] for p in per_passage),
        "completion_tokens_per_passage": statistics.mean(p["completion_tokens"] for p in per_passage),
        "ours_grounded_share": statistics.mean(p["ours_grounded_share"] for p in per_passage),
        "gpt_grounded_share": statistics.mean(p["gpt_grounded_share"] for p in per_passage),
        "agreement": totals(rows), "agreement_with_grounding_filter": totals(rows_grounded),
        "passages": per_passage,
    }
    return report


def print_report(report: dict[str, Any]) -> None:
    a, g = report["agreement"], report["agreement_with_grounding_filter"]
    print(f"model {report['model']}: {report['n_passages']} MuSiQue passages vs gpt-3.5-turbo-1106 OpenIE")
    print(f"triples/passage: ours {report['triples_per_passage_ours']:.1f}, "
          f"gpt {report['triples_per_passage_gpt']:.1f}")
    print(f"seconds/passage: mean {report['seconds_per_passage_mean']:.1f}, median "
          f"{report['seconds_per_passage_median']:.1f}; tokens/passage {report['prompt_tokens_per_passage']:.0f} "
          f"prompt + {report['completion_tokens_per_passage']:.0f} completion")
    print(f"grounded share (s and o in passage): ours {report['ours_grounded_share']:.2f}, gpt "
          f"{report['gpt_grounded_share']:.2f}")
    print("| | ours | gpt | agree | precision | recall |\n|---|---|---|---|---|---|")
    for label, t in (("entities", a), ("entities, grounded only", g)):
        print(f"| {label} | {t['ours_entities']} | {t['gpt_entities']} | {t['same_entities']} | "
              f"{t['entity_precision']:.2f} | {t['entity_recall']:.2f} |")
    for label, t in (("triples (exact)", a), ("triples (exact), grounded only", g)):
        print(f"| {label} | {t['ours_triples']} | {t['gpt_triples']} | {t['same_triples']} | "
              f"{t['triple_precision']:.2f} | {t['triple_recall']:.2f} |")
    for label, t in (("(s, o) pairs", a), ("(s, o) pairs, grounded only", g)):
        print(f"| {label} | {t['ours_triples']} | {t['gpt_triples']} | {t['same_pairs']} | "
              f"{t['pair_precision']:.2f} | {t['pair_recall']:.2f} |")


def walkthrough(args: argparse.Namespace) -> None:
    """Extract the paper's walk-through corpus and write assets/walkthrough/ (OpenIE file + corpus + QA copies)."""
    out = Path(args.walkthrough)
    corpus = json.loads((WALKTHROUGH / "walkthrough_corpus.json").read_text(encoding="utf-8"))
    llm = make_llm_from_env()
    config = ExtractionConfig()
    result = extract_passages([(d["title"], d["text"]) for d in corpus], llm, Path(args.work_dir), config,
                              progress=_progress)
    if result.failed:
        raise SystemExit(f"{result.failed} passages failed: {result.errors}")
    documents = [openie_document(d["title"], d["text"], ents, triples)
                 for d, ents, triples in zip(corpus, result.entities, result.triples, strict=True)]
    info = result.info(llm.model, config)
    write_openie(out / "openie_walkthrough_qwen2.5-coder-1.5b.json", documents, {"extraction": info})
    for name in ("walkthrough_corpus.json", "walkthrough_qa.json"):
        shutil.copyfile(WALKTHROUGH / name, out / name)
    print(json.dumps(info, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20, help="passages to compare")
    parser.add_argument("--work-dir", default="/tmp/gear-extraction-compare", help="extraction journal")
    parser.add_argument("--out", help="write the full JSON report here")
    parser.add_argument("--walkthrough", help="instead: extract the walk-through corpus into this folder")
    args = parser.parse_args()
    if args.walkthrough:
        walkthrough(args)
        return
    report = compare(args)
    print_report(report)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
