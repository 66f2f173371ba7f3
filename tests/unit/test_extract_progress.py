"""Indexing progress (gear/extract/progress.py): passages per minute over this run's recent passages (the journal's
cost nothing and do not count), the time left, a pace that follows a machine that slows down, and the line shown."""

from __future__ import annotations

from gear.extract.progress import Pace, Progress, duration


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
    assert "measuring the speed" in first.line()
    clock.now = 10
    assert pace.update(51, 200, 408).per_minute is None  # one passage: its time holds the cold first read
    clock.now = 20
    second = pace.update(52, 200, 416)
    assert second.per_minute == 6.0  # two passages in 20 s
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


def test_the_line() -> None:
    line = Progress(37, 200, 5, 512, 4.8, 34 * 60).line()
    assert line == "37 / 200 passages · 5 from the journal · 4.8 passages/min · ≈ 34 min left · 512 triples so far"
    assert Progress(200, 200, 0, 1536, 4.8, 0).line() == "200 / 200 passages · 1,536 triples so far"
    assert [duration(s) for s in (3, 89, 600, 7500)] == ["3 s", "89 s", "10 min", "2 h 05 min"]
