"""Re-record the bundled traces (assets/traces/*.json) through today's engine, from the recorded LLM answers only.

Each trace is run again with the settings it recorded, on the demo index its question belongs to, with every LLM
answer replayed from assets/llm_cache (GEAR_LLM=replay: the live model is never asked; a request not recorded fails
the run). A trace is written only when the run's outcome equals the old one: every iteration's query, base list,
beams (their triples, and their scores within 1e-5: the encoder's last float bits vary between CPUs — rounding to 5
decimals flipped 1.0208753 against 1.0208750), fused list and verdict, the final ranking down to the largest cut-off
the run's recall reports (a near tie at rank 24 of musique_wilm_airport orders otherwise on an AVX2 CPU, and no
figure of the run reads that far), and the answer with its EM / F1. What is written is the old trace with its
beam-search events taken from the new run (which add what today's engine records of the search: its candidates,
BeamsSearched.hops): every other event — the settings, the times, who answered each LLM call — stays as the run
recorded it.

    PYTHONPATH=. GEAR_STUDIO_DATA=/tmp/data HF_HUB_OFFLINE=1 python scripts/rerecord_traces.py [NAME ...] [--check]

--check compares and writes nothing. The demo indexes are built into the data folder on first use (MuSiQue: minutes).

A name in NEW that is not bundled yet is recorded from its definition instead (replayed answers only, as above).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear import events as ev  # noqa: E402
from gear import trace as t  # noqa: E402
from gear.config import OLD_NAMES, Settings  # noqa: E402
from studio.core import demos, paths  # noqa: E402

#: bundled traces made here rather than re-recorded: name → the walk-through question and the settings changed.
#: walkthrough_sync_l3: SyncGE with beams of length 3, so a lesson shows hop 1 and hop 2 of Algorithm 1 on the paper's
#: question; without the QA step, whose prompt (over the new ranking) was never recorded — its one LLM call, the
#: sync read, is the recorded one of walkthrough_sync.json
NEW: dict[str, dict[str, Any]] = {
    "walkthrough_sync_l3": {"question_id": "paper_walkthrough", "method": "sync", "beam_length": 3, "answer": False},
}


def outcome(trace: t.Trace) -> dict[str, Any]:
    """What a re-recording must keep: the run's queries, lists, beams, verdicts, ranking and answer."""
    def ids(passages: list[t.PassageView]) -> list[int]:
        return [p.id for p in passages]

    per_iteration = []
    for n in trace.iterations():
        beams = trace.first(ev.BeamsSearched, n)
        fused = trace.first(ev.PassagesFused, n)
        base = trace.first(ev.BaseRetrieved, n)
        verdict = trace.first(ev.Reasoned, n)
        per_iteration.append({
            "query": next(e.query for e in trace.of(ev.IterationStarted, n)),
            "base": ids(base.passages) if base else None,
            "beams": [[b.triple_ids for b in step] for step in beams.steps] if beams else None,
            "beam scores": [[b.score for b in step] for step in beams.steps] if beams else None,
            "fused": ids(fused.passages) if fused else None,
            "verdict": (verdict.answerable, verdict.answer) if verdict else None,
        })
    final = trace.first(ev.FinalRanking)
    answered = trace.first(ev.Answered)
    finished = trace.first(ev.RunFinished)
    deepest = max((int(k) for k in (finished.recall if finished else {}) or {}), default=None)
    return {"iterations": per_iteration, "final": ids(final.passages)[:deepest] if final else None,
            "answer": (answered.answer, answered.em, answered.f1) if answered else None,
            "recall": finished.recall if finished else None}


SCORE_TOLERANCE = 1e-5


