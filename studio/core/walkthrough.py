"""The walk-through's recording: a question of the walk-through demo run and saved as a bundled trace under
assets/traces/ (`python -m studio.core.walkthrough METHOD [LLM] [PROMPTS]`; scripts/rerecord_traces.py records them
all)."""

from __future__ import annotations

from pathlib import Path

from studio.core.demos import DEMOS, ensure_demo_index
from studio.core.paths import BUNDLED_TRACES, LLM_CACHE


def record_walkthrough_trace(method: str = "gear", out: Path | None = None, llm: str = "replay",
                             prompts: str | None = None, question_id: str = "paper_walkthrough") -> Path:
    """Run a walk-through question on the walkthrough demo and save the trace into assets/traces/.

    llm "replay": the answers come from assets/llm_cache; "record": the live model answers and every answer is
    recorded there (so the trace replays on any machine). `prompts` picks the profile (None: the default, small for
    the embedded model). "none"/"naive" need no LLM. Names: walkthrough.json for GeAR with the default profile,
    walkthrough_<method>[_<profile>].json otherwise; the 3-hop question's get "_3hop".
    """
    from gear import methods
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa

    directory = ensure_demo_index("walkthrough")
    questions, _ = load_qa(DEMOS["walkthrough"].qa)
    question = next(q for q in questions if q.id == question_id)
    settings = Settings().with_(retriever="hybrid", method=method, llm=llm, llm_cache_dir=LLM_CACHE,
                                **({"prompts": prompts} if prompts is not None else {}))
    engine = Engine.open(directory, settings)
    run = engine.retrieve(question.question, k=methods.DEPTH, settings=settings,  # as the app runs it
                          gold=engine.gold_ids(question.gold), question_id=question.id, answers=question.answers)
    stem = "walkthrough" + ("" if question_id == "paper_walkthrough" else "_3hop")
    if method == "gear" and prompts is None and question_id == "paper_walkthrough":
        name = f"{stem}.json"
    else:
        name = f"{stem}_{method}" + (f"_{prompts}" if prompts else "") + ".json"
    path = out or BUNDLED_TRACES / name
    run.trace.save(path)
    return path


if __name__ == "__main__":  # python -m studio.core.walkthrough METHOD [LLM] [PROMPTS]
    import sys

    args = sys.argv[1:] + [None] * 3
    print(record_walkthrough_trace(args[0] or "gear", llm=args[1] or "replay", prompts=args[2]))
