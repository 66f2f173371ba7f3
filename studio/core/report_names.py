"""Saved evaluations as a person reads them. The Evaluate page saves each report as
`<date>-<time>-<random>_<index>_<method>.json` (the random part keeps two sessions' reports apart; the CLI and
`gear diagnose` name them by that file), which read as "20261128-073629-09974e_books_hybrid-naivege" in the picker and
the table; here the same report is "books · Hybrid + NaiveGE · 2026-11-28 07:36". And a report of a method that does
not answer has no EM or F1: the table says "—" and why, never "None"."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from gear import methods
from gear.files import slug  # a method label as a report name holds it ("GeAR (hybrid)" → "gear-hybrid")

#: the Evaluate page's file names (studio.pages.evaluate.run_evaluations): date, time, a random part, index, method slug
_SAVED = re.compile(r"^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})\d{2}-[0-9a-f]+_(?P<index>.+)_(?P<slug>[a-z0-9-]+)$")
NO_ANSWER = "—"


def report_title(stem: str, labels: Sequence[str] = ()) -> str:
    """"books · Hybrid + NaiveGE · 2026-11-28 07:36" for a report the page saved; a file named otherwise (a
    `gear eval --json` copied in) keeps its name. `labels`: the method labels whose slugs the names hold."""
    found = _SAVED.match(stem)
    if found is None:
        return stem
    by_slug = {slug(label): label for label in labels}
    year, month, day, hour, minute = found.groups()[:5]
    return f"{found['index']} · {by_slug.get(found['slug'], found['slug'])} · {year}-{month}-{day} {hour}:{minute}"


def report_titles(stems: Sequence[str], labels: Sequence[str] = ()) -> dict[str, str]:
    """Every report's title, told apart where two would read the same (two sessions' runs in one minute): "… (2)"."""
    titles: dict[str, str] = {}
    seen: dict[str, int] = {}
    for stem in stems:
        title = report_title(stem, labels)
        seen[title] = seen.get(title, 0) + 1
        titles[stem] = title if seen[title] == 1 else f"{title} ({seen[title]})"
    return titles


def answer_cells(report: Mapping[str, Any]) -> tuple[str, str, str]:
    """(EM, F1, why they are missing: "" when present) of one report, as a table shows them ("46.0", or NO_ANSWER:
    a table draws an empty cell as "None" whatever a Styler says): a method that only retrieves asks no answer (the
    paper's QA step follows SyncGE, GeAR and IRCoT), and a run with answering off asked none either."""
    if report.get("em") is not None and report.get("f1") is not None:
        return f"{float(report['em']):.1f}", f"{float(report['f1']):.1f}", ""
    known = methods.find(str(report.get("method", "")))
    why = "answering was off" if known is not None and known.answers else "retrieval only: no answer to score"
    return NO_ANSWER, NO_ANSWER, why


def counted(n: int, word: str, plural: str = "") -> str:
    """"1 question", "3 questions"."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"
