"""Cost of each LLM step of the agent on llama-cpp-python in process, and what each speed change buys, in one run.

The in-process path is gone from gear (the embedded model is llama.cpp's llama-server: bench/llm_server.py compares
the two on these very requests); this bench stays for the record of what was tried in process, and runs where
llama-cpp-python is installed.

The requests are rebuilt from a recorded GeAR run (assets/traces/walkthrough_3hop_gear.json: the passages, memory and
verdicts it holds), so they are the real prompts of a real question; the paper-profile ones are checked against the
bundled recordings (assets/llm_cache) to prove the rebuild is exact. Every change is measured against the old path
(1 thread, no streaming, a fresh KV cache per call) in the same run, and printed as a ratio: these machines are noisy,
ratios much less so. Run it on a quiet machine:

    .venv/bin/python bench/llm_steps.py [--json docs/bench/llm_steps.json] [--quick]

Measured per step: prompt and generated tokens, seconds, tokens/s. Changes: threads (1 vs the physical cores, quiet
and beside a busy process), streaming, prompt-lookup speculative decoding (reads, extraction; outputs compared),
re-use of the KV cache across calls, the memo of identical calls, and the small profile's schema-constrained answers.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear.agent import asks  # noqa: E402
from gear.agent.asks import Ask  # noqa: E402
from gear.events import (  # noqa: E402
    Answered,
    BaseRetrieved,
    FinalRanking,
    GistUpdated,
    PassagesFused,
    Reasoned,
    RunStarted,
)
from gear.extract.runner import ExtractionConfig, extraction_messages  # noqa: E402
from gear.llm.replay import cache_key  # noqa: E402
from gear.prompts import format_docs  # noqa: E402
from gear.trace import Trace  # noqa: E402

TRACE = ROOT / "assets" / "traces" / "walkthrough_3hop_gear.json"
CACHE = ROOT / "assets" / "llm_cache"
CORPUS = ROOT / "assets" / "walkthrough" / "walkthrough_corpus.json"


@dataclass
class Call:
    step: str
    messages: list[dict[str, str]]
    schema: dict | None
    max_tokens: int


def as_call(request: Ask) -> Call:
    return Call(request.step, [{"role": "user", "content": request.prompt}], request.schema, request.max_tokens)


def recorded_calls(profile: str) -> list[Call]:
    """Iteration 1's requests of the recorded run (sync read, gist read, reason, rewrite), its QA, and one
    extraction; with profile "small" the same inputs in the small profile's prompts."""
    trace = Trace.load(TRACE)
    start = trace.first(RunStarted)
    assert start is not None
    q = start.question
    base, fused = trace.first(BaseRetrieved, 1), trace.first(PassagesFused, 1)
    memory, verdict, answered = trace.first(GistUpdated, 1), trace.first(Reasoned, 1), trace.first(Answered)
    final = trace.first(FinalRanking)
    assert base and fused and memory and verdict and answered and final
    docs = [(p.title, p.text) for p in base.passages]
    gist_docs = [(p.title, p.text) for p in fused.passages[:10]]
    by_id = {p.id: (p.title, p.text) for p in final.passages}
    mem = [tuple(t) for t in memory.memory]
    prof: Any = profile
    calls = [as_call(asks.read(prof, "sync", format_docs(docs), q, None)),
             as_call(asks.read(prof, "gist", format_docs(gist_docs), q, None)),
             as_call(asks.reason(prof, q, mem)),
             as_call(asks.rewrite(prof, q, mem, verdict.reason)),
             as_call(asks.answer([by_id[i] for i in answered.passage_ids], q))]
    corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
    config = ExtractionConfig()
    calls.append(Call("extraction", extraction_messages(corpus[0]["title"], corpus[0]["text"], config.style),
                      config.schema(), config.max_tokens))
    return calls


def recorded(call: Call, model: str) -> bool:
    return (CACHE / f"{cache_key(model, call.messages, call.schema, call.max_tokens)}.json").is_file()


def import_llama_cpp() -> Any:
    """llama-cpp-python with its OpenMP workers waiting passively, as gear ran it in process (a spinning worker
    collapses beside a busy neighbour); libgomp reads the setting once, when it loads with llama_cpp, so the servers
    started later get gear's own setting (gear.llm.llama_server.server_env)."""
    user_policy = os.environ.get("OMP_WAIT_POLICY")
    os.environ["OMP_WAIT_POLICY"] = user_policy or "PASSIVE"
    import llama_cpp

    if user_policy is None:
        del os.environ["OMP_WAIT_POLICY"]
    return llama_cpp


