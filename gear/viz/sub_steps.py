"""What a lesson's sub-step shows, whichever module it opens (the beam search, tripleLink, PPR): one picture, one
table, and for the beam search Algorithm 1 beside them with the sub-step's lines marked. Teaching mode
(studio.views.sub_step) and the handout (gear.viz.handout) both draw what `view` returns, so a sub-step looks the same
on screen and on paper."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gear import events as ev
from gear import trace as t
from gear.viz import beam_lesson, link_lesson, ppr_lesson
from gear.viz.lesson import LessonStep
from gear.viz.picture import Picture


@dataclass(frozen=True)
class SubStepView:
    picture: Picture | None
    rows: list[dict[str, Any]] = field(default_factory=list)
    algorithm: str = ""  # Algorithm 1's listing (trusted HTML), beam sub-steps only
    caption: str = ""


def _near(events: Sequence[ev.Event], kind: type[ev.Event], step: LessonStep) -> Any:
    """The event of `kind` that belongs with the step's event: the same iteration's, nearest after it (or, failing
    that, nearest before it) — a PPR retrieval's seeds and outcome are emitted together."""
    at = next(n for n, e in enumerate(events) if e is step.event)
    after = [e for e in events[at:] if isinstance(e, kind) and e.iteration == step.iteration]
    before = [e for e in events[:at] if isinstance(e, kind) and e.iteration == step.iteration]
    return after[0] if after else (before[-1] if before else None)


def view(events: Sequence[ev.Event], step: LessonStep, passages: Mapping[int, t.PassageView]) -> SubStepView:
    e = step.event
    if isinstance(e, ev.BeamsSearched):
        return SubStepView(beam_lesson.picture(e, step.phase, step.hop, passages),
                           beam_lesson.rows(e, step.phase, step.hop), beam_lesson.algorithm_html(step.lines),
                           f"b = {e.width}, l = {e.length}, γ = {e.gamma:g}, at most {e.max_neighbours} neighbours; "
                           f"diversity {'on' if e.diversity else 'off'}.")
    if isinstance(e, ev.TriplesLinked):
        beams = _near(events, ev.BeamsSearched, step)
        return SubStepView(link_lesson.picture(e, step.phase, beams, passages), link_lesson.rows(e, step.phase))
    if isinstance(e, (ev.PPRSeeded, ev.PPRRanked)):
        seeded = e if isinstance(e, ev.PPRSeeded) else _near(events, ev.PPRSeeded, step)
        ranked = e if isinstance(e, ev.PPRRanked) else _near(events, ev.PPRRanked, step)
        rows = ppr_lesson.rows(ranked, seeded, step.phase)
        if ranked is None:
            return SubStepView(None, rows)
        caption = (f"damping d = {ranked.damping:g}, {ranked.iterations} iterations"
                   if step.phase in ("ppr-walk", "ppr-passages") else "")
        return SubStepView(ppr_lesson.picture(ranked, seeded, step.phase), rows, caption=caption)
    return SubStepView(None)
