"""Does llama-server answer what llama-cpp-python answered? The recorded 20-question subset's requests, sent again.

1. The requests: the recorded GeAR run on the subset (`scripts/eval_subset.sh`: every 2nd MuSiQue dev50 question, 20
   of them, paper prompts) is replayed from assets/llm_cache through the engine, and every request that reached the
   recordings is collected in order (the memo answers repeats). The replay must give the recorded report's recall
   (docs/evals/dev50_every2_n20_gear_paper.json), which proves the requests are the recorded ones.
2. The chat template (`--template N`): for the first N requests the prompt tokens llama-server renders (/apply-template
   then /tokenize) are compared with those llama-cpp-python rendered for the same messages (the GGUF's Jinja template
   through its Jinja2ChatFormatter, tokenized as create_chat_completion does); needs llama-cpp-python.
3. The answers: each request goes to the owned llama-server through gear's client, in the recorded order (so the
   server's prompt cache sees what a live run shows it), streamed as the agent streams; its text is compared with the
   recorded one, and where the text differs, whether what the agent parses from it (triples, verdict, next query,
   answer) differs too. Prompt token counts are compared as well (a template mismatch shows there first).

    .venv/bin/python bench/llm_replay_diff.py [--index data/indexes/musique] [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear.llm.base import LLMResult, Message, TextListener  # noqa: E402

RECORDED = ROOT / "docs" / "evals" / "dev50_every2_n20_gear_paper.json"
QA = ROOT / "assets" / "musique" / "musique_dev50.json"
CACHE = ROOT / "assets" / "llm_cache"


class Collector:
    """An LLM between the memo and the recordings: notes each request that reached the recordings."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model = inner, inner.model
        self.requests: list[dict[str, Any]] = []

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        result = self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens)
        self.requests.append({"messages": messages, "schema": json_schema, "max_tokens": max_tokens,
                              "text": result.text, "prompt_tokens": result.prompt_tokens,
                              "completion_tokens": result.completion_tokens, "seconds": result.seconds})
        if on_text is not None:
            on_text(result.text)
        return result


def collect(index: Path, every: int, limit: int) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """The subset's recorded requests in order, the step of each, and the replayed report."""
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa
    from gear.eval.report import evaluate
    from gear.events import LLMCalled
    from gear.llm import MemoLLM
    from gear.llm.model_files import DEFAULT_MODEL
    from gear.llm.replay import CachedLLM

    settings = Settings(_env_file=None).with_(retriever="hybrid", method="gear", prompts="paper", llm="replay",
                                              llm_cache_dir=CACHE)
    questions = load_qa(QA)[0][::every][:limit]
    engine = Engine.open(index, settings)
    collector = Collector(CachedLLM.replay_only(CACHE, model=DEFAULT_MODEL.name))
    engine.set_llm(settings, MemoLLM(collector))  # type: ignore[arg-type]
    steps: list[str] = []
    original = engine.retrieve

    def retrieve(*args: Any, **kwargs: Any) -> Any:
        run = original(*args, **kwargs)
        steps.extend(c.step for c in run.trace.of(LLMCalled) if c.source != "memo")
        return run

    engine.retrieve = retrieve  # type: ignore[method-assign]
    report = evaluate(engine, questions, settings).to_dict()
    return collector.requests, steps, report


def template_check(requests: list[dict[str, Any]], root: str, n: int) -> dict[str, Any]:
    """Prompt tokens rendered by llama-server and by llama-cpp-python for the first n requests: identical?"""
    import llama_cpp
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from bench.llm_server import post
    from gear.llm.model_files import ensure_model

    llama = llama_cpp.Llama(model_path=str(ensure_model()), vocab_only=True, verbose=False)
    eos, bos = llama.token_eos(), llama.token_bos()
    formatter = Jinja2ChatFormatter(template=llama.metadata["tokenizer.chat_template"],
                                    eos_token=llama._model.token_get_text(eos) if eos != -1 else "",
                                    bos_token=llama._model.token_get_text(bos) if bos != -1 else "",
                                    stop_token_ids=[eos])
    same = 0
    first_difference = None
    for request in requests[:n]:
        rendered = formatter(messages=request["messages"])
        theirs = llama.tokenize(rendered.prompt.encode("utf-8"), add_bos=not rendered.added_special, special=True)
        prompt = post(f"{root}/apply-template", {"messages": request["messages"]})["prompt"]
        ours = post(f"{root}/tokenize", {"content": prompt, "add_special": True, "parse_special": True})["tokens"]
        if list(theirs) == list(ours):
            same += 1
        elif first_difference is None:
            at = next((i for i, (a, b) in enumerate(zip(theirs, ours, strict=False)) if a != b),
                      min(len(theirs), len(ours)))
            first_difference = {"at_token": at, "in_process": rendered.prompt[:200], "server": prompt[:200],
                                "lengths": [len(theirs), len(ours)]}
    return {"checked": min(n, len(requests)), "identical": same, "first_difference": first_difference}


