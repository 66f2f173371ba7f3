"""The lesson's beam-search knobs (Engine.replay_beams): how long searching a recorded run's beams again takes once
its index is open, on the walk-through and the MuSiQue demo indexes.

    python bench/replay_beams.py [--repeat 5]

For each bundled run and its demo index (found as `gear replay-beams` finds it: gear.index.home; build the demo
indexes first, e.g. by opening them in the app): the index opened and the
embedder loaded (not timed in the rows below), then the search with the recorded knobs (the reference: Algorithm 1
as the run did it; the first one embeds the candidate sequences, later ones read them from the encoder's cache), then
each lesson knob changed alone. One measurement per line, `name value unit`: the first search with those knobs (cold:
new sequences embedded), the median of the repeats (warm), and the warm time as a ratio of the recorded knobs' warm
time measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from gear.agent.engine import Engine
from gear.config import Settings
from gear.events import RunStarted
from gear.index.home import home_index
from gear.trace import Trace

ROOT = Path(__file__).resolve().parents[1]
RUNS = ("walkthrough", "musique_wilm_airport")
KNOBS = {"recorded": {}, "diversity off": {"diversity": False}, "b = 3": {"width": 3}, "b = 20": {"width": 20},
         "l = 3": {"length": 3}, "gamma = 5": {"gamma": 5.0}, "neighbours = 20": {"max_neighbours": 20}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for stem in RUNS:
        trace = Trace.load(ROOT / "assets" / "traces" / f"{stem}.json")
        start = trace.first(RunStarted)
        index = home_index(start.question_id if start else "")
        if index is None:
            raise SystemExit(f"{stem}: its demo index is not built in the data folder yet")
        started = time.perf_counter()
        engine = Engine.open(index, Settings())
        engine.encoder.encode_cached([trace.question])
        print(f"{stem}.open_and_load_embedder {time.perf_counter() - started:.2f} s")
        reference = 0.0
        for label, knobs in KNOBS.items():
            times = []
            for _ in range(args.repeat + 1):
                started = time.perf_counter()
                engine.replay_beams(trace, 1, **knobs)
                times.append(time.perf_counter() - started)
            warm = statistics.median(times[1:])
            reference = reference or warm
            key = f"{stem}.{label.replace(' ', '_')}"
            print(f"{key}.first {times[0] * 1000:.1f} ms")
            print(f"{key}.warm_median {warm * 1000:.1f} ms")
            print(f"{key}.warm_vs_recorded {warm / reference:.2f} x")


if __name__ == "__main__":
    main()
