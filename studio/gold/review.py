"""A person accepts or changes the diagnosis's proposed category of a run. The decision is kept as the tags
the Traces page already keeps beside the trace (TRACE.tags.json, studio.pages.traces): the category's name in the
paper's words among `categories` — the diagnosis's CATEGORY_LABELS are the Traces page's tag names — and, under
`diagnosis`, what was proposed and what the person chose (the only place "no error", which is no error category, can be
kept). The tags' other fields (the note) are kept as they are."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from gear.diagnosis import CATEGORY_LABELS, Diagnosis
from gear.diagnosis.model import NONE
from gear.files import atomic_write_json
from studio.core.paths import tags_path
from studio.core.saves import read_tags

BY_LABEL = {label: name for name, label in CATEGORY_LABELS.items()}


@dataclass(frozen=True)
class Review:
    """What the person said of a run's category: `chosen` (a diagnosis category name) when they decided, and whether
    that is what the diagnosis proposes now."""

    chosen: str | None
    accepted: bool

    @property
    def words(self) -> str:
        if self.chosen is None:
            return ""
        label = CATEGORY_LABELS.get(self.chosen, self.chosen)
        return f"{label} ✓" if self.accepted else label


def review_of(trace: Path | None, d: Diagnosis) -> Review:
    """The person's category for the run, read from its tags: the first tag that names a category (a tag written on
    the Traces page counts too), or "no error" when they chose it here; nothing when they have not decided."""
    if trace is None:
        return Review(None, False)
    tags = read_tags(trace)
    chosen = next((BY_LABEL[c] for c in tags.get("categories", []) if c in BY_LABEL), None)
    if chosen is None and (tags.get("diagnosis") or {}).get("chosen") == NONE:
        chosen = NONE
    return Review(chosen, chosen is not None and chosen == (d.category or NONE))


def save_review(trace: Path, d: Diagnosis, chosen: str) -> Path:
    """Keep the person's category (a diagnosis category name) in the run's tags; returns the tags file."""
    if chosen not in CATEGORY_LABELS:
        raise ValueError(f"unknown category {chosen!r}")
    tags = read_tags(trace)
    label = CATEGORY_LABELS[chosen]
    # the choice comes first (it is the run's category from now on); the person's other tags stay after it, but
    # "no error" leaves no category tag behind
    before = [c for c in tags.get("categories", []) if c != label]
    categories = [c for c in before if c not in BY_LABEL] if chosen == NONE else [label, *before]
    path = tags_path(trace)
    atomic_write_json(path, {**tags, "trace": trace.name, "categories": categories, "note": tags.get("note", ""),
                             "diagnosis": {"proposed": d.category, "second": d.second, "chosen": chosen, "k": d.k},
                             "updated": time.strftime("%Y-%m-%dT%H:%M:%S")})
    return path
