"""Kill `gear index` mid-extraction (a real subprocess, SIGKILL) and resume it.

The entry point below is the real `gear` CLI with two substitutions selected by environment variables: the LLM is a
scripted, deterministic extractor (GEAR_TEST_LLM=scripted) that logs every call it completes, and the embedder is the
hash-based FakeEncoder. The test shows that
- the kill leaves the previous index untouched (the journal is beside it, the index is only swapped in at the end);
- the resumed run makes exactly the LLM calls that were not journaled (none repeated, none lost);
- the resumed index holds exactly the triples of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gear.extract.runner import JOURNAL
from gear.index import Manifest, verify_index
from gear.index.update import saved_passages

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

ENTRY = f"""
import hashlib, json, os, sys, time
sys.path.insert(0, {str(REPO)!r})
import gear.embed, gear.extract.bridge
from gear.llm.base import LLMResult
from tests.conftest import FakeEncoder


class ScriptedLLM:
    model = "scripted-extractor"

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None):
        prompt = messages[-1]["content"]
        title = prompt.split("```\\n")[-1].split("\\n", 1)[0]
        time.sleep(float(os.environ.get("GEAR_TEST_LLM_DELAY", "0.25")))
        digest = hashlib.sha256(prompt.encode()).hexdigest()[:8]
        answer = {{"named_entities": [title, "Europe"],
                   "triples": [[title, "fingerprint", digest], [title, "located in", "Europe"], [title, "", "bad"]]}}
        with open(os.environ["GEAR_TEST_CALL_LOG"], "a", encoding="utf-8") as log:
            log.write(title + "\\n")
            log.flush()
            os.fsync(log.fileno())
        return LLMResult(json.dumps(answer), 100, 20, 0.25, self.model)


if os.environ.get("GEAR_TEST_LLM") == "scripted":
    gear.extract.bridge.llm_from_settings = lambda settings: ScriptedLLM()
gear.embed.Encoder = lambda name, **kwargs: FakeEncoder(name=name)

from gear.cli import app

app(sys.argv[1:])
"""

N_PASSAGES = 14


def _corpus(path: Path, n: int) -> Path:
    docs = [{"title": f"Cathedral {i}", "text": f"Cathedral {i} is a church in city {i} of Europe."} for i in range(n)]
    path.write_text(json.dumps(docs), encoding="utf-8")
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _journal_titles(work_dir: Path) -> list[str]:
    return [json.loads(line)["title"] for line in _lines(work_dir / JOURNAL)]


def _triples(index_dir: Path) -> list[tuple[str, str, str, int]]:
    _, _, spo, owner = saved_passages(index_dir)
    return [(*t, int(pid)) for t, pid in zip(spo, owner, strict=True)]


def _env(tmp_path: Path, log: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEAR_")}
    env.update({"GEAR_TEST_LLM": "scripted", "GEAR_TEST_CALL_LOG": str(log), "PYTHONPATH": str(REPO),
                "COLUMNS": "200"})
    return env


def _start(tmp_path: Path, log: Path, *args: str) -> subprocess.Popen[bytes]:
    entry = tmp_path / "gear_entry.py"
    entry.write_text(ENTRY, encoding="utf-8")
    return subprocess.Popen([sys.executable, str(entry), *args], cwd=tmp_path, env=_env(tmp_path, log),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def _run(tmp_path: Path, log: Path, *args: str) -> str:
    proc = _start(tmp_path, log, *args)
    output, _ = proc.communicate(timeout=240)
    text = output.decode("utf-8", errors="replace")
    assert proc.returncode == 0, text
    return text


def test_killed_extraction_resumes_with_exactly_the_remaining_calls(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus.json", N_PASSAGES)

    # 1. the reference: one uninterrupted run
    ref_log = tmp_path / "calls_ref.log"
    _run(tmp_path, ref_log, "index", str(corpus), "--out", "ref")
    assert sorted(_lines(ref_log)) == sorted(f"Cathedral {i}" for i in range(N_PASSAGES))
    reference = _triples(tmp_path / "ref")
    assert len(reference) == 2 * N_PASSAGES

    # 2. an existing index at the target, built from a smaller corpus, must survive the kill
    small = _corpus(tmp_path / "small.json", 3)
    _run(tmp_path, tmp_path / "calls_small.log", "index", str(small), "--out", "idx", "--work-dir", "small.extract")
    before = Manifest.read(tmp_path / "idx")

    # 3. extract the full corpus into it and SIGKILL the process mid-extraction
    log = tmp_path / "calls.log"
    work = tmp_path / "idx.extract"
    proc = _start(tmp_path, log, "index", str(corpus), "--out", "idx")
    deadline = time.monotonic() + 120
    while len(_lines(log)) < 5:
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        assert time.monotonic() < deadline, "the extraction never started"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    completed_before_kill = _lines(log)
    journaled = _journal_titles(work)
    assert 4 <= len(journaled) < N_PASSAGES
    assert len(journaled) == len(set(journaled))
    # every journaled passage was a completed call; at most the one call in flight at the kill was not journaled
    assert set(journaled) <= set(completed_before_kill)
    assert len(completed_before_kill) - len(journaled) <= 1
    assert Manifest.read(tmp_path / "idx") == before and verify_index(tmp_path / "idx") == []

    # 4. resume: exactly the passages that are not in the journal are sent to the LLM, once each
    output = _run(tmp_path, log, "index", str(corpus), "--out", "idx")
    resumed_calls = _lines(log)[len(completed_before_kill):]
    assert sorted(resumed_calls) == sorted(f"Cathedral {i}" for i in range(N_PASSAGES) if f"Cathedral {i}"
                                           not in set(journaled))
    assert len(resumed_calls) == N_PASSAGES - len(journaled)
    assert f"{N_PASSAGES - len(journaled)} LLM calls, {len(journaled)} passages reused" in " ".join(output.split())
    print(f"\nkilled after {len(completed_before_kill)} completed calls ({len(journaled)} journaled); "
          f"resume made {len(resumed_calls)} calls for {N_PASSAGES} passages")

    # 5. same triples as the uninterrupted run, in the same order; a complete, intact index
    assert _triples(tmp_path / "idx") == reference
    assert verify_index(tmp_path / "idx") == []
    manifest = Manifest.read(tmp_path / "idx")
    assert manifest.n_passages == N_PASSAGES and manifest.extraction["extracted"] == N_PASSAGES
    assert manifest.extraction["dropped"]["malformed"] == N_PASSAGES
    assert len(_journal_titles(work)) == N_PASSAGES

    # 6. a third run is free
    _run(tmp_path, log, "index", str(corpus), "--out", "idx")
    assert len(_lines(log)) == len(completed_before_kill) + len(resumed_calls)
