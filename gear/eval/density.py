"""Triple density ρ_t (the paper's App. "Robustness Studies", Table 8): a question's ρ_t is the mean number of triples
the index holds for its gold passages, read from the index's own count of triples per passage
(triples_per_passage.npy, written when the index is built); R@k is then averaged over the questions of each band of
ρ_t, and the spread of a method's recall across the bands (the standard deviation of the four band means, as the
paper's 1.18 and 2.04 are) says how much it depends on how densely the triples were extracted.

A question's gold passages are the ones its report's diagnosis names (the index's passage ids the evaluation found for
its gold titles), so the densities come from the very index and questions the recall was measured on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: the paper's four bands of ρ_t: < 9, 9–11, 11–13, ≥ 13 (lower bound included)
BANDS: tuple[tuple[float | None, float | None], ...] = ((None, 9.0), (9.0, 11.0), (11.0, 13.0), (13.0, None))
COUNTS_FILE = "triples_per_passage.npy"


def band_label(band: tuple[float | None, float | None]) -> str:
    low, high = band
    if low is None:
        return f"ρ_t < {high:g}"
    if high is None:
        return f"{low:g} ≤ ρ_t"
    return f"{low:g} ≤ ρ_t < {high:g}"


def band_of(value: float, bands: Sequence[tuple[float | None, float | None]] = BANDS) -> int:
    for i, (low, high) in enumerate(bands):
        if (low is None or value >= low) and (high is None or value < high):
            return i
    raise ValueError(f"ρ_t {value} lies in no band")


def triples_per_passage(index_dir: Path) -> np.ndarray:
    """The index's triples per passage id."""
    path = Path(index_dir) / COUNTS_FILE
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the index's triples per passage ({exc})") from None


def report_gold(report: Mapping[str, Any]) -> dict[str, list[int]]:
    """Question id → the index ids of its gold passages, as the report's diagnosis found them."""
    out: dict[str, list[int]] = {}
    for row in report.get("per_question") or []:
        diagnosis = row.get("diagnosis") or {}
        ids = [int(p["id"]) for p in diagnosis.get("passages") or []
               if isinstance(p, Mapping) and isinstance(p.get("id"), int)]
        if ids:
            out[str(row.get("id"))] = ids
    return out


def densities(counts: np.ndarray, gold: Mapping[str, Sequence[int]]) -> dict[str, float]:
    """Question id → ρ_t, the mean triples of its gold passages."""
    out = {}
    for qid, ids in gold.items():
        inside = [i for i in ids if 0 <= i < len(counts)]
        if inside:
            out[qid] = float(np.mean(counts[inside]))
    return out


@dataclass
class DensityRow:
    """One method: per band, how many questions and their mean R@k (percent; None for an empty band), and the
    standard deviation of the band means."""

    label: str
    n: list[int]
    recall: list[float | None]
    spread: float | None


@dataclass
class DensityTable:
    k: int
    bands: list[str]
    questions: list[int]  # per band
    rows: list[DensityRow] = field(default_factory=list)
    mean_density: float = 0.0  # over the gold passages of all the questions (the paper: 11.71 on MuSiQue)
    passages_density: float = 0.0  # over every passage of the index


def density_table(reports: Mapping[str, Mapping[str, Any]], counts: np.ndarray, k: int = 15,
                  bands: Sequence[tuple[float | None, float | None]] = BANDS) -> DensityTable:
    """R@k by band of ρ_t for each report (label → report), the bands drawn from the first report's gold passages
    over the index's `counts`; every report must be over the same questions."""
    first = next(iter(reports.values()))
    gold = report_gold(first)
    rho = densities(counts, gold)
    band = {qid: band_of(value, bands) for qid, value in rho.items()}
    per_band = [sum(1 for b in band.values() if b == i) for i in range(len(bands))]
    every_gold = [i for ids in gold.values() for i in ids if 0 <= i < len(counts)]
    table = DensityTable(k, [band_label(b) for b in bands], per_band,
                         mean_density=float(np.mean(counts[every_gold])) if every_gold else 0.0,
                         passages_density=float(np.mean(counts)) if len(counts) else 0.0)
    for label, report in reports.items():
        recall = {str(r.get("id")): float(r["recall"][str(k)]) for r in report.get("per_question") or []
                  if str(k) in (r.get("recall") or {})}
        missing = set(band) - set(recall)
        if missing:
            raise ValueError(f"{label}: no R@{k} for {len(missing)} of the questions (e.g. {sorted(missing)[0]}): "
                             "the reports must be over the same questions")
        groups = [[recall[q] for q, b in band.items() if b == i] for i in range(len(bands))]
        means = [100.0 * float(np.mean(g)) if g else None for g in groups]
        present = [m for m in means if m is not None]
        table.rows.append(DensityRow(label, [len(g) for g in groups], means,
                                     float(np.std(present)) if len(present) > 1 else None))
    return table
