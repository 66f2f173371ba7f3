"""Indexing progress (gear/extract/progress.py): passages per minute over this run's recent passages (the journal's
cost nothing and do not count), the time left, a pace that follows a machine that slows down, and the line shown —
and `gear index`'s bar (gear.extract.bridge.run_extraction) that shows it."""

from __future__ import annotations

import io
import json
from functools import partial
from pathlib import Path

import pytest
from rich.console import Console

from gear.data.corpus import Document
from gear.extract import bridge
from gear.extract.progress import REFRESH_SECONDS, Pace, Progress, duration
from gear.extract.runner import ExtractionConfig
from gear.llm.base import LLMResult
from gear.llm.queue import current_listener


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_journals_passages_do_not_count_towards_the_speed() -> None:
    clock = Clock()
    pace = Pace(clock)
    first = pace.update(50, 200, 400)  # 50 already in the journal
    assert first.reused == 50 and first.per_minute is None
    assert "measuring the pace…" in first.line() and "left" not in first.line()  # no number until there is one
    clock.now = 30
    assert pace.update(51, 200, 408).per_minute is None  # one passage: its time holds the model's start, the cold read
    clock.now = 40
    second = pace.update(52, 200, 416)
    assert second.per_minute == 6.0  # the second passage in 10 s: the first one's 30 s are not the pace
    assert second.seconds_left == 148 * 10


def test_the_pace_follows_a_machine_that_slows_down() -> None:
    clock = Clock()
    pace = Pace(clock)
    pace.update(0, 100, 0)
    for done in range(1, 21):  # 20 passages at 6 s each
        clock.now += 6
        fast = pace.update(done, 100, done * 8)
    assert fast.per_minute is not None and abs(fast.per_minute - 10.0) < 0.01
    for done in range(21, 41):  # then 20 at 30 s each (a busy machine), over more than five minutes
        clock.now += 30
        slow = pace.update(done, 100, done * 8)
    assert slow.per_minute is not None and abs(slow.per_minute - 2.0) < 0.01  # the window holds only the slow ones
    assert slow.seconds_left is not None and abs(slow.seconds_left - 60 * 30) < 1


def test_a_stall_slows_the_estimate_before_the_next_passage_finishes() -> None:
    clock = Clock()
    pace = Pace(clock)
    pace.update(0, 10, 0)
    for done in (1, 2, 3):
        clock.now += 10
        steady = pace.update(done, 10, 0)
    clock.now += 120  # nothing finished for two minutes
    stalled = pace.update(3, 10, 0)
    assert steady.per_minute is not None and stalled.per_minute is not None
    assert stalled.per_minute < steady.per_minute / 3


def test_the_time_left_counts_down_steadily_between_passages() -> None:
    """While a passage is extracted the time left falls with the clock (the refreshes never raise it back), and a
    passage that takes a little longer than the pace does not swing it: only a stall (twice the pace) slows it."""
    clock = Clock()
    pace = Pace(clock)
    pace.update(0, 20, 0)
    for done in (1, 2, 3, 4):
        clock.now += 10
        at_finish = pace.update(done, 20, 0)
    assert at_finish.seconds_left == 16 * 10
    shown = []
    for _ in range(4):  # 4, 8, 12, 16 s into a 10 s passage: late, not stalled
        clock.now += 4
        again = pace.again(every=0)
        assert again is not None
        shown.append(again.seconds_left)
    assert shown == sorted(shown, reverse=True) and shown[-1] == 15 * 10  # never below the passages still to start
    assert again.per_minute == at_finish.per_minute


def test_the_line() -> None:
    line = Progress(37, 200, 5, 512, 4.8, 34 * 60).line()
    assert line == "37 / 200 passages · 5 from the journal · 4.8 passages/min · ≈ 34 min left · 512 triples so far"
    assert Progress(200, 200, 0, 1536, 4.8, 0).line() == "200 / 200 passages · 1,536 triples so far"
    assert Progress(1, 12, 0, 1, None, None).line() == "1 / 12 passages · measuring the pace… · 1 triple so far"
    assert [duration(s) for s in (3, 89, 600, 7500)] == ["3 s", "89 s", "10 min", "2 h 05 min"]


def test_the_line_can_keep_each_part_on_one_line() -> None:
    """The app joins each part's words with no-break spaces: a narrow page wraps the line between parts only
    ("4.8 passages/min" was split after "4.8")."""
    progress = Progress(1_234, 10_000, 1_000, 12_345, 4.8, 7500)
    kept = progress.line("\u00a0")
    assert kept.replace("\u00a0", " ") == progress.line()
    parts = kept.split(" · ")
    assert len(parts) == 5 and not any(" " in part for part in parts)
    assert "4.8\u00a0passages/min" in parts and "≈\u00a02\u00a0h\u00a005\u00a0min\u00a0left" in parts


