"""The small-model profile and the agent's guards, with a scripted LLM at the boundary: schema-constrained requests,
the grounded verdict, the repeated-query rule, the memo over identical iterations and streamed text."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import pytest

from gear.agent.checks import NOT_GROUNDED, grounding_problem, is_repeat
from gear.agent.engine import Engine
from gear.config import Settings
from gear.events import LLMCalled, LLMText, QueryRewritten, Reasoned, Warned
from gear.llm import LLMResult, MemoLLM
from gear.parsing import Verdict
from gear.prompts import small
from gear.trace import Trace
from tests.scripted_llm import prompt_kind

ETNA = ["Mount Etna", "located on", "Sicily"]
SICILY = ["Sicily", "largest island in", "Mediterranean Sea"]


class SmallLLM:
    """Answers by step from per-step scripts (the last entry repeats); records every request with its schema."""

    model = "scripted-small"

    def __init__(self, **scripts: list[str] | Callable[[str], str]) -> None:
        self.scripts = scripts
        self.calls: list[tuple[str, str, dict | None]] = []

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        prompt = messages[-1]["content"]
        kind = prompt_kind(prompt)
        n = sum(1 for k, _, _ in self.calls if k == kind)
        self.calls.append((kind, prompt, json_schema))
        script = self.scripts.get(kind, ["Sicily"])
        text = script(prompt) if callable(script) else script[min(n, len(script) - 1)]
        if on_text is not None:
            for i in range(0, len(text), 7):
                on_text(text[i:i + 7])
        return LLMResult(text, len(prompt) // 4, len(text) // 4, 0.01, self.model)

    def prompts(self, kind: str) -> list[str]:
        return [p for k, p, _ in self.calls if k == kind]


def facts(*triples: list[str]) -> str:
    return json.dumps({"facts": list(triples)})


def verdict(answerable: bool, answer: str = "", cited: tuple[int, ...] = (), why: str = "") -> str:
    return json.dumps({"answerable": answerable, "answer": answer, "facts": list(cited), "why": why})


@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(retriever="bm25"), encoder=make_encoder())


def run(engine: Engine, llm, question: str, **changes) -> Trace:
    settings = Settings(retriever="bm25", prompts="small", expand="gear").with_(**changes)
    engine.set_llm(settings, llm)
    trace = Trace()
    engine.retrieve(question, k=4, settings=settings, trace=trace)
    return trace


def test_small_profile_asks_for_schema_constrained_json_and_is_recorded(engine: Engine) -> None:
    llm = SmallLLM(read=[facts(ETNA)], reason=[verdict(True, "Sicily", (1,))])
    trace = run(engine, llm, "Where is Mount Etna?")
    schemas = {kind: schema for kind, _, schema in llm.calls}
    assert schemas["read"] == small.READER_SCHEMA and schemas["reason"] == small.REASONER_SCHEMA
    assert schemas["qa"] is None  # the paper's QA prompt in both profiles: EM/F1 stay comparable
    assert "[1] (\"Mount Etna\", \"located on\", \"Sicily\")" in llm.prompts("reason")[0]
    start = trace.events[0]
    assert start.settings["prompts"] == "small"  # type: ignore[attr-defined]


def test_a_grounded_verdict_stops_the_loop(engine: Engine) -> None:
    llm = SmallLLM(read=[facts(ETNA)], reason=[verdict(True, "Sicily", (1,))])
    trace = run(engine, llm, "Where is Mount Etna?")
    assert trace.iterations() == [1]
    seen = trace.first(Reasoned, 1)
    assert seen is not None and seen.answerable and seen.cited == [1] and seen.rejected == ""


def test_an_ungrounded_verdict_is_rejected_and_the_loop_goes_on(engine: Engine) -> None:
    # the paper's walk-through failure: "Answerable: Yes, Germany" with no memory fact saying so
    llm = SmallLLM(read=[facts(ETNA), facts(ETNA), facts(SICILY)],
                   reason=[verdict(True, "Germany", (1,)), verdict(True, "Mediterranean Sea", (2,))],
                   rewrite=[json.dumps({"next_question": "Which sea is Sicily in?"})])
    trace = run(engine, llm, "Which sea is the island of Mount Etna in?")
    first = trace.first(Reasoned, 1)
    assert first is not None and not first.answerable and first.answer == "Germany"
    assert first.rejected.startswith(NOT_GROUNDED)
    assert trace.iterations() == [1, 2]  # not stopped by the hallucinated verdict
    second = trace.first(Reasoned, 2)
    assert second is not None and second.answerable and second.rejected == ""
    # the rewriter is told the facts lack the answer, not the agent's bookkeeping
    assert "Reason: The known facts do not contain the answer" in llm.prompts("rewrite")[0]


@pytest.mark.parametrize(("answer", "cited", "problem"), [
    ("Sicily", (), "cites no memory fact"),
    ("Sicily", (3,), "cites fact 3, but the memory holds 2"),
    ("Germany", (1,), "is not in the cited facts"),
    ("", (1,), "no answer given"),
])
def test_grounding_rules(answer: str, cited: tuple[int, ...], problem: str) -> None:
    memory = [tuple(ETNA), tuple(SICILY)]
    assert problem in grounding_problem(Verdict(True, answer, "", [], list(cited)), memory)
    assert grounding_problem(Verdict(True, "the Mediterranean sea", "", [], [2]), memory) == ""
    assert grounding_problem(Verdict(False, None, "why", [], []), memory) == ""


def test_a_repeated_query_is_asked_for_once_more_with_the_earlier_ones_shown(engine: Engine) -> None:
    question = "Which sea is the island of Mount Etna in?"
    llm = SmallLLM(read=[facts(ETNA)], reason=[verdict(False, why="the sea is missing")],
                   rewrite=[json.dumps({"next_question": "which sea is the island of Mount Etna in"}),
                            json.dumps({"next_question": "Which sea surrounds Sicily?"})])
    trace = run(engine, llm, question, max_iterations=2)
    rewrites = llm.prompts("rewrite")
    assert len(rewrites) == 2
    assert "already asked" not in rewrites[0] and f"- {question}" in rewrites[1]
    rewritten = trace.first(QueryRewritten, 1)
    assert rewritten is not None and rewritten.query == "Which sea surrounds Sicily?"
    assert rewritten.retried and not rewritten.repeated


def test_a_query_that_still_repeats_is_kept_and_said(engine: Engine) -> None:
    question = "Which sea is the island of Mount Etna in?"
    llm = SmallLLM(read=[facts(ETNA)], reason=[verdict(False, why="missing")],
                   rewrite=[json.dumps({"next_question": question})])
    trace = run(engine, llm, question, max_iterations=2)
    rewritten = trace.first(QueryRewritten, 1)
    assert rewritten is not None and rewritten.retried and rewritten.repeated
    assert any("repeated an earlier query after a retry" in w.message for w in trace.of(Warned))
    assert is_repeat("Which  SEA is the island of Mount Etna in", [question])


def test_identical_iterations_are_served_by_the_memo(engine: Engine) -> None:
    """With nothing new learned and the same query, iteration 2 repeats iteration 1's prompts: the memo answers them
    (marked in the trace, and not counted again: a run's cost counts each request once), and the results are exactly
    those of the first time."""
    question = "Which sea is the island of Mount Etna in?"
    inner = SmallLLM(read=[facts(ETNA)], reason=[verdict(False, why="missing")],
                     rewrite=[json.dumps({"next_question": question})])
    trace = run(engine, MemoLLM(inner), question, max_iterations=3, prompts="small")
    calls = trace.of(LLMCalled)
    memo = [c for c in calls if c.source == "memo"]
    assert memo and {c.request for c in memo} <= {c.request for c in calls if c.source == "model"}
    # the model itself saw each distinct request once
    assert len(inner.calls) == len({(k, p) for k, p, _ in inner.calls})
    assert trace.tokens()[0] == sum(c.prompt_tokens for c in calls if c.source != "memo")
    r1, r3 = trace.first(Reasoned, 1), trace.first(Reasoned, 3)
    assert r1 is not None and r3 is not None and (r1.answerable, r1.reason) == (r3.answerable, r3.reason)


def test_llm_text_streams_to_listeners_but_is_not_stored(engine: Engine) -> None:
    llm = SmallLLM(read=[facts(ETNA)], reason=[verdict(True, "Sicily", (1,))])
    settings = Settings(retriever="bm25", prompts="small", expand="gear")
    engine.set_llm(settings, llm)
    trace = Trace()
    seen: list[LLMText] = []
    trace.subscribe(lambda e: seen.append(e) if isinstance(e, LLMText) else None)
    engine.retrieve("Where is Mount Etna?", k=4, settings=settings, trace=trace)
    reads = [e for e in seen if e.step == "read (sync)"]
    assert len(reads) > 1 and reads[-1].text == facts(ETNA)  # growing text, ending in the whole answer
    assert all(len(a.text) < len(b.text) for a, b in pairwise(reads))
    assert trace.of(LLMText) == []
