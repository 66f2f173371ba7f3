"""A recorded beam search beside the same search with other knobs (gear.agent.beam_replay, `Engine.replay_beams`): the
two final beam lists as tables with the beams that entered or left marked, and what changed in words — the passages
C̃q gained and lost, the gold passages a kept beam reaches now or no longer. Shared by the lesson's knobs (the app)
and `gear replay-beams`, so both say the same. Takes the two BeamsSearched events and the replay's lists (this package
does not import the agent).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gear.events import BeamsSearched
from gear.viz.graph import spo_text
from gear.viz.tables import MARK

#: the knobs, as the lesson's address and the command line name them, with the BeamsSearched field each sets
KNOBS = {"b": "width", "l": "length", "gamma": "gamma", "neighbours": "max_neighbours", "diversity": "diversity"}
#: the values a lesson offers (a link asking for more is refused: l = 5 over a large index takes long)
RANGES = {"b": (1, 50), "l": (1, 4), "gamma": (0, 100), "neighbours": (1, 200)}


def parse_knobs(params: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """The knobs an address names (`b=3&diversity=off`), by the names of KNOBS, and what was wrong with any other
    (a link is untrusted input: out of range, not a number)."""
    found: dict[str, Any] = {}
    problems = []
    for name in KNOBS:
        raw = params.get(name)
        if raw is None:
            continue
        text = str(raw).strip().lower()
        if name == "diversity":
            if text in ("on", "off"):
                found[name] = text == "on"
            else:
                problems.append(f"diversity is on or off, not “{short_text(raw)}”")
            continue
        lo, hi = RANGES[name]
        try:
            value = float(text) if name == "gamma" else int(text)
        except ValueError:
            problems.append(f"{name} is a number from {lo} to {hi}, not “{short_text(raw)}”")
            continue
        if not lo <= value <= hi or value != value:
            problems.append(f"{name} is a number from {lo} to {hi}, not {short_text(raw)}")
            continue
        found[name] = value
    return found, problems


def short_text(raw: object) -> str:
    text = " ".join(str(raw).split())
    return text if len(text) <= 20 else text[:19] + "…"


def address_knobs(knobs: Mapping[str, Any], recorded: BeamsSearched) -> dict[str, str]:
    """The knobs that differ from the recorded search, as an address writes them (parse_knobs reads them back)."""
    base = knobs_of(recorded)
    out: dict[str, str] = {}
    for name, value in knobs.items():
        if name not in KNOBS or value is None or value == base[name]:
            continue
        out[name] = ("on" if value else "off") if name == "diversity" else f"{value:g}" if name == "gamma" else \
            str(int(value))
    return out


def replay_args(knobs: Mapping[str, Any]) -> dict[str, Any]:
    """Knobs by the names of KNOBS as Engine.replay_beams takes them (γ 0: 2b of the width)."""
    return {KNOBS[name]: value for name, value in knobs.items() if name in KNOBS}


def knobs_of(e: BeamsSearched) -> dict[str, Any]:
    """A search's knobs by the names of KNOBS."""
    return {name: getattr(e, field) for name, field in KNOBS.items()}


def knob_line(e: BeamsSearched) -> str:
    return (f"b = {e.width}, l = {e.length}, γ = {e.gamma:g}, at most {e.max_neighbours} neighbours, "
            f"diversity {'on' if e.diversity else 'off'}")


def final_beams(e: BeamsSearched) -> list[tuple[int, ...]]:
    return [tuple(b.triple_ids) for b in e.steps[-1]] if e.steps else []


def beam_rows(e: BeamsSearched, other: BeamsSearched, change: str) -> list[dict[str, Any]]:
    """`e`'s final beams as a table; a beam not among `other`'s is marked `change` ("entered" in the new search's
    table, "left" in the recorded one's)."""
    triples = {x.id: x for x in [*e.triples, *e.candidate_triples]}
    others = set(final_beams(other))
    rows = []
    for n, b in enumerate(e.steps[-1] if e.steps else [], 1):
        ids = tuple(b.triple_ids)
        moved = ids not in others
        rows.append({"beam": n, "score": b.score,
                     "triples": " → ".join(spo_text(triples[x].spo) if x in triples else f"#{x}" for x in ids),
                     "change": change if moved else "",
                     "gold": "★" if any(x in triples and triples[x].gold for x in ids) else "",
                     MARK: ("in" if change == "entered" else "out") if moved else ""})
    return rows


def _passages(ids: Sequence[int], titles: Mapping[int, str]) -> str:
    return ", ".join(f"#{p} {titles[p]}" if p in titles else f"#{p}" for p in ids)


def change_lines(recorded: BeamsSearched, new: BeamsSearched, entered: Sequence[Any], left: Sequence[Any],
                 gained: Sequence[int], lost: Sequence[int], gold_reached: Sequence[int],
                 gold_unreached: Sequence[int], titles: Mapping[int, str]) -> list[str]:
    """What the new knobs changed, in plain sentences (escape them where they are shown)."""
    if knobs_of(recorded) == knobs_of(new):
        return [f"The recorded knobs ({knob_line(recorded)}): the search comes out as recorded."
                if not (entered or left) else
                "The recorded knobs, yet other beams: the index is not the one the run was made on."]
    lines = [f"Recorded: {knob_line(recorded)}. Now: {knob_line(new)}."]
    if not entered and not left:
        lines.append("The same beams are kept: these knobs change nothing the run goes on with.")
    else:
        lines.append(f"{len(entered)} beam{'s' if len(entered) != 1 else ''} entered the kept set and "
                     f"{len(left)} left it (marked in the tables).")
    if gained:
        lines.append(f"Passages the beams now bring (C̃q): {_passages(gained, titles)}.")
    if lost:
        lines.append(f"Passages they no longer bring: {_passages(lost, titles)}.")
    if gold_reached:
        lines.append(f"★ Gold reached now: {_passages(gold_reached, titles)}.")
    if gold_unreached:
        lines.append(f"★ Gold no longer reached: {_passages(gold_unreached, titles)}.")
    if not (gained or lost):
        lines.append("The beams' passages are the same.")
    return lines