class Model:
    """One llama.cpp context with a given thread count (and optionally prompt-lookup decoding)."""

    def __init__(self, threads: int, lookup: bool = False) -> None:
        llama_cpp = import_llama_cpp()
        from llama_cpp.llama_speculative import LlamaPromptLookupDecoding

        from gear.llm.model_files import ensure_model

        draft = LlamaPromptLookupDecoding(num_pred_tokens=10) if lookup else None
        # speculative decoding needs the logits of every position (llama-cpp-python 0.3.36 fails without
        # logits_all); that buffer is n_ctx × vocab floats, so a 4k context keeps it at 2.5 GB
        self.llama = llama_cpp.Llama(model_path=str(ensure_model()), n_ctx=4096 if lookup else 8192,
                                     n_threads=threads, n_threads_batch=threads, seed=0, verbose=False,
                                     draft_model=draft, logits_all=lookup)

    def run(self, call: Call, *, fresh: bool = True, stream: bool = False) -> dict[str, Any]:
        if fresh:
            self.llama.reset()
        kwargs: dict[str, Any] = {"messages": call.messages, "temperature": 0.0, "max_tokens": call.max_tokens,
                                  "seed": 0}
        if call.schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": call.schema}
        started = time.perf_counter()
        if stream:
            first: list[float] = []
            pieces = []
            for chunk in self.llama.create_chat_completion(**kwargs, stream=True):
                piece = chunk["choices"][0].get("delta", {}).get("content")
                if piece:
                    first.append(first[0] if first else time.perf_counter() - started)
                    pieces.append(piece)
            text = "".join(pieces)
            seconds = time.perf_counter() - started
            out = {"text": text, "seconds": seconds, "first_text_s": first[0] if first else seconds}
            tokens = len(self.llama.tokenize(text.encode(), add_bos=False, special=False)) if text else 0
            out.update(prompt_tokens=None, completion_tokens=tokens)
            return out
        response = self.llama.create_chat_completion(**kwargs)
        seconds = time.perf_counter() - started
        usage = response["usage"]
        return {"text": response["choices"][0]["message"]["content"] or "", "seconds": seconds,
                "prompt_tokens": usage["prompt_tokens"], "completion_tokens": usage["completion_tokens"]}


def busy_neighbour(stop: Any) -> None:  # pragma: no cover - runs in a child process
    x = 0
    while not stop.is_set():
        x = (x * 1103515245 + 12345) % 2**31


def with_busy(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    stop = multiprocessing.Event()
    proc = multiprocessing.Process(target=busy_neighbour, args=(stop,), daemon=True)
    proc.start()
    try:
        time.sleep(0.5)
        return fn()
    finally:
        stop.set()
        proc.join(5)


def line(name: str, value: float, unit: str, ref: float | None = None, note: str = "") -> str:
    ratio = f"  ratio {ref / value:.2f}x faster" if ref and value else ""
    return f"{name:<46} {value:9.2f} {unit}{ratio}{'  ' + note if note else ''}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--quick", action="store_true", help="only the sync read and the reasoner")
    parser.add_argument("--sections", default="steps,busy,stream,kv,lookup,memo,small",
                        help="comma-separated subset of: steps,busy,stream,kv,lookup,memo,small")
    args = parser.parse_args()
    from gear.llm.llama_server import physical_cores
    from gear.llm.model_files import DEFAULT_MODEL

    cores = physical_cores()
    paper, small = recorded_calls("paper"), recorded_calls("small")
    if args.quick:
        paper, small = [paper[0], paper[2]], [small[0], small[2]]
    exact = sum(recorded(c, DEFAULT_MODEL.name) for c in paper if c.step != "extraction")
    print(f"requests rebuilt from {TRACE.name}: {exact} of {sum(c.step != 'extraction' for c in paper)} paper-profile "
          "requests found in the bundled recordings (the rebuild is exact)")
    print(f"physical cores {cores}; load average before: {os.getloadavg()[0]:.2f}")
    results: dict[str, Any] = {"cores": cores, "steps": {}, "changes": {}}

    sections = set(args.sections.split(","))
    one, many = Model(1), Model(cores)
    one.run(paper[0])  # warm up: the first call also pages the model file in
    many.run(paper[0])
    print("\n# per step: old path (1 thread, fresh context) vs all cores")
    for call in paper if "steps" in sections else []:
        old, new = one.run(call), many.run(call)
        same = old["text"] == new["text"]
        results["steps"][call.step] = {"old": old, "cores": new, "same_output": same}
        print(line(f"{call.step}: 1 thread", old["seconds"], "s", note=f"{old['prompt_tokens']} prompt + "
                   f"{old['completion_tokens']} generated tokens, {old['prompt_tokens'] / old['seconds']:.0f} tok/s"))
        print(line(f"{call.step}: {cores} threads", new["seconds"], "s", old["seconds"],
                   note="" if same else "OUTPUT DIFFERS"))

    sync = paper[0]
    if "busy" in sections:
        busy(results, one, many, sync, cores)
    if "stream" in sections:
        stream(results, many, sync)
    if "kv" in sections:
        kv(results, many, paper, args.quick)
    if "lookup" in sections:
        lookup_decoding(results, paper, cores)
    if "memo" in sections:
        memo(results, sync, cores)
    if "small" in sections:
        small_profile(results, many, small, paper)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
        print(f"written {args.json}")
    return 0


