"""What is reproducible when the embedded model is asked again? Recorded requests of real runs, asked anew.

The requests: the recorded GeAR runs of the 20-question MuSiQue subset (`scripts/eval_subset.sh`, paper prompts),
collected in run order by replaying them from assets/llm_cache through the engine (bench/llm_replay_diff.py's
`collect`; the replay must give the recorded report's recall, which proves they are the recorded requests). Then the
first N of them are asked of llama-server (the embedded model, gear's own client, streamed as the agent streams) in
five ways, and each answer's text is compared — with the recording, and between the ways:

- warm: in run order, prompt cache on, 1 slot — what a live run (or "Ask the model again") sees: each request finds
  the previous ones' heads in the server's cache;
- cold: every request read whole (`cache_prompt: false`), 1 slot — gear's exact mode (GEAR_LLM_EXACT);
- cold again: the first M of those once more, read whole — does the exact mode give the same text twice?
- warm repeat: each of the first M asked twice in a row with the cache on — the second reads all but the prompt's
  last token from the cache;
- 4 slots: a server with 4 slots, the first M read whole and sent 4 at a time — other requests in the same batch.

Where texts differ, whether what the agent parses from them (triples, verdict, next query, answer) differs too. With
--runs K, the first K questions are also run whole through the engine, asked afresh (the way "Ask the model again"
does: gear.llm.fresh_llm), once with the cache on and once in exact mode, and their answers and recall compared with
the recorded report's.

    .venv/bin/python bench/llm_reproducibility.py [--limit 80] [--repeat 32] [--runs 0] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.llm_replay_diff import CACHE, QA, RECORDED, Collector, parsed  # noqa: E402


def collect(index: Path, n: int) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """The recorded subset's requests in run order (each question replayed from assets/llm_cache through the engine,
    its answer checked against the recorded report), their steps, and the questions that do not replay here: a
    near-tie of two passages' scores can rank them the other way on another CPU, and then a prompt differs from the
    recorded one (seen on an AVX2-only AMD EPYC: 5 of the 20)."""
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.corpus import load_qa
    from gear.llm import LLMError, MemoLLM
    from gear.llm.model_files import DEFAULT_MODEL
    from gear.llm.replay import CachedLLM
    from gear.trace import LLMCalled

    settings = Settings(_env_file=None).with_(retriever="hybrid", method="gear", prompts="paper", llm="replay",
                                              llm_cache_dir=CACHE)
    recorded = {q["id"]: q for q in json.loads(RECORDED.read_text(encoding="utf-8"))["per_question"]}
    engine = Engine.open(index, settings)
    requests: list[dict[str, Any]] = []
    steps: list[str] = []
    unreplayed: list[str] = []
    for q in [q for q in load_qa(QA)[0][::2][:20] if q.id in recorded][:n]:
        collector = Collector(CachedLLM.replay_only(CACHE, model=DEFAULT_MODEL.name))
        engine.set_llm(settings, MemoLLM(collector))  # type: ignore[arg-type]
        try:
            run = engine.retrieve(q.question, k=settings.agent_k, settings=settings, answers=q.answers)
        except LLMError:
            unreplayed.append(q.id)
            continue
        assert run.answer == recorded[q.id]["answer"], q.id
        requests.extend(collector.requests)
        steps.extend(c.step for c in run.trace.of(LLMCalled) if c.source != "memo")
    return requests, steps, unreplayed


def ask_all(llm: Any, requests: list[dict[str, Any]], at_once: int = 1) -> list[dict[str, Any]]:
    """Each request's answer (text, tokens, seconds, cached prompt tokens), `at_once` in flight."""

    def one(request: dict[str, Any]) -> dict[str, Any]:
        result = llm.complete(request["messages"], json_schema=request["schema"], max_tokens=request["max_tokens"],
                              on_text=lambda piece: None)
        return {"text": result.text, "completion_tokens": result.completion_tokens, "seconds": result.seconds,
                "cached": result.cached_prompt_tokens or 0, "prompt_tokens": result.prompt_tokens}

    if at_once == 1:
        out = []
        for n, request in enumerate(requests, 1):
            out.append(one(request))
            if n % 10 == 0:
                print(f"    {n}/{len(requests)}", flush=True)
        return out
    with ThreadPoolExecutor(at_once) as pool:
        return list(pool.map(one, requests))


def compare(name: str, answers: list[dict[str, Any]], reference: list[str], steps: list[str]) -> dict[str, Any]:
    """How many answers differ from the reference texts, in text and in what the agent parses."""
    text = sum(a["text"] != r for a, r in zip(answers, reference, strict=False))
    parse = sum(a["text"] != r and parsed(s, a["text"]) != parsed(s, r)
                for a, r, s in zip(answers, reference, steps, strict=False))
    return {"name": name, "requests": len(answers), "differ_text": text, "differ_parse": parse}


