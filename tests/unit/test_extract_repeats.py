"""The repetition guard (gear/extract/repeats.py): the model is stopped once it writes `limit` repeated triples in a
row, the answer is read up to there with the same triples the whole answer gives, a single repeat followed by new
triples goes on, and an extraction stopped that way is journaled like any other (estimated prompt tokens, the pieces
written as its completion tokens)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gear.extract.repeats import RepeatGuard, Repeating
from gear.extract.runner import ExtractionConfig, extract_passages, parse_extraction, passage_key
from gear.llm.base import LLMResult, Message

LOOP = ('{"triples":[["Fist Power", "director", "Aman Chang"],["Fist Power", "starring", "Gigi Lai"],'
        '["Fist Power", "director", "Aman Chang"],["Fist Power", "starring", "Gigi Lai"],'
        '["Fist Power", "director", "Aman Chang"],["Fist Power", "starring", "Gigi Lai"]]}')


def _feed(guard: RepeatGuard, text: str, size: int = 5) -> None:
    for start in range(0, len(text), size):
        guard(text[start:start + size])


def test_two_repeats_in_a_row_stop_the_model_with_the_same_triples() -> None:
    heard: list[str] = []
    guard = RepeatGuard(2, heard.append)
    with pytest.raises(Repeating) as stop:
        _feed(guard, LOOP)
    cut = stop.value.text
    assert LOOP.startswith(cut) and len(cut) < len(LOOP) and "".join(heard).startswith(cut)
    assert cut.count("Aman Chang") == 2 and cut.count("Gigi Lai") == 2  # stopped at the second repeat in a row
    full = parse_extraction(LOOP, output="triples")[0]
    assert parse_extraction(cut, output="triples")[0] == full == [("Fist Power", "director", "Aman Chang"),
                                                                 ("Fist Power", "starring", "Gigi Lai")]


def test_one_repeat_then_new_triples_goes_on_and_case_or_spacing_make_no_new_triple() -> None:
    text = ('{"triples":[["A", "p", "B"],["a", "P", " b"],["C", "q", "D"],["E", "r", "F"],["c", "q", "d"],'
            '["e",  "r", "f"]')
    guard = RepeatGuard(2)
    with pytest.raises(Repeating):
        _feed(guard, text, 3)
    assert guard.text.endswith('["e",  "r", "f"]')  # the first repeat went on; two in a row stopped it
    guard = RepeatGuard(2)
    _feed(guard, '{"triples":[["A", "p", "B"],["A", "p", "B"],["C", "q", "D"]]}')  # no stop


class LoopingLLM:
    """Streams LOOP piece by piece and counts what it wrote before the listener stopped it."""

    model = "looping"

    def __init__(self) -> None:
        self.written = 0

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text=None) -> LLMResult:  # type: ignore[no-untyped-def]
        for start in range(0, len(LOOP), 4):
            self.written += 1
            if on_text is not None:
                on_text(LOOP[start:start + 4])
        return LLMResult(LOOP, 100, self.written, 0.01, self.model)


def test_an_extraction_stopped_in_a_loop_is_journaled_with_its_triples(tmp_path: Path) -> None:
    llm = LoopingLLM()
    config = ExtractionConfig(output="triples")
    result = extract_passages([("Fist Power", "Fist Power is a 2000 film by Aman Chang.")], llm, tmp_path, config)
    record = result.records[0]
    assert record is not None and record.triples == [("Fist Power", "director", "Aman Chang"),
                                                     ("Fist Power", "starring", "Gigi Lai")]
    assert llm.written < len(LOOP) // 4 + 1 and record.completion_tokens == llm.written  # stopped early
    assert record.prompt_tokens > 0 and LOOP.startswith(record.raw)
    again = extract_passages([("Fist Power", "Fist Power is a 2000 film by Aman Chang.")], llm, tmp_path, config)
    assert again.reused == 1 and again.calls == 0
    whole = extract_passages([("Fist Power", "Fist Power is a 2000 film by Aman Chang.")], LoopingLLM(),
                             tmp_path / "off", ExtractionConfig(output="triples", stop_repeats=0))
    assert whole.records[0] is not None and whole.records[0].raw == LOOP  # the guard off: the whole answer


def test_stopping_loops_does_not_change_the_journal_key() -> None:
    on, off = ExtractionConfig(output="triples"), ExtractionConfig(output="triples", stop_repeats=0)
    assert passage_key("m", "t", "x", on) == passage_key("m", "t", "x", off)


class Stop(BaseException):
    """Streamlit's stop on Cancel, as the extraction's caller sees it."""


class SlowLLM:
    """Writes one piece every 20 ms for up to 10 s per passage; counts calls that ended early or ran to the end."""

    model = "slow"

    def __init__(self) -> None:
        self.interrupted = self.finished = 0

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text=None) -> LLMResult:  # type: ignore[no-untyped-def]
        import time

        try:
            for _ in range(500):
                time.sleep(0.02)
                if on_text is not None:
                    on_text("x")
        except BaseException:
            self.interrupted += 1
            raise
        self.finished += 1
        return LLMResult('{"triples": []}', 10, 500, 10.0, self.model)


def test_a_stopped_pooled_extraction_stops_the_calls_in_flight(tmp_path: Path) -> None:
    """With several requests at once (a GPU's slots), the caller hears a heartbeat while it waits and a stop there
    ends the calls in flight instead of leaving them to run to the end."""
    from gear.llm.queue import listening

    llm = SlowLLM()
    heard: list[int] = []

    def stop_after_a_few(ahead: int) -> None:
        heard.append(ahead)
        if len(heard) >= 3:
            raise Stop

    passages = [(f"P{i}", f"Passage {i}.") for i in range(6)]
    with listening(stop_after_a_few), pytest.raises(Stop):
        extract_passages(passages, llm, tmp_path, ExtractionConfig(output="triples", concurrency=2))
    assert heard == [0, 0, 0]
    assert llm.finished == 0 and llm.interrupted >= 2  # the calls in flight ended at once; none ran its 10 s
