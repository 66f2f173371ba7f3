"""What each step of Algorithm 1 changed, in words a class can follow: a hop's candidates in their two orders — by s′,
then by s′ × the diversity penalty's factor — which ones the penalty pushed out of the top b or brought into it,
and which beams the top b kept and which it dropped, with the score and the place that decided.

Pure functions of a BeamsSearched event. The places are those among the candidates the trace shows (the first few
of each beam and every kept one: BeamsSearched.recorded); the lesson's table shows the same rows, so the sentence and
the table agree. Used by gear.viz.lesson (the sentences) and gear.viz.beam_lesson (the marked rows).
"""

from __future__ import annotations

from dataclasses import dataclass

from gear.events import BeamsSearched
from gear.trace import CandidateView, TripleView
from gear.viz.graph import spo_text

NAMED = 4  # candidates a sentence names before "and N more"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st …"""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@dataclass(frozen=True)
class Candidate:
    """One row of a hop: the beam it extends (0-based), the candidate, its places by s′ and by s′ × factor."""

    beam: int
    candidate: CandidateView
    before: int
    after: int


@dataclass(frozen=True)
class HopOrder:
    """A hop's candidates as the trace shows them (in beam order), their two orders, and what the penalty changed:
    `dropped` were in the top b by s′ and are not kept, `lifted` were not and are kept."""

    width: int
    rows: list[Candidate]
    total: int  # candidates weighed, shown or not

    @property
    def shown(self) -> int:
        return sum(1 for r in self.rows if r.candidate.triple_id >= 0)

    @property
    def dropped(self) -> list[Candidate]:
        return sorted((r for r in self.rows if r.before <= self.width and not r.candidate.kept), key=lambda r: r.before)

    @property
    def lifted(self) -> list[Candidate]:
        return sorted((r for r in self.rows if r.before > self.width and r.candidate.kept), key=lambda r: r.after)

    def mark(self, row: Candidate) -> str:
        """"out" for a row the penalty dropped, "in" for one it kept, "" else (gear.viz.tables.MARK)."""
        return "out" if row in self.dropped else "in" if row in self.lifted else ""

    def effect(self, row: Candidate) -> str:
        """What the penalty did to a row, in a table's words: "dropped (9th → 11th)"."""
        mark = self.mark(row)
        if not mark:
            return ""
        return f"{'dropped' if mark == 'out' else 'kept'} ({ordinal(row.before)} → {ordinal(row.after)})"


def hop_order(e: BeamsSearched, hop: int) -> HopOrder:
    """Hop `hop` (from 1) of the search: its candidates, their places before and after the penalty (ties in beam
    order, as the table lists them)."""
    found = [(v.beam, c) for v in e.hops[hop - 1] for c in v.candidates] if 0 < hop <= len(e.hops) else []
    before = sorted(range(len(found)), key=lambda i: (-found[i][1].accumulated, i))
    after = sorted(range(len(found)), key=lambda i: (-found[i][1].score, i))
    place_before = {i: n for n, i in enumerate(before, 1)}
    place_after = {i: n for n, i in enumerate(after, 1)}
    rows = [Candidate(beam, c, place_before[i], place_after[i]) for i, (beam, c) in enumerate(found)]
    total = sum(v.total for v in e.hops[hop - 1]) if 0 < hop <= len(e.hops) else 0
    return HopOrder(e.width, rows, total)


def _triples(e: BeamsSearched) -> dict[int, TripleView]:
    return {x.id: x for x in [*e.triples, *e.candidate_triples]}


def _name(e: BeamsSearched, row: Candidate) -> str:
    """A candidate as a sentence names it: its triple and the beam it extends (one triple may extend two beams)."""
    tid = row.candidate.triple_id
    if tid < 0:
        return f"beam {row.beam + 1} carried forward"
    triples = _triples(e)
    return f"{spo_text(triples[tid].spo) if tid in triples else f'triple #{tid}'} on beam {row.beam + 1}"


def _listed(parts: list[str]) -> str:
    shown = parts[:NAMED]
    more = f" and {len(parts) - NAMED} more" if len(parts) > NAMED else ""
    if len(shown) == 1:
        return shown[0] + more
    return ", ".join(shown[:-1]) + (f", {shown[-1]}{more}" if more else f" and {shown[-1]}")


def _among(order: HopOrder) -> str:
    return (f" (places among the {len(order.rows)} candidates shown of {order.total})"
            if order.shown < order.total else "")


def penalty_sentence(e: BeamsSearched, hop: int) -> str:
    """What the diversity penalty changed at a hop, said out loud: "The penalty dropped X (9th → 11th) and kept Y
    (11th → 10th)", or that it changed no beam's fate."""
    if not e.diversity:
        return ""
    order = hop_order(e, hop)
    dropped, lifted = order.dropped, order.lifted
    if not dropped and not lifted:
        return (f"Here the penalty reorders the candidates but changes no beam's fate: the top b = {e.width} by s′ are "
                f"the top b after it{_among(order)}.")
    said = []
    if dropped:
        said.append("dropped " + _listed([f"{_name(e, r)} ({ordinal(r.before)} → "
                                          f"{ordinal(r.after)})" for r in dropped]))
    if lifted:
        said.append("kept " + _listed([f"{_name(e, r)} ({ordinal(r.before)} → "
                                       f"{ordinal(r.after)})" for r in lifted]))
    return (f"The penalty changed which beams go on: it {' and '.join(said)} — the top b = {e.width} by s′ are not "
            f"the top b after it (the rows marked in the table){_among(order)}.")


def cut_sentence(e: BeamsSearched, hop: int) -> str:
    """Which beams the top b kept at a hop and which it dropped, and why: their places and weighted scores against
    the b-th."""
    order = hop_order(e, hop)
    kept = sorted((r for r in order.rows if r.candidate.kept), key=lambda r: r.after)
    dropped = sorted((r for r in order.rows if not r.candidate.kept), key=lambda r: r.after)
    if not order.rows:
        return ""
    if not dropped:
        return (f"Every candidate fits: {len(kept)} kept, no more than b = {e.width}" + _among(order) + ".")
    last = kept[-1] if kept else None
    line = (f"Kept: the {len(kept)} best by s′ × factor, down to {ordinal(last.after)} place at "
            f"{last.candidate.score:.2f}" if last else "Kept: none")
    line += " — " + _listed([f"{_name(e, r)} ({ordinal(r.after)}, {r.candidate.score:.2f})"
                             for r in kept]) + ". "
    line += (f"Dropped, for ranking below place b = {e.width}: "
             + _listed([f"{_name(e, r)} ({ordinal(r.after)}, {r.candidate.score:.2f})"
                        for r in dropped]) + _among(order) + ".")
    return line


def initial_sentence(e: BeamsSearched) -> str:
    """Which initial triples B0 kept and which it dropped (their score(q, [t]) and place against b)."""
    ranked = sorted(e.initial_candidates, key=lambda c: (c.rank, -c.score))
    dropped = [c for c in ranked if not c.kept]
    if not dropped:
        return ""
    kept = [c for c in ranked if c.kept]
    triples = _triples(e)
    floor = f" (the last kept scores {kept[-1].score:.2f})" if kept else ""
    return (f"Dropped, for ranking below place b = {e.width}{floor}: "
            + _listed([f"{spo_text(triples[c.triple_id].spo) if c.triple_id in triples else c.triple_id} "
                       f"({ordinal(n)}, {c.score:.2f})" for n, c in enumerate(ranked, 1) if not c.kept]) + ".")