def parsed(step: str, text: str) -> object:
    """What the agent takes from an answer of this step."""
    from gear.parsing import parse_answer, parse_next_question, parse_reasoning, parse_triples

    if step.startswith("read"):
        return sorted(tuple(t) for t in parse_triples(text).triples)
    if step == "reason":
        verdict = parse_reasoning(text)
        return (verdict.answerable, verdict.answer)
    if step == "rewrite":
        return parse_next_question(text)
    if step == "qa":
        return parse_answer(text)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / "data" / "indexes" / "musique")
    parser.add_argument("--every", type=int, default=2)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--limit", type=int, help="send only the first N requests to the server")
    parser.add_argument("--template", type=int, default=40, help="requests whose prompt tokens are compared (0: none)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.environ["GEAR_CACHE_DIR"] = tempfile.mkdtemp(prefix="gear-bench-replay-")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    requests, steps, report = collect(args.index, args.every, args.questions)
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert len(steps) == len(requests), (len(steps), len(requests))
    print(f"{len(requests)} recorded requests of {report['n_questions']} questions; replayed recall "
          f"{report['recall']} (recorded {recorded['recall']}), EM {report['em']:.1f} F1 {report['f1']:.1f}")
    assert report["recall"] == recorded["recall"], "the replay is not the recorded run"

    from gear.llm.embedded import EmbeddedLLM

    llm = EmbeddedLLM()
    running = llm.server.ensure()
    results: dict[str, Any] = {"requests": len(requests), "template": None, "calls": []}
    if args.template:
        try:
            results["template"] = template_check(requests, running.root, args.template)
            t = results["template"]
            print(f"chat template: {t['identical']} of {t['checked']} prompts tokenized identically"
                  + (f"; first difference {t['first_difference']}" if t["first_difference"] else ""))
        except ImportError:
            print("chat template: llama-cpp-python not installed, not compared")
    todo = list(zip(requests, steps, strict=True))[: args.limit or None]
    by_step: dict[str, Counter[str]] = {}
    started = time.perf_counter()
    for n, (request, step) in enumerate(todo, 1):
        result = llm.complete(request["messages"], json_schema=request["schema"], max_tokens=request["max_tokens"],
                              on_text=lambda piece: None)
        same_text = result.text == request["text"]
        same_parse = same_text or parsed(step, result.text) == parsed(step, request["text"])
        counts = by_step.setdefault(step, Counter())
        counts["calls"] += 1
        counts["same text"] += same_text
        counts["same parse"] += same_parse
        counts["same prompt tokens"] += result.prompt_tokens == request["prompt_tokens"]
        results["calls"].append({"step": step, "same_text": same_text, "same_parse": same_parse,
                                 "recorded": request["text"], "server": result.text,
                                 "prompt_tokens": [request["prompt_tokens"], result.prompt_tokens],
                                 "cached_tokens": result.cached_prompt_tokens, "seconds": [request["seconds"],
                                                                                           result.seconds]})
        print(f"  {n}/{len(todo)} {step}: {'same' if same_text else 'same parse' if same_parse else 'DIFFERS'} "
              f"({result.seconds:.1f} s, {result.cached_prompt_tokens or 0} of {result.prompt_tokens} cached)",
              flush=True)
    total = sum(by_step.values(), Counter())
    print(f"\n{'step':<14}{'calls':>7}{'same text':>11}{'same parse':>12}{'same prompt tokens':>20}")
    for step, c in [*sorted(by_step.items()), ("all", total)]:
        print(f"{step:<14}{c['calls']:>7}{c['same text']:>11}{c['same parse']:>12}{c['same prompt tokens']:>20}")
    print(f"{total['calls'] - total['same text']} of {total['calls']} answers differ in text, "
          f"{total['calls'] - total['same parse']} in what the agent parses; {time.perf_counter() - started:.0f} s; "
          f"load average after: {os.getloadavg()[0]:.2f}")
    results["by_step"] = {k: dict(v) for k, v in by_step.items()}
    llm.server.stop()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
