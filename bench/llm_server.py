"""The embedded model through llama.cpp's llama-server (gear's owned server, gear's client) beside llama-cpp-python in
process, on the very same requests, in one run.

Sections (`--sections`, all by default):
- speed: generation with and without a JSON schema (a warm request: its prompt is in the cache, so the seconds are the
  writing), and prompt reading at 512 and 2,000 tokens (cold: a fresh nonce at the start, so nothing is re-used);
- steps: each LLM step of the agent (the requests of bench/llm_steps.py: iteration 1 of the recorded walk-through run
  plus one extraction), cold on both engines (server: `cache_prompt: false`; in-process: `reset()`), outputs compared;
- cache: what the server's prompt cache saves on the steps that share a head (the gist read after the sync read,
  the next passage's extraction after one), warm against cold.

The in-process reference runs when llama-cpp-python is importable (`--inprocess off` skips it). The server is started
in a private cache folder (a state file of its own), so a server another process runs is never touched. Every line is
`name value unit`, with the in-process value and the ratio beside it; the load average is printed before and after.
Run on a quiet machine:

    .venv/bin/python bench/llm_server.py [--json docs/bench/llm_server.json] [--sections speed,steps,cache]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.llm_steps import Call, Model, recorded_calls  # noqa: E402

PLAIN = [{"role": "user", "content": "Write a detailed history of Bremen Cathedral, its architecture, its bells and "
                                     "its organs, in at least 300 words."}]
FACTS_SCHEMA = {"type": "object", "properties": {"facts": {"type": "array", "minItems": 12, "maxItems": 40, "items": {
    "type": "array", "minItems": 3, "maxItems": 3, "items": {"type": "string"}}}}, "required": ["facts"]}
FACTS = [{"role": "user", "content": "List at least 30 facts about Bremen Cathedral, Bremen and the Hanseatic League "
                                     "as JSON {\"facts\": [[subject, predicate, object], ...]}."}]
GEN_TOKENS = 256


def post(url: str, body: dict[str, Any], timeout: float = 600) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


class ServerSide:
    """gear's EmbeddedLLM (its owned llama-server, its client) plus raw requests for what the client never sends
    (`cache_prompt: false` for cold runs, /tokenize)."""

    def __init__(self) -> None:
        from gear.llm.embedded import EmbeddedLLM

        self.llm = EmbeddedLLM()
        started = time.perf_counter()
        self.running = self.llm.server.ensure()
        self.start_seconds = time.perf_counter() - started
        self.root = self.running.root

    def client(self, call: Call) -> dict[str, Any]:
        started = time.perf_counter()
        result = self.llm.complete(call.messages, json_schema=call.schema, max_tokens=call.max_tokens)
        return {"text": result.text, "seconds": time.perf_counter() - started, "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens, "cached_tokens": result.cached_prompt_tokens}

    def raw(self, call: Call, *, cache: bool) -> dict[str, Any]:
        """The request gear's client sends, with the prompt cache on or off; the server's own timings returned."""
        body: dict[str, Any] = {"model": self.llm.model, "messages": call.messages, "temperature": 0,
                                "max_tokens": call.max_tokens, "seed": 0, "cache_prompt": cache}
        if call.schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": call.schema,
                                                                              "strict": False}}
        started = time.perf_counter()
        data = post(f"{self.running.url}/chat/completions", body)
        usage, timings = data.get("usage") or {}, data.get("timings") or {}
        return {"text": data["choices"][0]["message"].get("content") or "", "seconds": time.perf_counter() - started,
                "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
                "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens"), "timings": timings}

    def tokens(self, text: str) -> int:
        return len(post(f"{self.root}/tokenize", {"content": text})["tokens"])


class InProcess(Model):
    """llama-cpp-python in process, called as the removed LocalLLM called it (temperature 0, seed 0, the GGUF's chat
    template, json_object + schema): bench/llm_steps.Model with one thread count, and the seconds it took to load."""

    def __init__(self, threads: int) -> None:
        started = time.perf_counter()
        super().__init__(threads)
        self.start_seconds = time.perf_counter() - started


def line(name: str, value: float, unit: str, ref: float | None = None, note: str = "", higher_is_better: bool = False
         ) -> str:
    ratio = ""
    if ref:
        ratio = f"  in-process {ref:8.2f}  ratio {value / ref if higher_is_better else ref / value:.2f}x"
    return f"{name:<44} {value:8.2f} {unit:<6}{ratio}{'  ' + note if note else ''}"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (5 min {five:.2f})"


def speed(server: ServerSide, local: InProcess | None, results: dict[str, Any]) -> None:
    print("\n# generation through gear's client (warm: the prompt is cached, the seconds are the writing)")
    for label, call in (("plain", Call("gen", PLAIN, None, GEN_TOKENS)),
                        ("json schema", Call("gen", FACTS, FACTS_SCHEMA, GEN_TOKENS))):
        server.client(call)  # puts the prompt in the cache
        ours = server.client(call)
        rate = ours["completion_tokens"] / ours["seconds"]
        ref = None
        if local is not None:
            local.run(call, fresh=True)
            theirs = local.run(call, fresh=False)
            ref = theirs["completion_tokens"] / theirs["seconds"]
        raw = server.raw(call, cache=True)["timings"]
        results["speed"][f"generation {label}"] = {"tok_s": rate, "tokens": ours["completion_tokens"],
                                                   "in_process_tok_s": ref, "server_timings": raw}
        print(line(f"generation, {label} ({ours['completion_tokens']} tokens)", rate, "tok/s", ref,
                   note=f"server's own count {raw.get('predicted_per_second', 0):.1f} tok/s",
                   higher_is_better=True))
    print("\n# prompt reading through gear's client (cold: a fresh nonce first, nothing re-used; 1 token written)")
    corpus = json.loads((ROOT / "assets" / "musique" / "musique_corpus1890.json").read_text(encoding="utf-8"))
    for target in (512, 2000):
        text, i = "", 0
        while server.tokens(text) < target - 40:  # the chat template adds ≈30 tokens
            text += f"{corpus[i]['title']}\n{corpus[i]['text']}\n\n"
            i += 1
        call = Call("read", [{"role": "user", "content": f"[{uuid.uuid4().hex}]\n{text}Summarise."}], None, 1)
        ours = server.client(call)
        rate = ours["prompt_tokens"] / ours["seconds"]
        ref = None
        if local is not None:
            theirs = local.run(call, fresh=True)
            ref = theirs["prompt_tokens"] / theirs["seconds"]
        results["speed"][f"prompt {target}"] = {"tok_s": rate, "prompt_tokens": ours["prompt_tokens"],
                                                "cached_tokens": ours["cached_tokens"], "in_process_tok_s": ref}
        print(line(f"prompt reading, {ours['prompt_tokens']} tokens", rate, "tok/s", ref,
                   note=f"{ours['cached_tokens'] or 0} from the cache", higher_is_better=True))


def steps(server: ServerSide, local: InProcess | None, results: dict[str, Any]) -> None:
    print("\n# the agent's steps, cold on both (server: cache_prompt false; in-process: reset)")
    for call in recorded_calls("paper"):
        ours = server.raw(call, cache=False)
        theirs = local.run(call, fresh=True) if local is not None else None
        same = theirs is not None and theirs["text"] == ours["text"]
        results["steps"][call.step] = {"server": ours, "in_process": theirs, "same_output": same}
        note = f"{ours['prompt_tokens']} prompt + {ours['completion_tokens']} written"
        if theirs is not None:
            note += ", same output" if same else ", OUTPUT DIFFERS"
        print(line(call.step, ours["seconds"], "s", theirs["seconds"] if theirs else None, note=note))


def cache(server: ServerSide, results: dict[str, Any]) -> None:
    print("\n# the server's prompt cache: a step after the one that shares its head, warm against cold")
    calls = recorded_calls("paper")
    by_step = {c.step: c for c in calls}
    corpus = json.loads((ROOT / "assets" / "walkthrough" / "walkthrough_corpus.json").read_text(encoding="utf-8"))
    from gear.extract.runner import ExtractionConfig, extraction_messages

    config = ExtractionConfig()
    next_passage = Call("extraction", extraction_messages(corpus[1]["title"], corpus[1]["text"], config.style),
                        config.schema(), config.max_tokens)
    for first, then, label in ((by_step["read (sync)"], by_step["read (gist)"], "gist read after the sync read"),
                               (by_step["extraction"], next_passage, "next passage's extraction")):
        cold = server.raw(then, cache=False)
        server.raw(first, cache=True)
        warm = server.raw(then, cache=True)
        results["cache"][label] = {"cold": cold, "warm": warm, "same_output": cold["text"] == warm["text"]}
        print(line(f"{label}, cold", cold["seconds"], "s"))
        print(f"{label + ', cached head':<44} {warm['seconds']:8.2f} s       "
              f"ratio {cold['seconds'] / warm['seconds']:.2f}x  {warm['cached_tokens']} of {warm['prompt_tokens']} "
              f"prompt tokens from the cache{'' if cold['text'] == warm['text'] else ', OUTPUT DIFFERS'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write every measurement here")
    parser.add_argument("--sections", default="speed,steps,cache", help="comma-separated: speed,steps,cache")
    parser.add_argument("--inprocess", choices=("auto", "off"), default="auto",
                        help="run llama-cpp-python in process beside it when installed (default) or never")
    args = parser.parse_args()
    os.environ["GEAR_CACHE_DIR"] = tempfile.mkdtemp(prefix="gear-bench-llm-")  # a server of this run's own
    from gear.llm.llama_server import default_threads

    sections = set(args.sections.split(","))
    print(f"load average before: {load()}; threads {default_threads()}")
    server = ServerSide()
    local = None
    if args.inprocess == "auto":
        try:
            local = InProcess(default_threads())
        except ImportError:
            print("llama-cpp-python is not installed: no in-process reference")
    print(f"server ready in {server.start_seconds:.1f} s ({server.llm.server.config.binary})"
          + (f"; in-process model loaded in {local.start_seconds:.1f} s" if local else ""))
    results: dict[str, Any] = {"threads": default_threads(), "load_before": os.getloadavg(), "speed": {},
                               "steps": {}, "cache": {}, "server_start_seconds": server.start_seconds}
    if "speed" in sections:
        speed(server, local, results)
    if "steps" in sections:
        steps(server, local, results)
    if "cache" in sections:
        cache(server, results)
    results["load_after"] = os.getloadavg()
    print(f"\nload average after: {load()}")
    server.llm.server.stop()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
        print(f"written {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
