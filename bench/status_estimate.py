"""The live status line's time estimate against what each LLM step then took: one question the recordings do
not hold, run live on the configured model, with gear.agent.progress.RunProgress listening as the app's status line
does.

For every LLM call it prints the line shown before the model started ("Iteration 2 of up to 4 · gist read · the model
is reading 1,300 tokens (≈ 15 s)"), the estimate, the model's measured seconds (LLMCalled) and the wall time from the
announcement to the answer, the prompt tokens the line took as already read by the server beside those the server
reported taking from its cache, and the speed learned so far. The reference beside each estimate is the measured time of
the very same call.

    GEAR_LLM=local HF_HUB_OFFLINE=1 .venv/bin/python bench/status_estimate.py data/indexes/musique \
        assets/musique/musique_dev50.json [--question-id ID] [--max-iterations 4]

Without --question-id it takes the first question of the QA set whose first request is not recorded
(gear.agent.recorded), so the run is live from its first step.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from gear.agent.engine import Engine
from gear.agent.progress import RunProgress, step_name
from gear.agent.recorded import replays_at_once
from gear.config import Settings
from gear.data.questions import load_qa
from gear.events import LLMAsking, LLMCalled
from gear.llm.base import answered_at_once
from gear.llm.speed import MODEL_SPEED
from gear.trace import Trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("qa", type=Path)
    parser.add_argument("--question-id", default="")
    parser.add_argument("--max-iterations", type=int, default=4)
    args = parser.parse_args()
    settings = Settings().with_(method="gear", max_iterations=args.max_iterations)
    engine = Engine.open(args.index, settings)
    questions, _ = load_qa(args.qa)
    if args.question_id:
        question = next(q for q in questions if q.id == args.question_id)
    else:
        question = next(q for q in questions if replays_at_once(engine, q.question, settings) is False)
    print(f"question {question.id}: {question.question}")
    model = engine.llm(settings)
    print(f"llm {settings.llm}; speed before the run: {MODEL_SPEED.speed(model.model)}")
    server_cached: list[int | None] = []

    class Counting:
        """The run's LLM, keeping the cached prompt tokens each answer reports (LLMCalled does not carry them)."""

        def __init__(self) -> None:
            self.model = model.model

        def answers_at_once(self, messages, json_schema, max_tokens):  # type: ignore[no-untyped-def]
            return answered_at_once(model, messages, json_schema, max_tokens)  # the memo inside, as the app asks

        def complete(self, messages, **kwargs):  # type: ignore[no-untyped-def]
            result = model.complete(messages, **kwargs)
            server_cached.append(result.cached_prompt_tokens)
            return result

    engine.set_llm(settings, Counting())  # type: ignore[arg-type]
    progress = RunProgress()
    rows: list[dict] = []
    pending: dict = {}

    def listen(event) -> None:
        progress.update(event)
        if isinstance(event, LLMAsking):
            pending.update(line=progress.line(), estimate=progress.estimate, at=time.perf_counter(),
                           asked=event.prompt_tokens, shown=MODEL_SPEED.prompt_tokens(event),
                           read_before=MODEL_SPEED.cached_tokens(event))
        elif isinstance(event, LLMCalled) and pending:
            rows.append({**pending, "step": step_name(event.step), "iteration": event.iteration,
                         "seconds": event.seconds, "wall": time.perf_counter() - pending["at"],
                         "prompt": event.prompt_tokens, "written": event.completion_tokens, "source": event.source,
                         "speed": MODEL_SPEED.speed(event.model), "server_cached": server_cached[-1]})
            pending.clear()

    trace = Trace()
    trace.subscribe(listen)
    started = time.perf_counter()
    run = engine.retrieve(question.question, k=settings.agent_k, settings=settings,
                          gold=engine.gold_ids(question.gold), answers=question.answers, trace=trace)
    total = time.perf_counter() - started
    print()
    print("| it. | step | prompt tokens shown / counted | already read: shown / server | written | estimate s "
          "| model s | wall s | estimate/model |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        ratio = r["estimate"] / r["seconds"] if r["seconds"] else float("nan")
        cached = "–" if r["server_cached"] is None else f"{r['server_cached']:,}"
        print(f"| {r['iteration']} | {r['step']} ({r['source']}) | {r['shown']:,} / {r['prompt']:,} | "
              f"{r['read_before']:,} / {cached} | {r['written']} | {r['estimate']:.1f} | {r['seconds']:.1f} | "
              f"{r['wall']:.1f} | {ratio:.2f} |")
    print()
    for r in rows:
        print(f"line: {r['line']}")
    live = [r for r in rows if r["source"] == "model"]
    if live:
        est, real = sum(r["estimate"] for r in live), sum(r["seconds"] for r in live)
        error = sum(abs(r["estimate"] - r["seconds"]) for r in live) / len(live)
        print(f"\nlive calls {len(live)}; estimates sum {est:.1f} s, measured sum {real:.1f} s, "
              f"ratio {est / real:.2f}; mean |error| {error:.1f} s")
    print(f"speed after the run: {MODEL_SPEED.speed(engine.llm(settings).model)}")
    print(f"run {total:.1f} s, {len(run.trace.iterations())} iterations, answer {run.answer!r} "
          f"(gold {' / '.join(question.answers)})")


if __name__ == "__main__":
    main()