def runs(index: Path, n: int, exact: bool) -> dict[str, Any]:
    """The first n subset questions run whole, asked afresh; answers and recall against the recorded report."""
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.corpus import load_qa
    from gear.llm import fresh_llm
    from gear.measures import recall_at

    recorded = {q["id"]: q for q in json.loads(RECORDED.read_text(encoding="utf-8"))["per_question"]}
    settings = Settings(_env_file=None).with_(retriever="hybrid", method="gear", prompts="paper", llm="local",
                                              llm_exact=exact)
    engine = Engine.open(index, settings)
    questions = [q for q in load_qa(QA)[0][::2][:20] if q.id in recorded][:n]
    rows = []
    started = time.perf_counter()
    for q in questions:
        gold = engine.gold_ids(q.gold)
        run = engine.retrieve(q.question, k=settings.agent_k, settings=settings, gold=gold, question_id=q.id,
                              answers=q.answers, llm=fresh_llm(engine.llm(settings)))
        mine = {str(k): recall_at(run.ids, gold, k) for k in (5, 10, 15)}
        theirs = recorded[q.id]
        rows.append({"id": q.id, "same_answer": run.answer == theirs["answer"],
                     "answer": [theirs["answer"], run.answer],
                     "same_recall": all(abs(mine[k] - theirs["recall"][k]) < 1e-9 for k in mine),
                     "recall": [theirs["recall"], mine]})
        print(f"    {q.id}: answer {'same' if rows[-1]['same_answer'] else 'DIFFERS'}, recall "
              f"{'same' if rows[-1]['same_recall'] else 'DIFFERS'}", flush=True)
    return {"exact": exact, "questions": len(rows), "same_answer": sum(r["same_answer"] for r in rows),
            "same_recall": sum(r["same_recall"] for r in rows), "seconds": time.perf_counter() - started, "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / "data" / "indexes" / "musique")
    parser.add_argument("--limit", type=int, default=80, help="requests asked warm and cold (N)")
    parser.add_argument("--repeat", type=int, default=32, help="requests asked cold again, twice warm, on 4 slots (M)")
    parser.add_argument("--runs", type=int, default=0, help="questions also run whole, warm and exact (K)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ["GEAR_CACHE_DIR"] = tempfile.mkdtemp(prefix="gear-bench-repro-")  # our own servers, not the machine's
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    requests, steps, unreplayed = collect(args.index, 20)
    assert len(requests) == len(steps), (len(requests), len(steps))
    print(f"{len(requests)} recorded requests of {20 - len(unreplayed)} questions replayed here"
          + (f"; {len(unreplayed)} do not replay on this machine ({', '.join(unreplayed)})" if unreplayed else ""))
    requests, steps = requests[: args.limit], steps[: args.limit]
    m = min(args.repeat, len(requests))
    texts = [r["text"] for r in requests]
    print(f"{len(requests)} recorded requests ({dict(Counter(steps))}); the first {m} asked three more ways")

    from gear.llm.embedded import EmbeddedLLM

    results: dict[str, Any] = {"requests": len(requests), "repeat": m, "steps": dict(Counter(steps)), "passes": [],
                               "unreplayed": unreplayed}
    one_slot, exact = EmbeddedLLM(parallel=1), EmbeddedLLM(parallel=1, exact=True)
    passes: dict[str, list[dict[str, Any]]] = {}
    timings: dict[str, float] = {}
    for name, llm, todo, at_once in (("warm", one_slot, requests, 1), ("cold", exact, requests, 1),
                                     ("cold again", exact, requests[:m], 1)):
        print(f"  {name}: {len(todo)} requests", flush=True)
        started = time.perf_counter()
        passes[name] = ask_all(llm, todo, at_once)
        timings[name] = time.perf_counter() - started
    print(f"  warm repeat: {m} requests, each twice", flush=True)
    started = time.perf_counter()
    firsts, seconds = [], []
    for request in requests[:m]:
        firsts.extend(ask_all(one_slot, [request]))
        seconds.extend(ask_all(one_slot, [request]))
    passes["warm repeat (first)"], passes["warm repeat (second)"] = firsts, seconds
    timings["warm repeat"] = time.perf_counter() - started
    one_slot.server.stop()
    four = EmbeddedLLM(parallel=4, exact=True)
    print(f"  4 slots: {m} requests, 4 at a time, read whole", flush=True)
    started = time.perf_counter()
    passes["4 slots"] = ask_all(four, requests[:m], at_once=4)
    timings["4 slots"] = time.perf_counter() - started
    four.server.stop()

    cold = [a["text"] for a in passes["cold"]]
    table = [
        compare("warm (run order) vs recorded", passes["warm"], texts, steps),
        compare("cold vs recorded", passes["cold"], texts, steps),
        compare("cold vs warm", passes["cold"], [a["text"] for a in passes["warm"]], steps),
        compare("cold again vs cold", passes["cold again"], cold, steps),
        compare("warm repeat: second vs first", passes["warm repeat (second)"],
                [a["text"] for a in passes["warm repeat (first)"]], steps),
        compare("warm repeat: second vs cold", passes["warm repeat (second)"], cold, steps),
        compare("4 slots (read whole) vs cold", passes["4 slots"], cold, steps),
    ]
    for row in table:
        print(f"{row['name']:<34} {row['differ_text']:>3} of {row['requests']:<3} differ in text, "
              f"{row['differ_parse']:>3} in what the agent parses")
    warm_s = sum(a["seconds"] for a in passes["warm"])
    cold_s = sum(a["seconds"] for a in passes["cold"])
    print(f"time: warm {warm_s:.0f} s, cold {cold_s:.0f} s for the same {len(requests)} requests "
          f"(exact mode ×{cold_s / warm_s:.2f}); prompt tokens from the cache when warm: "
          f"{sum(a['cached'] for a in passes['warm'])} of {sum(a['prompt_tokens'] for a in passes['warm'])}")
    results.update(table=table, timings=timings, seconds={"warm": warm_s, "cold": cold_s},
                   passes={k: [{"text": a["text"], "seconds": a["seconds"], "cached": a["cached"]} for a in v]
                           for k, v in passes.items()})
    if args.runs:
        for is_exact in (False, True):
            print(f"  runs: {args.runs} questions asked afresh, {'exact' if is_exact else 'cache on'}", flush=True)
            found = runs(args.index, args.runs, is_exact)
            print(f"    {found['same_answer']} of {found['questions']} answers and {found['same_recall']} recalls "
                  f"as recorded, {found['seconds']:.0f} s")
            results[f"runs_{'exact' if is_exact else 'warm'}"] = found
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