def same_outcome(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two outcomes agree: equal in everything, the beams' scores within SCORE_TOLERANCE."""
    def scores(o: dict[str, Any]) -> list[float]:
        return [x for it in o["iterations"] for step in it["beam scores"] or [] for x in step]

    def rest(o: dict[str, Any]) -> dict[str, Any]:
        return {**o, "iterations": [{k: v for k, v in it.items() if k != "beam scores"} for it in o["iterations"]]}

    sa, sb = scores(a), scores(b)
    return rest(a) == rest(b) and len(sa) == len(sb) and all(abs(x - y) <= SCORE_TOLERANCE
                                                             for x, y in zip(sa, sb, strict=True))


def rerecord(path: Path) -> t.Trace:
    from gear.agent.engine import Engine

    old = t.Trace.load(path)
    start = old.first(ev.RunStarted)
    if start is None:
        raise ValueError(f"{path.name}: no run_started event")
    home = demos.demo_of_question(start.question_id)
    if home is None:
        raise ValueError(f"{path.name}: question {start.question_id!r} is in no bundled demo's QA set")
    known = set(Settings.model_fields) | set(OLD_NAMES)  # a trace recorded before a knob was renamed
    recorded = {k: v for k, v in start.settings.items() if k in known and k not in ("llm_bundled_cache", "device")}
    given = {name: value for name, value in recorded.items() if value is not None}
    settings = Settings().with_(**given).with_(llm="replay", llm_cache_dir=str(paths.LLM_CACHE))
    engine = Engine.open(demos.ensure_demo_index(home.name), settings)
    run = engine.retrieve(start.question, k=settings.agent_k, settings=settings, gold=start.gold_passage_ids,
                          question_id=start.question_id, answers=start.answers)
    return portable(run.trace)


def portable(trace: t.Trace) -> t.Trace:
    """The trace with the settings' paths inside the project written relative to it (a bundled trace names no
    machine's folders)."""
    def relative(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(str(ROOT) + "/"):
            return value[len(str(ROOT)) + 1:]
        return value

    events = [dataclasses.replace(e, settings={k: relative(v) for k, v in e.settings.items()})
              if isinstance(e, ev.RunStarted) else e for e in trace.events]
    return t.Trace(events)


def record_new(spec: dict[str, Any]) -> t.Trace:
    from gear.agent.engine import Engine
    from gear.data.questions import load_qa

    changed = {k: v for k, v in spec.items() if k != "question_id"}
    settings = Settings().with_(retriever="hybrid", llm="replay", llm_cache_dir=str(paths.LLM_CACHE), **changed)
    questions, _ = load_qa(demos.DEMOS["walkthrough"].qa)
    question = next(q for q in questions if q.id == spec["question_id"])
    engine = Engine.open(demos.ensure_demo_index("walkthrough"), settings)
    run = engine.retrieve(question.question, k=settings.agent_k, settings=settings, gold=engine.gold_ids(question.gold),
                          question_id=question.id, answers=question.answers)
    return portable(run.trace)


def with_candidates(old: t.Trace, new: t.Trace) -> t.Trace:
    """The old trace with each BeamsSearched replaced by the new run's (the same beams: `outcome` checked it)."""
    searches = iter(new.of(ev.BeamsSearched))
    if len(new.of(ev.BeamsSearched)) != len(old.of(ev.BeamsSearched)):
        raise ValueError("the new run searched a different number of times")
    return t.Trace([next(searches) if isinstance(e, ev.BeamsSearched) else e for e in old.events])


def main(argv: list[str]) -> int:
    check = "--check" in argv
    names = [a for a in argv if not a.startswith("--")]
    files = [paths.BUNDLED_TRACES / f"{n}.json" for n in names] or sorted(paths.BUNDLED_TRACES.glob("*.json"))
    failed = 0
    for name, spec in NEW.items():
        path = paths.BUNDLED_TRACES / f"{name}.json"
        if (name in names or not names) and not path.exists():
            made = record_new(spec)
            print(f"{path.name}: recorded ({len(made.of(ev.LLMCalled))} LLM calls, all replayed)")
            if not check:
                made.save(path)
    files = [p for p in files if p.exists()]
    for path in files:
        new = rerecord(path)
        same = same_outcome(outcome(new), outcome(t.Trace.load(path)))
        beams = new.of(ev.BeamsSearched)
        print(f"{path.name}: outcome {'unchanged' if same else 'CHANGED'}; "
              f"{sum(len(v.candidates) for e in beams for hop in e.hops for v in hop)} candidates recorded")
        if not same:
            failed += 1
            continue
        if not check:
            with_candidates(t.Trace.load(path), new).save(path)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
