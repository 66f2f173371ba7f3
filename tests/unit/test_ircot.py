"""IRCoT with a scripted LLM at the boundary: the loop stops on "So the answer is:" or at the step limit, each thought
drives the next retrieval, the reasoner reads what was collected, tokens and steps are counted as GeAR's, the events
tell the story, and `gear eval` reports it as a multi-step method."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gear.agent.engine import Engine
from gear.agent.methods.ircot import final_ranking, reading_order
from gear.config import Settings
from gear.data.questions import Question
from gear.eval.report import evaluate
from gear.events import (
    Answered,
    BaseRetrieved,
    FinalRanking,
    IterationStarted,
    LLMCalled,
    LLMText,
    PassagesAdded,
    PPRSeeded,
    RunFinished,
    ThoughtWritten,
    Warned,
)
from gear.llm import LLMResult
from gear.parsing import parse_thought
from gear.prompts.peers import ANSWER_MARKER, IRCOT_INSTRUCTION, ircot_prompt
from gear.trace import Trace
from gear.trace.narrate import narrate

QUESTION = "Which sea is the island of Mount Etna in?"


class ThinkingLLM:
    """Writes the scripted thoughts in turn (the last repeats) and answers the QA prompt; 50 + 10 tokens a call."""

    model = "scripted-ircot"

    def __init__(self, thoughts: list[str] | Callable[[str], str], answer: str = "Answer: Mediterranean Sea") -> None:
        self.thoughts, self.answer = thoughts, answer
        self.calls: list[tuple[str, str]] = []

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        prompt = messages[-1]["content"]
        if prompt.startswith(IRCOT_INSTRUCTION):
            kind = "think"
            n = sum(1 for k, _ in self.calls if k == kind)
            script = self.thoughts
            text = script(prompt) if callable(script) else script[min(n, len(script) - 1)]
        else:
            assert "reading comprehension assistant" in prompt
            kind, text = "qa", self.answer
        self.calls.append((kind, prompt))
        if on_text is not None:
            for i in range(0, len(text), 5):
                on_text(text[i:i + 5])
        return LLMResult(text, 50, 10, 0.01, self.model)

    def prompts(self, kind: str) -> list[str]:
        return [p for k, p in self.calls if k == kind]


@pytest.fixture
def engine(tiny_index: Path, make_encoder) -> Engine:
    return Engine.open(tiny_index, Settings(retriever="bm25"), encoder=make_encoder())


def run(engine: Engine, llm, question: str = QUESTION, gold=(), **changes) -> Trace:
    settings = Settings(retriever="bm25", expand="ircot", agent_k=2).with_(**changes)
    engine.set_llm(settings, llm)
    trace = Trace()
    engine.retrieve(question, settings=settings, trace=trace, gold=gold, answers=["Mediterranean Sea"])
    return trace


def test_the_loop_stops_when_the_model_gives_the_answer(engine: Engine) -> None:
    llm = ThinkingLLM(["Mount Etna is located on Sicily.", f"{ANSWER_MARKER} the Mediterranean Sea."])
    trace = run(engine, llm)
    assert trace.iterations() == [1, 2]
    thoughts = trace.of(ThoughtWritten)
    assert [t.final for t in thoughts] == [False, True]
    assert thoughts[1].answer == "the Mediterranean Sea" and thoughts[1].thought.startswith(ANSWER_MARKER)
    assert [k for k, _ in llm.calls] == ["think", "think", "qa"]  # no retrieval with the final thought
    answered = trace.first(Answered)
    assert answered is not None and answered.answer == "Mediterranean Sea" and answered.em == 1.0
    finished = trace.first(RunFinished)
    assert finished is not None and finished.iterations == 2


def test_each_thought_drives_the_next_retrieval(engine: Engine) -> None:
    llm = ThinkingLLM(["Mount Etna is located on Sicily.", "Sicily is the largest island in the Mediterranean Sea.",
                       f"{ANSWER_MARKER} Mediterranean Sea."])
    trace = run(engine, llm)
    queries = [e.query for e in trace.of(IterationStarted)]
    assert queries == [QUESTION, "Mount Etna is located on Sicily.",
                       "Sicily is the largest island in the Mediterranean Sea."]
    assert [e.query for e in trace.of(BaseRetrieved)] == queries
    assert all(e.k == 2 for e in trace.of(BaseRetrieved))  # agent_k per retrieval
    # the collection grows by each retrieval's new passages, in retrieval order, and is the final ranking
    added = trace.of(PassagesAdded)
    order = [p.id for e in added for p in e.passages]
    assert len(order) == len(set(order)) and added[-1].collected == order
    for event, base in zip(added, trace.of(BaseRetrieved), strict=True):
        earlier = {p for e in added[: added.index(event)] for p in (x.id for x in e.passages)}
        assert [p.id for p in event.passages] == [p.id for p in base.passages if p.id not in earlier]
    final = trace.first(FinalRanking)
    assert final is not None and [p.id for p in final.passages] == order
    # the reasoner reads what was collected so far, and the thoughts already written
    second = llm.prompts("think")[1]
    titles = {p.title for e in added[:2] for p in e.passages}
    assert all(f"Wikipedia Title: {t}\n" in second for t in titles)
    assert f"Q: {QUESTION}\nA: Mount Etna is located on Sicily." in second


def test_the_step_limit_ends_the_loop_without_a_thought_after_the_last_retrieval(engine: Engine) -> None:
    llm = ThinkingLLM(lambda prompt: f"Step {prompt.count('Step ') + 1} found nothing about Etna.")
    trace = run(engine, llm, ircot_max_steps=3)
    assert trace.iterations() == [1, 2, 3]
    assert len(trace.of(ThoughtWritten)) == 2 and len(trace.of(BaseRetrieved)) == 3
    assert [k for k, _ in llm.calls] == ["think", "think", "qa"]


def test_tokens_and_steps_are_counted_like_gears(engine: Engine) -> None:
    llm = ThinkingLLM(["Mount Etna is located on Sicily.", f"{ANSWER_MARKER} Mediterranean Sea."])
    seen: list[LLMText] = []
    settings = Settings(retriever="bm25", expand="ircot", agent_k=2)
    engine.set_llm(settings, llm)
    trace = Trace()
    trace.subscribe(lambda e: seen.append(e) if isinstance(e, LLMText) else None)
    engine.retrieve(QUESTION, settings=settings, trace=trace)
    calls = trace.of(LLMCalled)
    assert [(c.iteration, c.step) for c in calls] == [(1, "think"), (2, "think"), (2, "qa")]
    assert trace.tokens() == (150, 30)
    assert not any(isinstance(e, LLMText) for e in trace.events)  # streamed to listeners, never stored
    assert seen and seen[-1].step == "qa" and {e.step for e in seen} == {"think", "qa"}
    assert Trace.from_json(trace.to_json()).of(ThoughtWritten) == trace.of(ThoughtWritten)
    assert all(narrate(e) for e in trace.events if isinstance(e, ThoughtWritten | PassagesAdded))


def test_eval_reports_ircot_as_a_multi_step_method(engine: Engine) -> None:
    settings = Settings(retriever="bm25", expand="ircot", agent_k=2)
    engine.set_llm(settings, ThinkingLLM(["Mount Etna is located on Sicily.", f"{ANSWER_MARKER} Mediterranean Sea."]))
    question = Question("2hop__1", QUESTION, ("Mediterranean Sea",), (("Mount Etna", None), ("Sicily", None)))
    data = evaluate(engine, [question], settings, ks=(2, 4)).to_dict()
    assert data["method"] == "ircot" and data["iterations_mean"] == 2.0
    assert data["tokens_per_question"] == 180.0 and data["llm_calls_per_question"] == 3.0
    assert data["em"] == 100.0
    row = data["per_question"][0]
    assert row["recall_per_iteration"][-1] == row["recall"]  # the last collection is the final ranking
    assert list(data["recall_per_iteration"]) == ["1", "2"]


def test_an_empty_thought_stops_the_loop_with_a_warning(engine: Engine) -> None:
    trace = run(engine, ThinkingLLM(["   "]))
    assert trace.iterations() == [1]
    assert any("no new sentence" in w.message for w in trace.of(Warned))
    assert trace.first(Answered) is not None  # the QA prompt still answers from what was collected


def test_ppr_as_the_retriever(engine: Engine) -> None:
    llm = ThinkingLLM(["Mount Etna is located on Sicily.", f"{ANSWER_MARKER} Mediterranean Sea."])
    trace = run(engine, llm, ircot_retriever="ppr")
    assert [e.query for e in trace.of(PPRSeeded)] == [QUESTION, "Mount Etna is located on Sicily."]
    assert [e.iteration for e in trace.of(BaseRetrieved)] == [1, 2]


def test_score_ranking_orders_the_collection_by_best_score() -> None:
    ranked = final_ranking([5, 3, 9], {5: 0.2, 3: 0.9, 9: 0.2}, "score")
    assert [s.id for s in ranked] == [3, 5, 9]  # ties keep retrieval order
    assert [s.id for s in final_ranking([5, 3, 9], {5: 0.2, 3: 0.9, 9: 0.2}, "retrieval")] == [5, 3, 9]


def test_the_reasoner_reads_round_robin_over_retrievals_when_over_the_cap() -> None:
    assert reading_order([[1, 2], [3]], 5) == [1, 2, 3]
    assert reading_order([[1, 2, 3, 4], [5, 6], [7]], 5) == [1, 5, 7, 2, 6]


def test_prompt_and_thought_parsing() -> None:
    prompt = ircot_prompt("Q?", [("T", "text")], ["First fact."])
    assert prompt.startswith(IRCOT_INSTRUCTION) and "# Example" in prompt
    assert "Wikipedia Title: T\ntext\n\nQ: Q?\nA: First fact." in prompt
    assert parse_thought("First fact. Second fact. So the answer is: X.", ("First fact.",)).text == "Second fact."
    final = parse_thought("A: So the answer is: St. Petersburg.")
    assert final.final and final.answer == "St. Petersburg"
