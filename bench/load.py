"""Many people on one GeAR Studio: concurrent browser sessions (Playwright, Debian's Chromium) against one app
server on 127.0.0.1 over the walk-through demo, as `make run` serves it (default LLM: recorded, else the embedded
model: the llama-server each app server starts on its first live call, in a cache folder of its own).

    python bench/load.py recorded [--sessions 4,8]       # recorded questions: identical traces, wall times
    python bench/load.py live [--iterations 1]           # 3 new questions on the live model: alone, then together

recorded: the two recorded walk-through questions (2-hop and 3-hop), first each alone in one session (the
reference), then N sessions at once, alternating the two questions; every session's downloaded trace must equal its
question's reference after `tests.e2e.sessions.normalise` (times and answer origins dropped), and no model call may
happen. live: three questions nobody recorded, each alone in a fresh server (own empty answer cache), then the three
at once in another fresh server (so neither the process memo nor the cache can answer); the note compares each one's
wall time together with its time alone, lists the queue places each session was shown, and checks the traces
(greedy decoding: together and alone must agree). Run it on a quiet machine: model time is the measurement.
Output: one line per measurement, `name value unit`, the reference beside it.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.sessions import SessionResult, normalise, run, studio_server  # noqa: E402

RECORDED = [
    "When did the location of the basilica which is named for the same saint that the Bremen Cathedral is named "
    "for become a country?",
    "What date did the Governor of the city where the basilica that is named after the same person as the Bremen "
    "Cathedral and the head of the catholic religion is located end?",
]
LIVE = [
    "Which saint is the Bremen Cathedral dedicated to?",
    "Who is Albi Cathedral dedicated to?",
    "Lund Cathedral is the seat of the bishop of which diocese?",
]
AS_SHIPPED = {"GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "walkthrough", "GEAR_LLM": "",
              "GEAR_LLM_CACHE_DIR": "", "GEAR_PROMPTS": "", "GEAR_LLM_BASE_URL": "", "OPENAI_API_KEY": ""}


def demo_data(root: Path) -> Path:
    """A data directory holding the walk-through demo index (copied when built here, else built)."""
    from studio.core import demos, paths

    data = root / "data"
    if demos.is_built("walkthrough"):
        shutil.copytree(paths.index_dir("walkthrough"), data / "indexes" / "walkthrough")
        return data
    import os

    os.environ["GEAR_STUDIO_DATA"] = str(data)
    demos.ensure_demo_index("walkthrough")
    del os.environ["GEAR_STUDIO_DATA"]
    return data


def check(results: list[SessionResult], label: str) -> None:
    for r in results:
        if r.errors:
            raise SystemExit(f"{label}: session {r.session} failed: {'; '.join(r.errors)}")


def times(results: list[SessionResult]) -> str:
    s = [r.seconds for r in results]
    return f"p50 {statistics.median(s):.1f} s max {max(s):.1f} s"


def recorded(sessions: list[int], work: Path) -> None:
    data = demo_data(work / "recorded")
    with studio_server(data, AS_SHIPPED, work / "recorded.log") as url:
        alone = run(url, RECORDED, work / "alone", together=False)
        check(alone, "alone")
        reference = {r.question: normalise(r.trace) for r in alone}
        for r in alone:
            print(f"alone q{RECORDED.index(r.question)} {r.seconds:.1f} s events {len(r.trace['events'])} "
                  f"llm {r.llm_sources()}")
        for n in sessions:
            questions = [RECORDED[i % len(RECORDED)] for i in range(n)]
            started = time.perf_counter()
            together = run(url, questions, work / f"together{n}")
            wall = time.perf_counter() - started
            check(together, f"{n} sessions")
            same = sum(normalise(r.trace) == reference[r.question] for r in together)
            models = sum(r.llm_sources().get("model", 0) for r in together)
            print(f"sessions {n} identical_traces {same}/{n} model_calls {models} per-session {times(together)} "
                  f"all-done {wall:.1f} s ref alone {times(alone)}")
            if same != n or models:
                raise SystemExit(f"{n} sessions: {n - same} traces differ from a single session's")


def live(iterations: int, work: Path) -> None:
    env = {**AS_SHIPPED, "GEAR_MAX_ITERATIONS": str(iterations)}
    alone: list[SessionResult] = []
    for n, question in enumerate(LIVE):
        data = demo_data(work / f"alone{n}")
        # each app server starts its own llama-server (own cache folder): no prompt cache carried over, nobody else's
        with studio_server(data, {**env, "GEAR_CACHE_DIR": str(work / f"cache-alone{n}")},
                           work / f"alone{n}.log") as url:
            result = run(url, [question], work / f"alone{n}", together=False)[0]
        check([result], "alone")
        alone.append(result)
    data = demo_data(work / "together")
    with studio_server(data, {**env, "GEAR_CACHE_DIR": str(work / "cache-together")}, work / "together.log") as url:
        together = run(url, LIVE, work / "together")
    check(together, "together")
    for a, t in zip(alone, together, strict=True):
        # each server records into its own fresh cache (so nothing is answered from another run): only that differs
        ignore = ["llm_cache_dir"]
        same = normalise(a.trace, ignore_settings=ignore) == normalise(t.trace, ignore_settings=ignore)
        print(f"live q{LIVE.index(a.question)} together {t.seconds:.1f} s ref alone "
              f"{a.seconds:.1f} s ratio {t.seconds / a.seconds:.2f}x model_calls {t.llm_sources().get('model', 0)} "
              f"same_trace {same} waits_seen {t.waits_seen or ['none']}")
    print(f"live all three together done after {max(t.seconds for t in together):.1f} s ref sum alone "
          f"{sum(a.seconds for a in alone):.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["recorded", "live"])
    ap.add_argument("--sessions", default="4,8")
    ap.add_argument("--iterations", type=int, default=1, help="GEAR_MAX_ITERATIONS for the live questions")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (traces, logs)")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gear_load_"))
    try:
        if args.mode == "recorded":
            recorded([int(n) for n in args.sessions.split(",")], work)
        else:
            live(args.iterations, work)
    finally:
        if args.keep:
            print(f"work directory kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
