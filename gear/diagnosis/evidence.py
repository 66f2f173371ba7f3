"""Short human-readable words for stage marks: one cell of a stage table, one line of a passage's evidence."""

from __future__ import annotations

from collections.abc import Sequence

from gear.diagnosis.model import BEAM, FOUND, RUN_LEVEL, Cause, GoldPassage, Ref, StageMark, stage_label

RANKED_STAGES = ("base", "expanded", "fused", "ranked", "final", "retrieval", "linked")


def describe(mark: StageMark) -> str:
    """What a mark says, e.g. "rank 3 (it 2)", "hop 2: ⟨…⟩", "✗ not in the base list (top 10)"."""
    where = f" (it {mark.iteration})" if mark.iteration != RUN_LEVEL else ""
    if not mark.reached:
        return "✗" + (f" {mark.note}" if mark.note else "") + where
    if mark.stage == BEAM:
        return f"hop {mark.hop}{where}: {mark.note}"
    if mark.stage == FOUND:
        return f"rank {mark.rank}"
    if mark.stage in RANKED_STAGES and mark.rank is not None:
        return f"rank {mark.rank}{where}" + (f": {mark.note}" if mark.note else "")
    return (mark.note or "✓") + where


def cell(p: GoldPassage, stage: str) -> str:
    """A table cell: ✓ with the rank/hop of the best iteration, ✗, or · when the stage never ran."""
    best = p.best(stage)
    if best is None:
        return "·"
    if not best.reached:
        return "✗"
    where = f" it{best.iteration}" if best.iteration != RUN_LEVEL and _iterations(p, stage) > 1 else ""
    if best.stage == BEAM and best.hop is not None:
        return f"✓ hop {best.hop}{where}"
    if best.rank is not None and stage in (*RANKED_STAGES, FOUND):
        return f"✓ {best.rank}{where}"
    return f"✓{where}"


def passage_evidence(p: GoldPassage, stages: Sequence[str], k: int) -> list[str]:
    """One line per stage that ran: the best any iteration achieved, or why it was missed."""
    lines = []
    for stage in stages:
        best = p.best(stage)
        if best is None:
            continue
        iterations = sorted({m.iteration for m in p.marks if m.stage == stage})
        if not best.reached and len(iterations) > 1:
            notes = {m.note for m in p.marks if m.stage == stage}
            note = f" {best.note}" if best.note and len(notes) == 1 else ""
            lines.append(f"{stage_label(stage, k)}: ✗{note} (iterations {iterations[0]}–{iterations[-1]})")
        else:
            lines.append(f"{stage_label(stage, k)}: {describe(best)}")
    return lines


def named(p: GoldPassage, stage: str, k: int, text: str) -> str:
    """An evidence line about one gold passage at one stage, as the invariant reads it: "'Title' (stage): …"."""
    return f"'{p.title}' ({stage_label(stage, k)}): {text}"


def lost_cause(category: str, p: GoldPassage, stage: str, k: int, text: str, weak: bool = False,
               refs: Sequence[Ref] = ()) -> Cause:
    """A cause that explains the passage's loss at `stage`, its evidence line named as the invariant reads it, with
    what the line rests on."""
    return Cause(category, (named(p, stage, k, text),), weak, passage=p.id, stage=stage, refs=tuple(refs))


def at(mark: StageMark | None) -> str:
    """"rank 3 in iteration 2" (or "rank 3" for a once-per-run stage)."""
    if mark is None or mark.rank is None:
        return "—"
    return f"rank {mark.rank}" + (f" in iteration {mark.iteration}" if mark.iteration != RUN_LEVEL else "")


def quoted(answers: Sequence[str]) -> str:
    return " / ".join(repr(a) for a in answers) or "none recorded"


def _iterations(p: GoldPassage, stage: str) -> int:
    return len({m.iteration for m in p.marks if m.stage == stage})
