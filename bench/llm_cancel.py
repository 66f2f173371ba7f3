"""Cancel, measured: seconds from a Cancel while the model reads a long prompt to the next call's answer,
before and after, and what the smaller batch costs in reading speed — all in one run, each configuration on its own
llama-server (the embedded model, this machine's threads).

- before: the request went on after a Cancel (the client could not stop it while the model read, and closed the
  stream only at the first written token), and llama-server read in batches of 2,048 tokens; emulated by leaving the
  request running with max_tokens 1;
- after: the client hangs up at the Cancel (gear.llm.openai_client) and the server reads in batches of 256 tokens
  (gear.llm.server_profile's CPU choice), or of 128 (`--batch 128`).

Each trial sends a long prompt nobody has read (≈2,700 tokens), cancels it after a set delay, then at once asks a
short question and times its answer; the same short question on the idle server is the reference. Reading speed:
three unread ≈1,500-token prompts with max_tokens 1 per configuration.

    .venv/bin/python bench/llm_cancel.py [--delays 1.0,2.3,3.7,5.1] [--configs before,after,after-128]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gear.llm.base import Message  # noqa: E402
from gear.llm.embedded import server_config  # noqa: E402
from gear.llm.llama_server import EmbeddedServer, ServerConfig  # noqa: E402
from gear.llm.openai_client import OpenAILLM  # noqa: E402
from gear.llm.queue import listening  # noqa: E402


class Cancelled(BaseException):
    """Streamlit's stop, as the client sees it."""


def long_prompt(sentences: int) -> list[Message]:
    tag = uuid.uuid4().hex[:8]  # unread: nothing in the server's cache starts like it
    text = " ".join(f"[{tag}] Passage {i}: Bremen Cathedral is a church in Bremen, Germany, dedicated to St. Peter."
                    for i in range(sentences))
    return [{"role": "user", "content": f"{text}\nWhich saint is the cathedral dedicated to?"}]


def short_question() -> list[Message]:
    return [{"role": "user", "content": f"({uuid.uuid4().hex[:6]}) What is the capital of France? One word."}]


def timed(client: OpenAILLM, messages: list[Message], max_tokens: int) -> tuple[float, int]:
    began = time.perf_counter()
    result = client.complete(messages, max_tokens=max_tokens)
    return time.perf_counter() - began, result.prompt_tokens


def trial(client: OpenAILLM, hang_up: bool, delay: float) -> float:
    """Seconds from the Cancel to the short question's answer."""
    if hang_up:
        started = time.perf_counter()

        def stop_after(_ahead: int) -> None:
            if time.perf_counter() - started >= delay:
                raise Cancelled

        try:
            with listening(stop_after):
                client.complete(long_prompt(220), max_tokens=32)
        except Cancelled:
            pass
    else:  # the request goes on in its thread; the caller leaves after `delay`
        threading.Thread(target=client.complete, args=(long_prompt(220),), kwargs={"max_tokens": 1},
                         daemon=True).start()
        time.sleep(delay)
    began = time.perf_counter()
    client.complete(short_question(), max_tokens=4)
    return time.perf_counter() - began


def measure(name: str, config: ServerConfig, hang_up: bool, delays: list[float]) -> dict[str, object]:
    server = EmbeddedServer(config, Path(tempfile.mkdtemp(prefix=f"gear-cancel-{name}-")))
    try:
        running = server.ensure()
        client = OpenAILLM(config.alias, base_url=running.url, timeout=600, max_retries=1)
        timed(client, short_question(), 4)  # warm
        idle = statistics.median(timed(client, short_question(), 4)[0] for _ in range(3))
        reads = [timed(client, long_prompt(120), 1) for _ in range(3)]
        speed = statistics.median(tokens / seconds for seconds, tokens in reads)
        waits = [trial(client, hang_up, d) for d in delays]
        row = {"config": name, "batch": config.batch, "ubatch": config.ubatch, "hang_up": hang_up,
               "idle_answer_s": idle, "read_tok_s": speed, "cancel_to_answer_s": waits,
               "load": os.getloadavg()[0]}
        print(f"{name}: batch {config.batch}, hang-up {hang_up}: reads {speed:.1f} tok/s; the short question "
              f"alone {idle:.2f} s; Cancel → its answer {' / '.join(f'{w:.1f}' for w in waits)} s "
              f"(median {statistics.median(waits):.1f}); load {row['load']:.1f}", flush=True)
        return row
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--delays", default="1.0,2.3,3.7,5.1")
    parser.add_argument("--configs", default="before,after,after-128")
    args = parser.parse_args()
    delays = [float(d) for d in args.delays.split(",")]
    base = server_config()  # this machine's choice (a CPU build: batch 256)
    configs = {
        "before": (replace(base, batch=2048, ubatch=256), False),
        "after": (replace(base, batch=256, ubatch=256), True),
        "after-128": (replace(base, batch=128, ubatch=128), True),
    }
    print(f"load average before: {os.getloadavg()[0]:.2f}; delays {delays}")
    rows = [measure(name, *configs[name], delays) for name in args.configs.split(",")]
    print("\n| configuration | batch | reads (tok/s) | short question alone (s) | Cancel → next answer (s), median |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        waits = row["cancel_to_answer_s"]
        assert isinstance(waits, list)
        print(f"| {row['config']} | {row['batch']} | {row['read_tok_s']:.1f} | {row['idle_answer_s']:.2f} | "
              f"{statistics.median(waits):.1f} (of {', '.join(f'{w:.1f}' for w in waits)}) |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
