"""How llama-server's OpenMP workers wait between tokens, and what it does to its writing speed, alone and beside a
busy process (one `python -c "while True: pass"`): the measurement behind gear.llm.llama_server.server_env.

Each setting starts a fresh server with gear's arguments (2 threads, flash attention off), writes 24 tokens of a story
and reads a ≈250-token prompt, and prints the server's own timings. A setting that collapses beside a busy process
takes minutes (unbounded spinning wrote 0.36 tokens/s here): run it on a quiet machine, one setting at a time if need
be.

    .venv/bin/python bench/llm_wait_policy.py [--settings passive,spin1000,spin10000,default] [--busy both|no|yes]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear.llm.llama_server import find_binary  # noqa: E402
from gear.llm.model_files import ensure_model  # noqa: E402

SETTINGS = {"passive": {"OMP_WAIT_POLICY": "PASSIVE"}, "default": {}, "spin100": {"GOMP_SPINCOUNT": "100"},
            "spin1000": {"GOMP_SPINCOUNT": "1000"}, "spin10000": {"GOMP_SPINCOUNT": "10000"}}
PORT = 18098


def ask(url: str, prompt: str, max_tokens: int) -> dict:
    body = {"messages": [{"role": "user", "content": prompt}], "max_tokens": max_tokens, "temperature": 0}
    request = urllib.request.Request(url + "/v1/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request, timeout=900))["timings"]


def measure(name: str, busy: bool) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(SETTINGS[name])
    command = [str(find_binary()), "--model", str(ensure_model()), "--threads", "2", "--threads-batch", "2",
               "--ctx-size", "8192", "--parallel", "1", "--jinja", "--repeat-penalty", "1.0", "--seed", "0",
               "--flash-attn", "off", "--no-webui", "--host", "127.0.0.1", "--port", str(PORT)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    url = f"http://127.0.0.1:{PORT}"
    neighbour = None
    try:
        for _ in range(1200):
            try:
                if json.load(urllib.request.urlopen(url + "/health")).get("status") == "ok":
                    break
            except OSError:
                time.sleep(0.5)
        ask(url, "Hi", 8)
        if busy:
            neighbour = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        written = ask(url, "Write a long story about a cathedral and its bells.", 24)
        facts = " ".join(f"Fact {i}: the cathedral has {i} bells." for i in range(20))
        read = ask(url, facts + " How many?", 1)
        return (f"{name:<10} {'busy' if busy else 'alone':<6} writing {written['predicted_per_second']:6.1f} tok/s   "
                f"reading {read['prompt_per_second']:6.1f} tok/s ({read['prompt_n']} tokens)")
    finally:
        if neighbour is not None:
            neighbour.kill()
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--settings", default="passive,spin1000,spin10000,default")
    parser.add_argument("--busy", choices=("both", "no", "yes"), default="both")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for name in args.settings.split(","):
        for busy in {"both": (False, True), "no": (False,), "yes": (True,)}[args.busy]:
            print(measure(name, busy), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
