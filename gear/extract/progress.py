"""Indexing progress a person can read: passages done of the total, passages per minute, the time left and the
triples so far, in one line for `gear index`'s progress bar and the Index page's status box.

The speed is measured on this run's own recent passages — not on the journal's (they cost nothing), and not over the
whole run: on a machine whose load changes (another user's question, a test run beside it) the estimate follows
what the model does now. A window of the last WINDOW passages, or of WINDOW_SECONDS, whichever holds more.

Until two passages of the run are done, a model whose pace is known beforehand (the embedded model on a CPU:
EMBEDDED_CPU_SECONDS_PER_PASSAGE, the one place that figure lives) gives the estimate, said as assumed; another model
says it is being measured.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

WINDOW = 8  # passages the speed is measured over (at least)
WINDOW_SECONDS = 300.0  # ... or the last five minutes, when more passages than WINDOW finished in them
REFRESH_SECONDS = 5.0  # how often a display re-measures the pace while a passage is still being extracted
#: the embedded model's pace on a CPU, a passage at a time: 6.2 s a passage over the 949 MuSiQue paragraphs extracted
#: on 2 cores (assets/musique, its provenance; README "What local triples cost"), 5.8 s mean over the 200 paragraphs
#: measured for docs/results.md. What the Index page's note says and the estimate before a run has measured its own.
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
    assumed: float | None = None  # seconds a passage the estimate assumed, before this run's pace was measured

    def line(self, space: str = " ") -> str:
        """"37 / 200 passages · 4.8 passages/min · ≈ 34 min left · 512 triples so far"; `space` goes between the
        words of each part (a no-break space keeps "4.8 passages/min" on one line where a browser wraps the line)."""
        parts = [f"{self.done:,} / {self.total:,} passages"]
        if self.reused:
            parts.append(f"{self.reused:,} from the journal")
        if self.done < self.total:
            if self.per_minute is None and self.seconds_left is not None and self.assumed is not None:
                parts.append(f"≈ {duration(self.seconds_left)} left at ≈ {self.assumed:.0f} s a passage (assumed until "
                             "measured)")
            elif self.per_minute is None:
                parts.append("measuring the speed…")
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

    def __init__(self, clock: Callable[[], float] = time.monotonic, assumed: float | None = None) -> None:
        """`assumed`: seconds a passage the model is known to take (EMBEDDED_CPU_SECONDS_PER_PASSAGE), for the
        estimate until this run has measured its own pace; None: "measuring the speed…" until then."""
        self.clock, self.assumed = clock, assumed
        self.started = clock()
        self.first_done: int | None = None  # what was done at the first report: the journal's share
        self.finished: deque[tuple[float, int]] = deque()  # (time, passages finished by this run so far)
        self.last: tuple[int, int, int] | None = None  # the last report (done, total, triples)
        self.measured = self.started  # when it was last measured

    def update(self, done: int, total: int, triples: int) -> Progress:
        now = self.clock()
        self.last, self.measured = (done, total, triples), now
        if self.first_done is None:
            self.first_done = done
            self.finished.append((now, 0))
        ran = done - self.first_done
        if ran > self.finished[-1][1]:
            self.finished.append((now, ran))
        while len(self.finished) > WINDOW + 1 and now - self.finished[1][0] > WINDOW_SECONDS:
            self.finished.popleft()
        per_minute = seconds_left = None
        (t0, n0), (t1, n1) = self.finished[0], self.finished[-1]
        if n1 - n0 >= 2 or (n1 - n0 >= 1 and n0 > 0):
            per_minute = 60.0 * (n1 - n0) / max(t1 - t0, 1e-9)
            # time since the last finished passage counts too: a stall shows as a slowing pace
            per_minute = min(per_minute, 60.0 * (n1 - n0 + 1) / max(now - t0, 1e-9))
            seconds_left = (total - done) * 60.0 / per_minute
        elif self.assumed is not None:
            # the passage under way has had some of its time already (never below the passages still to start)
            under_way = now - self.finished[-1][0]
            seconds_left = max((total - done) * self.assumed - under_way, (total - done - 1) * self.assumed, 1.0)
            return Progress(done, total, self.first_done, triples, None, seconds_left, self.assumed)
        return Progress(done, total, self.first_done, triples, per_minute, seconds_left)

    def again(self, every: float = REFRESH_SECONDS) -> Progress | None:
        """The last report measured again now, for a display to call while it waits (the model's heartbeat): a
        passage that takes long slows the pace and lengthens the time left before it finishes, so a machine that
        became busy shows at once. None before the first report and within `every` seconds of the last measure."""
        if self.last is None or self.clock() - self.measured < every:
            return None
        return self.update(*self.last)
