"""What a layout change costs at start: `import gear` and the app's first page load, in this checkout against another
(a reference checkout, e.g. the commit before the change: `git archive COMMIT | tar -x -C /tmp/before`), measured in
the same run, alternating, each in a fresh process.

    python bench/first_load.py REFERENCE_CHECKOUT [--repeat N]

`import gear`: a fresh interpreter importing the front door (the engine loads on first use). First page load: a fresh
interpreter running the app's first page (app.py → the Ask page) with Streamlit's AppTest, from the start of the
process to the page drawn — the imports of app_pages/ and studio/ included — on a data folder holding the walk-through
demo index (copied from this checkout's data folder when built there; else built once, before timing) with the demo
builds off. Output: one line per measure, `name median_s_here median_s_reference ratio` (ratio < 1: this checkout
is faster).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

IMPORT = "import time; t = time.perf_counter(); import gear; print(time.perf_counter() - t)"
PAGE = """
import time
t = time.perf_counter()
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=300).run()
assert not at.exception, at.exception
print(time.perf_counter() - t)
"""


def timed(root: Path, code: str, env: dict[str, str]) -> float:
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{root}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return float(done.stdout.strip().splitlines()[-1])


def data_folder(work: Path) -> Path:
    """A data folder with the walk-through demo index, so the first page opens on a built index."""
    data = work / "data"
    built = HERE / "data" / "indexes" / "walkthrough"
    if (built / "manifest.json").is_file():
        shutil.copytree(built, data / "indexes" / "walkthrough")
    else:
        subprocess.run([sys.executable, "-c", "from studio.core.demos import ensure_demo_index as e; e('walkthrough')"],
                       cwd=HERE, env={**os.environ, "GEAR_STUDIO_DATA": str(data)}, check=True)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", type=Path, help="the checkout to compare with")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    roots = {"here": HERE, "reference": args.reference.resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GEAR_STUDIO_DATA": str(data_folder(Path(tmp))), "GEAR_STUDIO_BUILD_DEMOS": "0",
               "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
        for name, code in (("import_gear", IMPORT), ("first_page_load", PAGE)):
            times: dict[str, list[float]] = {"here": [], "reference": []}
            for root in roots.values():  # once each, untimed: the bytecode and the disk cache warm alike
                timed(root, code, env)
            for _ in range(args.repeat):
                for which, root in roots.items():
                    times[which].append(timed(root, code, {**env, "PYTHONPATH": str(root)}))
            here, ref = statistics.median(times["here"]), statistics.median(times["reference"])
            print(f"{name} {here:.3f} {ref:.3f} {here / ref:.2f}")


if __name__ == "__main__":
    main()