def busy(results: dict[str, Any], one: Model, many: Model, sync: Call, cores: int) -> None:
    print("\n# threads beside a busy neighbour (one core spinning)")
    busy_one = with_busy(lambda: one.run(sync))
    busy_many = with_busy(lambda: many.run(sync))
    results["changes"]["busy"] = {"1": busy_one["seconds"], str(cores): busy_many["seconds"]}
    print(line("sync read, busy, 1 thread", busy_one["seconds"], "s"))
    print(line(f"sync read, busy, {cores} threads", busy_many["seconds"], "s", busy_one["seconds"]))



def stream(results: dict[str, Any], many: Model, sync: Call) -> None:
    print("\n# streaming (all cores): total time and time to the first text")
    streamed = many.run(sync, stream=True)
    plain = many.run(sync)
    results["changes"]["stream"] = {"seconds": streamed["seconds"], "first_text_s": streamed["first_text_s"],
                                    "same_output": streamed["text"] == plain["text"]}
    print(line("sync read streamed", streamed["seconds"], "s", plain["seconds"],
               note=f"first text after {streamed['first_text_s']:.1f} s"))



def kv(results: dict[str, Any], many: Model, paper: list[Call], quick: bool) -> None:
    print("\n# KV cache re-use across calls (all cores): the same call after another one, without a reset")
    for a, b in ((paper[0], paper[1]), (paper[-1], paper[-1])):
        many.run(a)
        warm = many.run(b, fresh=False)
        cold = many.run(b)
        label = f"{b.step} after {a.step}" if a is not b else f"{b.step} twice (fixed one-shot prefix)"
        results["changes"][f"kv: {label}"] = {"cold": cold["seconds"], "warm": warm["seconds"]}
        print(line(label + ", reset", cold["seconds"], "s"))
        print(line(label + ", re-used", warm["seconds"], "s", cold["seconds"]))
    if not quick:
        extraction = paper[-1]
        corpus = json.loads(CORPUS.read_text(encoding="utf-8"))
        config = ExtractionConfig()
        second = Call("extraction", extraction_messages(corpus[1]["title"], corpus[1]["text"], config.style),
                      config.schema(), config.max_tokens)
        many.run(extraction)
        warm = many.run(second, fresh=False)
        cold = many.run(second)
        results["changes"]["kv: next passage's extraction"] = {"cold": cold["seconds"], "warm": warm["seconds"]}
        print(line("extraction of the next passage, reset", cold["seconds"], "s"))
        print(line("extraction of the next passage, re-used", warm["seconds"], "s", cold["seconds"]))



def lookup_decoding(results: dict[str, Any], paper: list[Call], cores: int) -> None:
    print("\n# prompt-lookup speculative decoding (all cores), for steps that copy their input")
    lookup, plain = Model(cores, lookup=True), Model(cores)
    plain.run(paper[0])
    for call in [c for c in paper if c.step == "extraction" or c.step == "read (sync)"]:
        spec = lookup.run(call)
        ref = plain.run(call)
        same = spec["text"] == ref["text"]
        results["changes"][f"lookup: {call.step}"] = {"seconds": spec["seconds"], "reference": ref["seconds"],
                                                      "same_output": same}
        print(line(f"{call.step} with prompt lookup", spec["seconds"], "s", ref["seconds"],
                   note="same output" if same else "OUTPUT DIFFERS"))
    del lookup, plain


def memo(results: dict[str, Any], sync: Call, cores: int) -> None:
    print("\n# the memo: an identical call again in the same process")
    from gear.llm import MemoLLM
    from gear.llm.embedded import EmbeddedLLM

    memo = MemoLLM(EmbeddedLLM(threads=cores))  # the embedded model as gear runs it (its owned llama-server)
    first = memo.complete(sync.messages, json_schema=sync.schema, max_tokens=sync.max_tokens)
    started = time.perf_counter()
    again = memo.complete(sync.messages, json_schema=sync.schema, max_tokens=sync.max_tokens)
    memo_s = time.perf_counter() - started
    results["changes"]["memo"] = {"first": first.seconds, "again": memo_s, "same_output": first.text == again.text}
    print(line("sync read, first call", first.seconds, "s"))
    print(line("sync read, identical call (memo)", memo_s, "s", first.seconds))



def small_profile(results: dict[str, Any], many: Model, small: list[Call], paper: list[Call]) -> None:
    print("\n# the small profile (schema-constrained JSON) on the same inputs, all cores, beside the paper's prompt")
    for call, paper_call in zip(small[:-2], paper, strict=False):  # QA: the paper's prompt in both; extraction above
        res = many.run(call)
        ref = many.run(paper_call)
        results["changes"][f"small: {call.step}"] = {**res, "paper_seconds": ref["seconds"]}
        print(line(f"{call.step}, small profile", res["seconds"], "s", ref["seconds"],
                   note=f"{res['prompt_tokens']} prompt + {res['completion_tokens']} generated tokens"))


if __name__ == "__main__":
    sys.exit(main())