def test_measured_again_while_a_passage_takes_long() -> None:
    """Between two finished passages a display asks again (on the model's heartbeat): not more often than every
    REFRESH_SECONDS, and a passage that overruns slows the pace and lengthens the time left before it ends."""
    clock = Clock()
    pace = Pace(clock)
    assert pace.again() is None  # nothing reported yet
    pace.update(0, 10, 0)
    for done in (1, 2, 3):
        clock.now += 10
        steady = pace.update(done, 10, done * 4)
    clock.now += REFRESH_SECONDS - 1
    assert pace.again() is None  # measured moments ago
    clock.now += 1
    same = pace.again()
    assert same is not None and same.per_minute == steady.per_minute  # 6 s into a 10 s passage: nothing to say yet
    clock.now += 60  # the fourth passage has taken 66 s so far
    slow = pace.again()
    assert slow is not None and (slow.done, slow.total, slow.triples) == (3, 10, 12)
    assert slow.per_minute is not None and steady.per_minute is not None and slow.per_minute < steady.per_minute / 2
    assert slow.seconds_left is not None and steady.seconds_left is not None
    assert slow.seconds_left > 2 * steady.seconds_left


class SlowingLLM:
    """Answers one triple per passage, each 12 s on `clock`; on the third passage the model stalls 60 s first, and
    tells the waiting caller (its heartbeat, as gear.llm.openai_client does while the model reads)."""

    model = "slowing"

    def __init__(self, clock: Clock) -> None:
        self.clock, self.calls = clock, 0

    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        self.calls += 1
        if self.calls == 3:
            self.clock.now += 60
            heartbeat = current_listener()
            assert heartbeat is not None, "nobody hears the model's heartbeat"
            heartbeat(0)
        self.clock.now += 12
        title = messages[-1]["content"].split("```\n")[-1].split("\n", 1)[0]
        text = json.dumps({"named_entities": [title], "triples": [[title, "is in", "Europe"]]})
        return LLMResult(text, prompt_tokens=40, completion_tokens=10, seconds=12, model=self.model)


DOCS = [Document(f"Passage {i}", f"Passage {i} is a place in Europe.") for i in range(4)]


def test_the_index_bar_fits_a_narrow_terminal(tmp_path: Path) -> None:
    """In a narrow terminal the bar, the whole line and the time all show: the line wraps under itself, between its
    parts (it was cut to "ext… 5 / 12 passages · … · 4…", the bar and the elapsed time gone)."""
    out = io.StringIO()
    console = Console(file=out, width=60, force_terminal=False)
    result = bridge.run_extraction(DOCS, SlowingLLM(Clock()), tmp_path, ExtractionConfig(concurrency=1), console)
    assert result.n_triples == 4
    shown = out.getvalue()
    assert "extracting ━" in shown and "0:00:0" in shown and "…" not in shown
    words = [word for word in shown.split() if word != "0:00:00"]  # the time ends the bar's first row
    assert "4 / 4 passages · 4 triples so far · 200 tokens" in " ".join(words)
    rows = shown.splitlines()  # wrapped between the parts, never inside one ("4 | triples so far")
    assert all(any(part in row for row in rows) for part in ("4 / 4 passages", "4 triples so far", "200 tokens"))


def test_the_index_bar_measures_again_while_the_model_stalls(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A stalled passage shows in `gear index`'s line before it finishes: the model's heartbeat re-measures."""
    clock = Clock()
    measured: list[Progress] = []

    class Watched(Pace):
        def again(self, every: float = REFRESH_SECONDS) -> Progress | None:
            progress = super().again(every)
            if progress is not None:
                measured.append(progress)
            return progress

    monkeypatch.setattr(bridge, "Pace", partial(Watched, clock))
    console = Console(file=io.StringIO())
    bridge.run_extraction(DOCS, SlowingLLM(clock), tmp_path, ExtractionConfig(concurrency=1), console)
    # the second passage in 12 s, the third 60 s late: counted as done now, 2 passages in 72 s since the first
    assert [(p.done, p.per_minute) for p in measured] == [(2, 60 * 2 / (12 + 60))]


def test_the_line_wraps_between_its_parts_each_row_ending_with_its_separator() -> None:
    out = io.StringIO()
    line = "4 / 12 passages · 4 from the journal · measuring the pace… · 20 triples so far"
    Console(file=out, width=57).print(bridge.PartsLine(line))
    assert [row.rstrip() for row in out.getvalue().splitlines()] == [  # 56 columns and " ·" would not fit
        "4 / 12 passages · 4 from the journal ·", "measuring the pace… · 20 triples so far"]


class InterruptedLLM(SlowingLLM):
    def complete(self, messages, *, json_schema=None, max_tokens=512, on_text=None) -> LLMResult:
        if self.calls == 2:
            raise KeyboardInterrupt
        return super().complete(messages, json_schema=json_schema, max_tokens=max_tokens, on_text=on_text)


def test_ctrl_c_says_what_is_kept_and_how_to_go_on(tmp_path: Path) -> None:
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        bridge.run_extraction(DOCS, InterruptedLLM(Clock()), tmp_path, ExtractionConfig(concurrency=1),
                              Console(file=out, width=200))
    assert (f"interrupted: 2 of 4 passages are kept in the journal ({tmp_path}); run the same command again to go on "
            "from there") in out.getvalue()
    resumed = bridge.run_extraction(DOCS, SlowingLLM(Clock()), tmp_path, ExtractionConfig(concurrency=1))
    assert resumed.reused == 2 and resumed.n_triples == 4
