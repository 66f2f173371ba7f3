"""Indexing progress a person can read: passages done of the total, passages per minute, the time left and the
triples so far, in one line for `gear index`'s progress bar and the Index page's status box.

The pace is the model's, measured on this run's own recent passages — not on the journal's (they cost nothing), not
on the run's first passage (it also waits for the model to load and reads the instructions every later passage
finds in the server's cache: counted, its seconds gave a first estimate several times too long, which then fell
minute after minute), and not over the whole run: on a machine whose load changes the estimate follows what the
model does now. A window of the last WINDOW passages, or of WINDOW_SECONDS, whichever holds more: an average, so the
time left counts down steadily instead of swinging with each passage. Until a second passage of the run is done
there is no number: the line says the pace is being measured.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

WINDOW = 8  # passages the speed is measured over (at least)
WINDOW_SECONDS = 300.0  # ... or the last five minutes, when more passages than WINDOW finished in them
REFRESH_SECONDS = 5.0  # how often a display re-measures the pace while a passage is still being extracted
STALL = 2.0  # a passage taking this many times the measured pace is stalled: the pace slows before it ends
#: the embedded model's pace on a quiet 2-core CPU, a passage at a time: 6.2 s a passage over the 949 MuSiQue
#: paragraphs extracted (assets/musique, its provenance; docs/results.md "What local triples cost"), 5.8 s mean over
#: 200 paragraphs measured for docs/results.md. What the Index page's note says before a build; never an estimate of a
#: run's time.
EMBEDDED_CPU_SECONDS_PER_PASSAGE = 6.0


@dataclass(frozen=True, slots=True)
class Progress:
    """Where an extraction stands: `done` of `total` passages (`reused` of them from the journal), the triples so
    far, and the measured pace (None until two passages of this run have finished)."""

    done: int
    total: int
    reused: int
    triples: int
    per_minute: float | None
    seconds_left: float | None

    def line(self, space: str = " ") -> str:
        """"37 / 200 passages · 4.8 passages/min · ≈ 34 min left · 512 triples so far"; `space` goes between the
        words of each part (a no-break space keeps "4.8 passages/min" on one line where a browser wraps the line)."""
        parts = [f"{self.done:,} / {self.total:,} passages"]
        if self.reused:
            parts.append(f"{self.reused:,} from the journal")
        if self.done < self.total:
            if self.per_minute is None:
                parts.append("measuring the pace…")
            else:
                parts.append(f"{self.per_minute:.1f} passages/min")
                if self.seconds_left is not None:
                    parts.append(f"≈ {duration(self.seconds_left)} left")
        parts.append(f"{self.triples:,} triple{'' if self.triples == 1 else 's'} so far")
        return " · ".join(part.replace(" ", space) for part in parts)


def duration(seconds: float) -> str:
    """"45 s", "12 min", "2 h 05 min"."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60:02d} min"


class Pace:
    """Turns the runner's progress callbacks into `Progress`, timing the passages this run finished."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.first_done: int | None = None  # what was done at the first report: the journal's share
        # (time, passages finished by this run so far), from the run's first finished passage on
        self.finished: deque[tuple[float, int]] = deque()
        self.last: tuple[int, int, int] | None = None  # the last report (done, total, triples)
        self.measured = clock()  # when it was last measured

    def update(self, done: int, total: int, triples: int) -> Progress:
        now = self.clock()
        self.last, self.measured = (done, total, triples), now
        if self.first_done is None:
            self.first_done = done
        ran = done - self.first_done
        if ran > 0 and (not self.finished or ran > self.finished[-1][1]):
            self.finished.append((now, ran))
        while len(self.finished) > WINDOW + 1 and now - self.finished[1][0] > WINDOW_SECONDS:
            self.finished.popleft()
        if len(self.finished) < 2:
            return Progress(done, total, self.first_done, triples, None, None)
        (t0, n0), (t1, n1) = self.finished[0], self.finished[-1]
        seconds = max(t1 - t0, 1e-9) / (n1 - n0)  # a passage, over the window
        under_way = now - t1  # the passage being extracted now has had this much of its time
        if under_way > STALL * seconds:  # a stall: counted as if it finished now, the pace slows before it ends
            seconds = (now - t0) / (n1 - n0 + 1)
        left = total - done
        # the passage under way counts down; the passages after it take the measured time each
        seconds_left = max(left * seconds - under_way, (left - 1) * seconds, 0.0) if left else 0.0
        return Progress(done, total, self.first_done, triples, 60.0 / seconds, seconds_left)

    def again(self, every: float = REFRESH_SECONDS) -> Progress | None:
        """The last report measured again now, for a display to call while it waits (the model's heartbeat): the
        time left counts down while a passage is extracted, and a passage that stalls slows the pace before it
        finishes, so a machine that became busy shows at once. None before the first report and within `every`
        seconds of the last measure."""
        if self.last is None or self.clock() - self.measured < every:
            return None
        return self.update(*self.last)
