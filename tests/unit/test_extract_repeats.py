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


RUN_ON = ('{"triples":[["The Hythrun Chronicles", "author", "Jennifer Fallon"],'
          '["The Hythrun Chronicles", "genre", "fantasy"],'
          '["The Hythrun Chronicles", "set", "The Demon Child Trilogy and The Wolfblade Trilogy'
          + " and The Demon Child Trilogy" * 150)  # cut at the answer's token cap, never closed


def test_a_string_that_runs_on_stops_the_model_with_the_same_triples() -> None:
    """A string of the triple list past RUN_ON_CHARS stops the model; what is read is what the whole answer gives (its
    run-on part is too long to keep either way)."""
    from gear.extract.repeats import RUN_ON_CHARS, RunningOn
    from gear.extract.runner import MAX_PART_CHARS

    assert RUN_ON_CHARS >= 2 * MAX_PART_CHARS
    guard = RepeatGuard(2)
    with pytest.raises(RunningOn) as stop:
        _feed(guard, RUN_ON, 7)
    opened = RUN_ON.index('"The Demon Child')
    assert RUN_ON_CHARS < len(guard.text) - opened <= RUN_ON_CHARS + 8  # stopped as soon as it passed the limit
    cut = stop.value.text
    assert RUN_ON.startswith(cut) and cut == guard.text  # the answer so far, as the token cap would have cut it
    assert parse_extraction(cut, output="triples")[0] == parse_extraction(RUN_ON, output="triples")[0] == [
        ("The Hythrun Chronicles", "author", "Jennifer Fallon"), ("The Hythrun Chronicles", "genre", "fantasy")]


def test_long_strings_that_close_or_sit_in_the_entity_list_go_on() -> None:
    long_part = "a run-on but closed part " * 14  # 350 characters: dropped on reading, but the model is not stopped
    escaped = 'he said \\"yes\\" ' * 20  # 320 characters; escaped quotes do not end a string
    guard = RepeatGuard(2)
    _feed(guard, '{"triples":[["A", "p", "' + long_part + '"],["A", "p", "' + escaped + '"],["C", "q", "D"]]}')
    assert guard.text.endswith('["C", "q", "D"]]}')
    guard = RepeatGuard(2)  # the paper's joint answer: its entity list comes before the triple list
    entity = "entity " * 100
    _feed(guard, '{"named_entities": ["' + entity + '", "B"], "triples": [["B", "p", "C"]]}')
    assert guard.text.endswith('"triples": [["B", "p", "C"]]}')
    with pytest.raises(Repeating):  # but an escaped quote keeps a run-on string open
        _feed(RepeatGuard(2), '{"triples":[["A", "p", "' + escaped * 2)


def test_an_answer_ended_inside_an_open_string_stops_the_model() -> None:
    """The model slips into single quotes inside a string and ends its answer there: the JSON still holds the string
    open, so the server would go on to the cap writing nothing; the guard stops it at the end, and the text read is
    the text the cap would have left."""
    from gear.extract.repeats import ClosedInQuotes

    answer = ('{"triples":[["The No Mercy Man","director","Daniel Vance"],["The No Mercy Man","starring","Ron Thompson'
              "'],['The No Mercy Man','starring','Mike Lane'],['The No Mercy Man','starring','Richard X. Slattery']]}")
    guard = RepeatGuard(2)
    with pytest.raises(ClosedInQuotes) as stop:
        _feed(guard, answer, 3)
    assert stop.value.text == answer
    assert parse_extraction(stop.value.text, output="triples")[0] == parse_extraction(answer, output="triples")[0]
    guard = RepeatGuard(2)  # an answer that ends as JSON should: the model ends it itself
    _feed(guard, '{"triples":[["A", "p", "B"],["C", "q", "D"]]}', 3)
    guard = RepeatGuard(2)  # "]]}" inside a string that goes on is not an end
    _feed(guard, '{"triples":[["A", "p", "x]]} y"],["C", "q", "D"]]}', 1)
