"""The GeAR agent end to end with the real embedded LLM (llama-server, started by gear) and the real encoder on the
walk-through corpus.

CI sets GEAR_REQUIRE_LOCAL_LLM=1, so a missing model fails instead of skipping.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.corpus import load_corpus
from gear.data.openie import align_openie, load_openie
from gear.events import BeamsSearched, GistUpdated, LLMCalled, ProximalTriples, Reasoned, TriplesLinked
from gear.index import build_index
from gear.trace import Trace

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "walkthrough"
QUESTION = ("When did the location of the basilica which is named for the same saint that the Bremen Cathedral is "
            "named for become a country?")

pytestmark = [pytest.mark.slow, pytest.mark.llm]


def _require_model() -> None:
    from gear.llm.llama_server import llama_server_available

    if llama_server_available():
        return
    if os.environ.get("GEAR_REQUIRE_LOCAL_LLM") == "1":
        pytest.fail("llama.cpp's llama-server is not built but GEAR_REQUIRE_LOCAL_LLM=1 (run make llm)")
    pytest.skip("the embedded local LLM is not installed (make llm)")


def test_gear_agent_runs_end_to_end_with_the_local_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_model()
    monkeypatch.setenv("GEAR_CACHE_DIR", str(tmp_path / "gear-cache"))  # a llama-server of this test's own
    from gear.embed import Encoder

    docs, report = load_corpus(ASSETS / "walkthrough_corpus.json")
    oie, _ = load_openie(ASSETS / "openie_walkthrough_qwen2.5-coder-1.5b.json")
    encoder = Encoder("all-MiniLM-L6-v2")
    build_index(docs, align_openie(docs, oie, report), tmp_path / "index", encoder)
    settings = Settings(llm="local", expand="gear", max_iterations=2, retriever="hybrid", prompts="small")
    engine = Engine.open(tmp_path / "index", settings, encoder=encoder)
    trace = Trace()
    try:
        run = engine.retrieve(QUESTION, settings=settings, trace=trace)
    finally:
        engine.llm(settings).inner.server.stop()  # type: ignore[attr-defined]  # MemoLLM → EmbeddedLLM

    reads = trace.of(ProximalTriples)
    assert reads and any(r.triples for r in reads), "the reader produced no triples at all"
    assert trace.of(TriplesLinked) and trace.of(BeamsSearched) and trace.of(GistUpdated) and trace.of(Reasoned)
    calls = trace.of(LLMCalled)
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)
    assert all(c.source in ("model", "memo") for c in calls) and any(c.source == "model" for c in calls)
    assert run.trace.first(Reasoned) is not None and trace.events[0].settings["prompts"] == "small"
    titles = [p.title for p in engine.backend.passages(run.ids[:10])]
    assert "Bremen Cathedral" in titles
    prompt, completion = trace.tokens()
    print(f"\nlocal agent: {len(trace.iterations())} iteration(s), {len(calls)} LLM calls, {prompt} prompt + "
          f"{completion} completion tokens, answer {run.answer!r}, {run.timings_ms['total'] / 1000:.0f} s")
