"""SyncGE and the GeAR agent driven by a scripted LLM at the boundary: each rule of the loop pinned."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.events import (
    Answered,
    FinalRanking,
    GistUpdated,
    InitialNodes,
    IterationStarted,
    LLMCalled,
    PassagesFused,
    PassagesLinked,
    ProximalTriples,
    QueryRewritten,
    Reasoned,
    TriplesLinked,
    Warned,
)
from gear.llm import LLMResult
from gear.prompts import format_triples
from gear.store.base import triple_text
from gear.store.fusion import rrf
from gear.trace import Trace


def kind_of(prompt: str) -> str:
    if prompt.startswith("Your task is to find facts"):
        return "read"
    if "Next Question:" in prompt and "# Your Task:" in prompt:
        return "rewrite"
    if "Answerable: Yes" in prompt and "# Your reply:" in prompt:
        return "reason"
    if "reading comprehension assistant" in prompt:
        return "qa"
    raise AssertionError(f"unexpected prompt: {prompt[:80]}")


class ScriptedLLM:
    """Answers by prompt kind from per-kind scripts (lists are consumed in order; the last entry repeats)."""

    model = "scripted"

    def __init__(self, **scripts: list[str] | Callable[[str], str]) -> None:
        self.scripts = scripts
        self.calls: list[tuple[str, str]] = []

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        prompt = messages[-1]["content"]
        kind = kind_of(prompt)
        n = sum(1 for k, _ in self.calls if k == kind)
        self.calls.append((kind, prompt))
        script = self.scripts.get(kind, ["nothing"])
        text = script(prompt) if callable(script) else script[min(n, len(script) - 1)]
        return LLMResult(text, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4, seconds=0.01,
                         model=self.model)

    def prompts(self, kind: str) -> list[str]:
        return [p for k, p in self.calls if k == kind]


@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    encoder = make_encoder()
    return Engine.open(tiny_index, Settings(retriever="bm25", prompts="paper"), encoder=encoder)


def run(engine: Engine, llm: ScriptedLLM, question: str, **changes) -> tuple[Trace, object]:
    settings = Settings(retriever="bm25", prompts="paper").with_(**changes)
    engine.set_llm(settings, llm)
    trace = Trace()
    result = engine.retrieve(question, k=4, settings=settings, trace=trace)
    return trace, result


ETNA = '("Mount Etna", "located on", "Sicily")'
SICILY = '("Sicily", "largest island in", "Mediterranean Sea")'


def test_sync_links_each_proximal_triple_to_its_best_index_triple(engine: Engine) -> None:
    llm = ScriptedLLM(read=[f"Facts: {ETNA}"], qa=["Sicily"])
    trace, result = run(engine, llm, "Where is Mount Etna?", expand="sync")
    links = trace.first(TriplesLinked, 1)
    assert links is not None and len(links.links) == 1
    assert links.links[0].linked is not None
    assert links.links[0].linked.spo == ("Mount Etna", "located on", "Sicily")
    assert links.links[0].similarity == pytest.approx(1.0, abs=1e-5)  # identical text, identical vector
    initial = trace.first(InitialNodes, 1)
    assert initial is not None and initial.source == "sync"
    assert [t.spo for t in initial.triples] == [("Mount Etna", "located on", "Sicily")]
    # single step: one read (of the base passages, without memory), no reasoning, one QA call
    assert [k for k, _ in llm.calls] == ["read", "qa"]
    assert "preliminary facts" not in llm.prompts("read")[0]
    final = trace.first(FinalRanking)
    fused = trace.first(PassagesFused, 1)
    assert final is not None and fused is not None
    assert [p.id for p in final.passages] == [p.id for p in fused.passages]
    assert result.answer == "Sicily"


def test_agent_stops_when_the_reasoner_says_answerable(engine: Engine) -> None:
    llm = ScriptedLLM(read=[f"{ETNA}"], reason=["Answerable: Yes\nAnswer: Sicily"], qa=["Sicily"])
    trace, _ = run(engine, llm, "Where is Mount Etna?", expand="gear", max_iterations=4)
    assert trace.iterations() == [1]
    assert llm.prompts("rewrite") == []
    verdict = trace.first(Reasoned, 1)
    assert verdict is not None and verdict.answerable and verdict.answer == "Sicily"


def test_gist_memory_is_the_concatenation_of_every_iteration(engine: Engine) -> None:
    # per iteration two reads: sync (base passages) then gist (fused list)
    llm = ScriptedLLM(read=["nothing useful", ETNA, "nothing useful", SICILY],
                      reason=["Answerable: No\nWhy: need the sea", "Answerable: Yes\nAnswer: Mediterranean"],
                      rewrite=["Next Question: Which sea is Sicily in?"], qa=["Mediterranean Sea"])
    trace, _ = run(engine, llm, "Which sea is the island of Mount Etna in?", expand="gear", max_iterations=4)
    assert trace.iterations() == [1, 2]
    g1, g2 = trace.first(GistUpdated, 1), trace.first(GistUpdated, 2)
    assert g1 is not None and g2 is not None
    assert g1.memory == [["Mount Etna", "located on", "Sicily"]]
    assert g2.memory == [["Mount Etna", "located on", "Sicily"], ["Sicily", "largest island in", "Mediterranean Sea"]]
    reason_prompts = llm.prompts("reason")
    assert format_triples([("Mount Etna", "located on", "Sicily")]) in reason_prompts[0]
    both = format_triples([("Mount Etna", "located on", "Sicily"), ("Sicily", "largest island in",
                                                                      "Mediterranean Sea")])
    assert both in reason_prompts[1]
    # from iteration 2 on, both reads see G(n-1) through the memory variant of the reader prompt
    reads = llm.prompts("read")
    assert "preliminary facts" not in reads[0] and "preliminary facts" not in reads[1]
    assert "preliminary facts" in reads[2] and format_triples([("Mount Etna", "located on", "Sicily")]) in reads[2]
    roles = [(e.iteration, e.role) for e in trace.of(ProximalTriples)]
    assert roles == [(1, "sync"), (1, "gist"), (2, "sync"), (2, "gist")]


def test_rewrite_sees_question_memory_and_reason_and_drives_the_next_retrieval(engine: Engine) -> None:
    llm = ScriptedLLM(read=[ETNA], reason=["Answerable: No\nWhy: the sea around Sicily is unknown",
                                           "Answerable: Yes\nAnswer: x"],
                      rewrite=["Next Question: Which sea surrounds Sicily?"], qa=["x"])
    trace, _ = run(engine, llm, "Which sea is the island of Mount Etna in?", expand="gear")
    prompt = llm.prompts("rewrite")[0]
    assert "Question: Which sea is the island of Mount Etna in?" in prompt
    assert "Reason: the sea around Sicily is unknown" in prompt
    assert format_triples([("Mount Etna", "located on", "Sicily")]) in prompt
    rewritten = trace.first(QueryRewritten, 1)
    assert rewritten is not None and rewritten.query == "Which sea surrounds Sicily?"
    second = trace.first(IterationStarted, 2)
    assert second is not None and second.query == "Which sea surrounds Sicily?"


def test_max_iterations_bounds_the_loop(engine: Engine) -> None:
    llm = ScriptedLLM(read=[ETNA], reason=["Answerable: No\nWhy: unknown"], rewrite=["Next Question: What else?"],
                      qa=["?"])
    trace, _ = run(engine, llm, "An unanswerable question about Paris?", expand="gear", max_iterations=3)
    assert trace.iterations() == [1, 2, 3]
    assert len(llm.prompts("reason")) == 3
    assert len(llm.prompts("rewrite")) == 2  # no rewrite after the last iteration


def test_final_ranking_is_rrf_of_passage_links_and_iteration_lists(engine: Engine) -> None:
    llm = ScriptedLLM(read=["none", ETNA, "none", SICILY],
                      reason=["Answerable: No\nWhy: more", "Answerable: Yes\nAnswer: y"],
                      rewrite=["Next Question: Sicily sea?"], qa=["y"])
    trace, result = run(engine, llm, "Which sea is the island of Mount Etna in?", expand="gear")
    backend = engine.backend
    memory = [("Mount Etna", "located on", "Sicily"), ("Sicily", "largest island in", "Mediterranean Sea")]
    links = []
    for t in memory:  # passageLink(t) = RRF(h^k(t, C), passages of h^k(t, T)), k = passage_link_k = 5
        text = triple_text(*t)
        passages = [s.id for s in backend.search_passages([text], 5, "bm25")[0]]
        triples = [s.id for s in backend.search_triples([text], 5, "bm25")[0]]
        from_triples = list(dict.fromkeys(backend.passage_of(x) for x in triples))
        links.append([s.id for s in rrf([passages, from_triples])])
    iteration_lists = [[p.id for p in e.passages] for e in trace.of(PassagesFused)]
    expected = [s.id for s in rrf(links + iteration_lists)]
    assert result.ids == expected
    linked = trace.first(PassagesLinked)
    assert linked is not None and [[p.id for p in lv.passages] for lv in linked.links] == links


def test_malformed_llm_output_yields_warnings_not_crashes(engine: Engine) -> None:
    llm = ScriptedLLM(read=["I cannot help with that ((( [[["], reason=["maybe?"], rewrite=[""], qa=[""])
    trace, result = run(engine, llm, "Where is Paris?", expand="gear", max_iterations=2)
    assert trace.iterations() == [1, 2]
    warnings = [w.message for w in trace.of(Warned)]
    assert any("reader" in w for w in warnings)
    assert any("reasoner" in w for w in warnings)
    assert any("rewriter" in w for w in warnings)
    second = trace.first(IterationStarted, 2)
    assert second is not None and second.query == "Where is Paris?"  # empty rewrite falls back to the question
    assert result.ids  # retrieval still produced a ranking


def test_tokens_are_counted_per_call_and_the_trace_round_trips(engine: Engine) -> None:
    llm = ScriptedLLM(read=[ETNA], reason=["Answerable: Yes\nAnswer: Sicily"], qa=["Sicily"])
    trace, _ = run(engine, llm, "Where is Mount Etna?", expand="gear")
    calls = trace.of(LLMCalled)
    assert [c.step for c in calls] == ["read (sync)", "read (gist)", "reason", "qa"]
    assert all(c.prompt_tokens > 0 for c in calls)
    again = Trace.from_json(trace.to_json())
    assert again.to_dict() == trace.to_dict()
    answered = again.first(Answered)
    assert answered is not None and answered.answer == "Sicily"


def test_api_keys_never_reach_the_trace(engine: Engine) -> None:
    llm = ScriptedLLM(read=[ETNA], reason=["Answerable: Yes\nAnswer: Sicily"], qa=["Sicily"])
    settings = Settings(retriever="bm25", expand="gear", prompts="paper", OPENAI_API_KEY="sk-secret-123")
    assert settings.llm_api_key is not None and settings.llm_api_key.get_secret_value() == "sk-secret-123"
    engine.set_llm(settings, llm)
    trace = Trace()
    engine.retrieve("Where is Mount Etna?", k=4, settings=settings, trace=trace)
    assert "sk-secret-123" not in trace.to_json()


def test_each_tripleLink_pair_reports_its_own_similarity(engine: Engine) -> None:
    # two proximal triples that link to the same index triple must not share one similarity
    llm = ScriptedLLM(read=[f'{ETNA}\n("Mount Etna", "located on", "the island of Sicily")'], qa=["Sicily"])
    trace, _ = run(engine, llm, "Where is Mount Etna?", expand="sync")
    links = trace.first(TriplesLinked, 1)
    assert links is not None and len(links.links) == 2
    assert links.links[0].linked is not None and links.links[1].linked is not None
    assert links.links[0].linked.id == links.links[1].linked.id
    assert links.links[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert links.links[1].similarity < 0.99


def test_the_engine_keeps_recent_llm_configurations_only(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    import gear.agent.engine

    monkeypatch.setattr(gear.agent.engine, "MAX_LLMS", 3)

    def at(port: int) -> Settings:
        return Settings(llm="openai", llm_base_url=f"http://127.0.0.1:{port}/v1", llm_model="m", llm_api_key="k")

    first = engine.llm(at(9000))
    kept = engine.llm(at(9001))
    for port in range(9002, 9012):  # URLs typed one after another into the sidebar
        engine.llm(at(port))
        engine.llm(at(9001))  # one configuration in constant use
    assert len(engine._llms) == 3
    assert engine.llm(at(9001)) is kept
    assert engine.llm(at(9000)) is not first  # the oldest unused one was dropped, and is made again when asked for
