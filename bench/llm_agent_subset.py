"""GeAR on the agent's 20-question MuSiQue dev50 subset, live on the embedded model (llama-server), beside the recorded
in-process run: seconds per question, the first graph after Ask, recall and EM/F1, and per step the prompt tokens
read and the tokens the server's prompt cache saved.

The subset and settings are those of `scripts/eval_subset.sh` (every 2nd dev50 question, 20 of them; hybrid, GeAR,
paper prompts); the reference is its recorded run, docs/evals/dev50_every2_n20_gear_paper.json (llama-cpp-python in
process, measured on a quiet machine). Live means no recorded answer is used and nothing is recorded (GEAR_LLM=local,
a fresh server with an empty prompt cache in a private cache folder; the process memo answers identical calls, as in
the reference run). The server is started before the first question (`server start` is printed apart: the app starts
it with its first live call). "first graph" is the time from the question to the first beam graph (the trace's first
BeamsSearched event: after the sync read, tripleLink and the beam search), which is when the app draws it.

    .venv/bin/python bench/llm_agent_subset.py [--read-order rank|cache] [--parallel 1] [--cache-reuse 256]
                                               [--questions 20] [--json OUT] [--traces DIR]
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

from gear.llm.base import LLMResult, Message, TextListener  # noqa: E402

RECORDED = ROOT / "docs" / "evals" / "dev50_every2_n20_gear_paper.json"
QA = ROOT / "assets" / "musique" / "musique_dev50.json"


class Recorder:
    """Between the memo and the model: keeps every model call's result (cached prompt tokens included)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.model = inner, inner.model
        self.results: list[LLMResult] = []

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        result = self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens, on_text=on_text)
        self.results.append(result)
        return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / "data" / "indexes" / "musique")
    parser.add_argument("--every", type=int, default=2)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--read-order", choices=("rank", "cache"), default="rank")
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--cache-reuse", type=int, default=256)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--traces", type=Path)
    args = parser.parse_args()
    os.environ["GEAR_CACHE_DIR"] = tempfile.mkdtemp(prefix="gear-bench-agent-")

    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa
    from gear.eval.report import evaluate
    from gear.events import BeamsSearched, LLMCalled
    from gear.llm import MemoLLM
    from gear.llm.embedded import EmbeddedLLM
    from gear.trace import Trace

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    settings = Settings(_env_file=None).with_(retriever="hybrid", method="gear", prompts="paper", llm="local",
                                              read_order=args.read_order, llm_parallel=args.parallel,
                                              llm_cache_reuse=args.cache_reuse)
    questions = load_qa(QA)[0][:: args.every][: args.questions]
    engine = Engine.open(args.index, settings)
    model = EmbeddedLLM(parallel=args.parallel, cache_reuse=args.cache_reuse)
    started = time.perf_counter()
    model.ensure_loaded()
    server_start = time.perf_counter() - started
    recorder = Recorder(model)
    engine.set_llm(settings, MemoLLM(recorder))  # type: ignore[arg-type]
    first_graph: list[float] = []
    steps: list[str] = []
    original = engine.retrieve

    def retrieve(*a: Any, **kw: Any) -> Any:
        trace = Trace()
        asked = time.perf_counter()
        seen: list[float] = []
        trace.subscribe(lambda e: seen.append(time.perf_counter() - asked) if isinstance(e, BeamsSearched) else None)
        run = original(*a, trace=trace, **kw)
        first_graph.append(seen[0] if seen else float("nan"))
        steps.extend(c.step for c in run.trace.of(LLMCalled) if c.source == "model")
        done = len(first_graph)
        print(f"  {done}/{len(questions)}: {run.timings_ms['total'] / 1000:.1f} s, first graph "
              f"{first_graph[-1]:.1f} s, answer {run.answer!r}", flush=True)
        return run

    engine.retrieve = retrieve  # type: ignore[method-assign]
    report = evaluate(engine, questions, settings, trace_dir=args.traces).to_dict()
    assert len(steps) == len(recorder.results), (len(steps), len(recorder.results))
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))

    per_step: dict[str, dict[str, float]] = {}
    for step, result in zip(steps, recorder.results, strict=True):
        row = per_step.setdefault(step, {"calls": 0, "prompt": 0, "cached": 0, "completion": 0, "seconds": 0.0})
        row["calls"] += 1
        row["prompt"] += result.prompt_tokens
        row["cached"] += result.cached_prompt_tokens or 0
        row["completion"] += result.completion_tokens
        row["seconds"] += result.seconds
    seconds = report["seconds_per_question"]
    graphs = [g for g in first_graph if g == g]
    print(f"\nGeAR, paper prompts, {report['n_questions']} questions, live on llama-server (read order "
          f"{args.read_order}, {args.parallel} slot(s), cache-reuse {args.cache_reuse}); server start "
          f"{server_start:.1f} s")
    print("| | llama-server (this run) | in-process (recorded) |\n| --- | --- | --- |")
    print(f"| seconds per question, p50 | {seconds['p50']:.1f} | {recorded['seconds_per_question']['p50']:.1f} |")
    print(f"| seconds per question, mean | {seconds['mean']:.1f} | {recorded['seconds_per_question']['mean']:.1f} |")
    print(f"| first graph after Ask, p50 | {statistics.median(graphs):.1f} | (≈20, docs/setup.md) |")
    def recall(data: dict[str, Any]) -> str:
        return " / ".join(f"{data['recall'][k]:.1f}" for k in ("5", "10", "15"))

    print(f"| R@5 / R@10 / R@15 | {recall(report)} | {recall(recorded)} |")
    print(f"| EM / F1 | {report['em']:.1f} / {report['f1']:.1f} | {recorded['em']:.1f} / {recorded['f1']:.1f} |")
    print(f"| tokens per question | {report['tokens_per_question']:.0f} | {recorded['tokens_per_question']:.0f} |")
    print(f"| iterations per question | {report['iterations_mean']:.2f} | {recorded['iterations_mean']:.2f} |")
    print("\n| step | model calls | prompt tokens | from the server's cache | read | written | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    total = {"calls": 0, "prompt": 0, "cached": 0, "completion": 0, "seconds": 0.0}
    for step, row in [*sorted(per_step.items()), ("all", total)]:
        if step != "all":
            for key in total:
                total[key] += row[key]
        share = row["cached"] / row["prompt"] if row["prompt"] else 0.0
        print(f"| {step} | {row['calls']:.0f} | {row['prompt']:.0f} | {row['cached']:.0f} ({share:.0%}) | "
              f"{row['prompt'] - row['cached']:.0f} | {row['completion']:.0f} | {row['seconds']:.0f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    model.server.stop()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        out = {"settings": vars(args) | {"index": str(args.index), "json": None, "traces": None},
               "server_start_seconds": server_start, "first_graph_seconds": first_graph, "per_step": per_step,
               "report": report, "load_after": os.getloadavg()}
        args.json.write_text(json.dumps(out, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
