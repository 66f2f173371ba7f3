"""Re-record the bundled traces (assets/traces/*.json) through today's engine, from the recorded LLM answers only.

Each trace is run again with the settings it recorded, on the demo index its question belongs to, with every LLM
answer replayed from assets/llm_cache (GEAR_LLM=replay: the live model is never asked; a request not recorded fails
the run). A trace is written only when the run's outcome equals the old one: every iteration's query, base list,
beams (scores to 5 decimals: the encoder's last float bits vary between machines), fused list and verdict, the
final ranking and the answer with its EM / F1. What changes is what today's engine records besides (e.g. the beam
search's candidates, BeamsSearched.hops).

    PYTHONPATH=. GEAR_STUDIO_DATA=/tmp/data HF_HUB_OFFLINE=1 python scripts/rerecord_traces.py [NAME ...] [--check]

--check compares and writes nothing. The demo indexes are built into the data folder on first use (MuSiQue: minutes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear import trace as t  # noqa: E402
from gear.config import Settings  # noqa: E402
from studio import demo  # noqa: E402


def outcome(trace: t.Trace) -> dict[str, Any]:
    """What a re-recording must keep: the run's queries, lists, beams, verdicts, ranking and answer."""
    def ids(passages: list[t.PassageView]) -> list[int]:
        return [p.id for p in passages]

    per_iteration = []
    for n in trace.iterations():
        beams = trace.first(t.BeamsSearched, n)
        fused = trace.first(t.PassagesFused, n)
        base = trace.first(t.BaseRetrieved, n)
        verdict = trace.first(t.Reasoned, n)
        per_iteration.append({
            "query": next(e.query for e in trace.of(t.IterationStarted, n)),
            "base": ids(base.passages) if base else None,
            "beams": [[(b.triple_ids, round(b.score, 5)) for b in step] for step in beams.steps] if beams else None,
            "fused": ids(fused.passages) if fused else None,
            "verdict": (verdict.answerable, verdict.answer) if verdict else None,
        })
    final = trace.first(t.FinalRanking)
    answered = trace.first(t.Answered)
    finished = trace.first(t.RunFinished)
    return {"iterations": per_iteration, "final": ids(final.passages) if final else None,
            "answer": (answered.answer, answered.em, answered.f1) if answered else None,
            "recall": finished.recall if finished else None}


def rerecord(path: Path) -> t.Trace:
    from gear.agent.engine import Engine

    old = t.Trace.load(path)
    start = old.first(t.RunStarted)
    if start is None:
        raise ValueError(f"{path.name}: no run_started event")
    home = demo.demo_of_question(start.question_id)
    if home is None:
        raise ValueError(f"{path.name}: question {start.question_id!r} is in no bundled demo's QA set")
    known = set(Settings.model_fields)
    recorded = {k: v for k, v in start.settings.items() if k in known and k not in ("llm_bundled_cache", "device")}
    settings = Settings().with_(**recorded).with_(llm="replay", llm_cache_dir=str(demo.LLM_CACHE), device="cpu")
    engine = Engine.open(demo.ensure_demo_index(home.name), settings)
    run = engine.retrieve(start.question, k=settings.agent_k, settings=settings, gold=start.gold_passage_ids,
                          question_id=start.question_id, answers=start.answers)
    return run.trace


def main(argv: list[str]) -> int:
    check = "--check" in argv
    names = [a for a in argv if not a.startswith("--")]
    paths = [demo.BUNDLED_TRACES / f"{n}.json" for n in names] or sorted(demo.BUNDLED_TRACES.glob("*.json"))
    failed = 0
    for path in paths:
        new = rerecord(path)
        same = outcome(new) == outcome(t.Trace.load(path))
        beams = new.of(t.BeamsSearched)
        print(f"{path.name}: outcome {'unchanged' if same else 'CHANGED'}; "
              f"{sum(len(v.candidates) for e in beams for hop in e.hops for v in hop)} candidates recorded")
        if not same:
            failed += 1
            continue
        if not check:
            new.save(path)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
