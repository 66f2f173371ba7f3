"""Paired numbers of two runs over the same questions: B − A in points, how many questions each way, a two-sided sign
test over those that differ and a paired bootstrap interval of the mean difference — the same figures in the app and
`gear compare` (gear.eval.pairing lines the questions up; this module only does the statistics, with scipy.stats)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

SEED = 38  # the paired bootstrap's seed: the same interval wherever it is asked for
RESAMPLES = 9999
CONFIDENCE = 0.95


@dataclass
class PairedMeasure:
    """B − A over the questions both answered, in points: the means, how many questions each way, the two-sided sign
    test over the questions that differ, and a paired bootstrap interval of the mean difference."""

    name: str
    n: int
    mean_a: float
    mean_b: float
    better: int
    worse: int
    tied: int
    p_sign: float | None  # None: no question differs
    low: float | None     # None: every question's difference is the same (nothing to resample)
    high: float | None

    @property
    def difference(self) -> float:
        return self.mean_b - self.mean_a

    def sentence(self) -> str:
        """'+2.5 at R@5: 7 questions better, 2 worse, 11 the same; sign test p = 0.18; 95 % interval −1.0 to +6.0'."""
        head = f"{self.difference:+.1f} at {self.name} ({self.mean_a:.1f} → {self.mean_b:.1f})"
        counts = f"{self.better} question{'s' if self.better != 1 else ''} better, {self.worse} worse, " \
                 f"{self.tied} the same"
        test = "sign test: no question differs" if self.p_sign is None else f"sign test p = {_p(self.p_sign)}"
        if self.low is not None and self.high is not None:
            interval = f"{round(100 * CONFIDENCE)} % interval {self.low:+.1f} to {self.high:+.1f}"
        elif self.better or self.worse:
            interval = f"no interval: every question differs by {self.difference:+.1f}"
        else:
            interval = "no interval: nothing to resample"
        return f"{head}: {counts}; {test}; {interval}"


def paired_measure(name: str, a: Sequence[float], b: Sequence[float]) -> PairedMeasure:
    """B − A in points over paired values (fractions or 0/1, per question): the counts each way, the sign test
    (scipy.stats.binomtest over the questions that differ, two-sided) and the paired bootstrap interval of the mean
    difference (scipy.stats.bootstrap, paired, percentile, a fixed seed: the same numbers every time)."""
    x, y = 100.0 * np.asarray(a, dtype=float), 100.0 * np.asarray(b, dtype=float)
    diff = y - x
    better, worse = int(np.sum(diff > 1e-9)), int(np.sum(diff < -1e-9))
    tied = len(diff) - better - worse
    p = float(stats.binomtest(better, better + worse, 0.5).pvalue) if better + worse else None
    low = high = None
    if len(diff) > 1 and np.ptp(diff) > 1e-9:
        result = stats.bootstrap((x, y), _mean_difference, paired=True, vectorized=True, n_resamples=RESAMPLES,
                                 confidence_level=CONFIDENCE, method="percentile", rng=np.random.default_rng(SEED))
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return PairedMeasure(name, len(diff), float(np.mean(x)) if len(x) else 0.0, float(np.mean(y)) if len(y) else 0.0,
                         better, worse, tied, p, low, high)


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def _p(p: float) -> str:
    return f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"
