"""A scripted LLM for the app tests (AppTest and the real browser): every distinct prompt has one answer, as a
recorded cache needs, and its output carries HTML that must show as text (the XSS checks). It answers both prompt
profiles: the paper's free text, or the small profile's JSON when a schema is asked for."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gear.llm import LLMResult
from gear.llm.queue import ModelQueue
from gear.prompts.peers import FILTER_INSTRUCTION, IRCOT_INSTRUCTION

XSS = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
THOUGHT = f"Mount Etna is on Sicily {XSS}, the largest island in the Mediterranean Sea."
FINAL = "So the answer is: Mediterranean Sea."


def prompt_kind(prompt: str) -> str:
    """Which step of the method a prompt belongs to, in either profile (and the peers': IRCoT's reasoning step,
    PPR's recognition filter)."""
    if prompt.startswith(IRCOT_INSTRUCTION):
        return "think"
    if prompt.startswith(FILTER_INSTRUCTION):
        return "filter"
    if prompt.startswith("Your task is to find facts"):
        return "read"
    if "# Your Task:" in prompt and ("Next Question:" in prompt or "next_question" in prompt):
        return "rewrite"
    if "# Task Description:" in prompt and "known facts" in prompt and "# Your reply" in prompt:
        return "reason"
    if "reading comprehension assistant" in prompt:
        return "qa"
    raise AssertionError(f"unexpected prompt: {prompt[:80]}")


def passage_title(messages: list) -> str:
    """The passage title in an extraction prompt (the fakes answer from it and record which passages were asked)."""
    return messages[-1]["content"].split("```\n")[-1].split("\n", 1)[0]


class ScriptedLLM:
    """Answers by prompt: the reader adds the Mediterranean fact once memory exists; the reasoner says yes when the
    memory holds it; IRCoT's reasoner writes a fact and the answer, so its first step keeps the fact and its second
    the answer (every distinct prompt has one answer, as a recorded cache needs)."""

    model = "scripted"

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        prompt = messages[-1]["content"]
        small = json_schema is not None
        kind = prompt_kind(prompt)
        if kind == "read":
            facts = [["Mount Etna", "located on", "Sicily"], ["Mount Etna", "described as", XSS]]
            if "preliminary facts" in prompt:
                facts.append(["Sicily", "largest island in", "Mediterranean Sea"])
            text = json.dumps({"facts": facts}) if small else "\n".join(
                "(" + ", ".join(f'"{x}"' for x in f) + ")" for f in facts)
        elif kind == "rewrite":
            question = "Which sea is Sicily the largest island in?"
            text = json.dumps({"next_question": question}) if small else f"Next Question: {question}"
        elif kind == "reason":
            text = self._verdict(prompt, small)
        elif kind == "think":  # IRCoT: one sentence, then the answer (the loop keeps one new sentence per step)
            text = f"{THOUGHT} {FINAL}"
        elif kind == "filter":
            text = json.dumps({"keep": [1, 2]})
        else:
            text = "Answer: Mediterranean Sea"
        if on_text is not None:
            on_text(text)
        return LLMResult(text, prompt_tokens=len(prompt) // 4, completion_tokens=len(text) // 4, seconds=0.01,
                         model=self.model)

    @staticmethod
    def _verdict(prompt: str, small: bool) -> str:
        facts = prompt.split("# Your reply")[0]
        if not small:
            return ("Answerable: Yes\nAnswer: Mediterranean Sea" if "Mediterranean Sea" in facts
                    else f"Answerable: No\nWhy: the sea is missing {SCRIPT}")
        cited = [int(n) for n, line in re.findall(r"^\[(\d+)\] (.*)$", facts, re.M) if "Mediterranean Sea" in line]
        if cited:
            return json.dumps({"answerable": True, "answer": "Mediterranean Sea", "facts": cited, "why": ""})
        return json.dumps({"answerable": False, "answer": "", "facts": [], "why": f"the sea is missing {SCRIPT}"})


class QueuedLLM:
    """Any scripted LLM behind a model queue, as the embedded model is (gear.llm.embedded): each call waits for its
    turn, then writes its answer in `pieces` pieces `delay` seconds apart. For the tests of many sessions on one
    model; `before_turn` runs in the caller's thread first (a test takes the Streamlit script's context there)."""

    def __init__(self, inner, queue: ModelQueue | None = None, *, pieces: int = 1, delay: float = 0.0,
                 before_turn: Callable[[], None] | None = None) -> None:
        self.inner, self.queue = inner, queue or ModelQueue(1, poll_seconds=0.02)
        self.model = inner.model
        self.pieces, self.delay, self.before_turn = pieces, delay, before_turn
        self.written = 0  # pieces written so far, over all calls

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        if self.before_turn is not None:
            self.before_turn()
        with self.queue.turn():
            result = self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens)
            size = max(1, -(-len(result.text) // self.pieces))
            for start in range(0, len(result.text), size):
                time.sleep(self.delay)
                self.written += 1
                if on_text is not None:
                    on_text(result.text[start:start + size])
        return result


def wait_until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the condition")
        time.sleep(0.005)


@contextmanager
def another_call(queue: ModelQueue) -> Iterator[threading.Event]:
    """Another session's model call, holding the turn until the yielded event is set (at the latest on exit)."""
    release = threading.Event()

    def hold() -> None:
        with queue.turn():
            release.wait(60)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    wait_until(lambda: queue.snapshot() == (1, 0))
    try:
        yield release
    finally:
        release.set()
        thread.join(10)
