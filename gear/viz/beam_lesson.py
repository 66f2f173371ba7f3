"""What each sub-step of the beam-search lesson shows (gear.viz.lesson.beam_steps): its table rows and its picture.

The picture of one iteration's search is ONE graph laid out once — every entity any initial triple, candidate or beam
touches, in columns from the start entities — and each sub-step draws the part it has reached at those places: the
graph grows hop by hop and no node moves. Candidates are dashed, the kept ones take their hop's colour, the dropped
ones are greyed out. Imports no Streamlit; every label is escaped by gear.viz.graph.graph_html.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx

from gear.events import BeamsSearched
from gear.store.graph import normalise_entity
from gear.trace import CandidateView, PassageView, TripleView
from gear.viz import beam_order, layout
from gear.viz.graph import (
    ENTITY_COLOUR,
    HOP_COLOURS,
    START_ENTITY_COLOUR,
    esc_html,
    node_boxes,
    picture_positions,
    place,
    short,
    spo_text,
)
from gear.viz.picture import Picture
from gear.viz.tables import MARK

CANDIDATE_COLOUR = "#495057"
DROPPED_COLOUR = "#ced4da"
DROPPED_TEXT = "#adb5bd"
FADED_NODE = "#f1f3f5"


def triples_of(e: BeamsSearched) -> dict[int, TripleView]:
    return {x.id: x for x in [*e.triples, *e.candidate_triples]}


def entity(name: str) -> str:
    return normalise_entity(name) or name


LABEL = 48  # characters of an entity's name the lesson's picture shows (wrapped into lines; the tooltip holds it all)
#: the widest second line an edge label of any sub-step carries: the whole search's layout keeps room for it
NUMBERS = "×0.00 = 0.00"


def add_triple(g: nx.MultiDiGraph, tv: TripleView, **attrs: Any) -> None:
    """A triple as an edge between its two entities (nodes keyed by the normalised name, a gold triple's marked)."""
    head, tail = entity(tv.subject), entity(tv.object)
    for key, name in ((head, tv.subject), (tail, tv.object)):
        if key not in g:
            g.add_node(key, label=short(name, LABEL), gold=False, start=False, shape="box")
        if tv.gold:
            g.nodes[key]["gold"] = True
    g.add_edge(head, tail, key=tv.id, label=tv.predicate, gold=tv.gold, **attrs)


def whole_graph(e: BeamsSearched) -> nx.MultiDiGraph:
    """Every triple the search weighed, as one graph (its layout is the lesson's)."""
    triples = triples_of(e)
    g = nx.MultiDiGraph()
    ids = [c.triple_id for c in e.initial_candidates]
    ids += [c.triple_id for hop in e.hops for v in hop for c in v.candidates if c.triple_id >= 0]
    ids += [x for step in e.steps for b in step for x in b.triple_ids]
    for tid in dict.fromkeys(ids):
        if tid in triples:
            add_triple(g, triples[tid])
    for _, _, data in g.edges(data=True):  # room for the numbers any sub-step writes under the predicate
        data["label"] = f"{data['label']}\n{NUMBERS}"
    for c in e.initial_candidates:
        if c.triple_id in triples:
            g.nodes[entity(triples[c.triple_id].subject)]["start"] = True
    return g


def lesson_layout(e: BeamsSearched) -> tuple[dict[Any, layout.Point], tuple[float, float, float, float]]:
    g = whole_graph(e)
    positions = place(g, flow=True)
    return positions, layout.bounds(positions, node_boxes(g))


def source_line(tv: TripleView, passages: Mapping[int, PassageView]) -> str:
    """"source passage #12: <i>Title</i> ★ gold" (escaped)."""
    passage = passages.get(tv.passage_id)
    title = passage.title if passage else tv.passage_title
    return f"source passage #{tv.passage_id:d}: <i>{esc_html(title)}</i>" + (" ★ gold" if tv.gold else "")


def tooltip(tv: TripleView, lines: list[str], passages: Mapping[int, PassageView]) -> str:
    """A triple's tooltip: the triple, `lines` (escaped by the caller), its source passage."""
    return "<br>".join([f"<b>{esc_html(spo_text(tv.spo))}</b>", *lines, source_line(tv, passages)])


def picture(e: BeamsSearched, phase: str, hop: int, passages: Mapping[int, PassageView] | None = None) -> Picture:
    """The graph of one sub-step: what the search has reached by then, at the whole search's positions."""
    passages = passages or {}
    triples = triples_of(e)
    positions, frame = lesson_layout(e)
    g = nx.MultiDiGraph()
    reached: set[str] = set()  # entities drawn at an earlier sub-step stay, greyed when no beam holds them now

    def beams_at(step: int, colour_from: int = 0) -> None:
        for b, beam in enumerate(e.steps[step] if step < len(e.steps) else [], 1):
            for pos, tid in enumerate(beam.triple_ids):
                if tid not in triples or g.has_edge(entity(triples[tid].subject), entity(triples[tid].object), tid):
                    continue
                where = "the start" if pos == 0 else f"hop {pos}"
                add_triple(g, triples[tid], color=HOP_COLOURS[min(pos, 3)], width=4.0 if pos >= colour_from else 2.5,
                      title=tooltip(triples[tid], [f"in beam {b} of B{step} at {where}"], passages))

    def candidates(found: list[tuple[int, CandidateView]], show: str) -> None:
        best: dict[int, tuple[int, CandidateView]] = {}
        for beam_no, c in found:
            if c.triple_id >= 0 and (c.triple_id not in best or (c.kept and not best[c.triple_id][1].kept)):
                best[c.triple_id] = (beam_no, c)
        for tid, (beam_no, c) in best.items():
            tv = triples.get(tid)
            if tv is None or g.has_edge(entity(tv.subject), entity(tv.object), tid):
                continue
            numbers = (f"beam {beam_no} · n = {c.rank} · score(q, T∘t) {c.hop_score:.3f} · s′ {c.accumulated:.3f} · "
                       f"×{c.penalty:.3f} → {c.score:.3f} · {'kept' if c.kept else 'dropped'}")
            label = {"candidates": tv.predicate, "scores": f"{tv.predicate}\ns′ {c.accumulated:.2f}",
                     "penalty": f"{tv.predicate}\n×{c.penalty:.2f} = {c.score:.2f}",
                     "kept": f"{tv.predicate}\n{c.score:.2f}"}[show]
            if show == "kept":
                colour = HOP_COLOURS[min(hop, 3)] if c.kept else DROPPED_COLOUR
                add_triple(g, tv, color=colour, width=4.0 if c.kept else 1.5, dashes=not c.kept, label_text=label,
                      font_color=None if c.kept else DROPPED_TEXT, title=tooltip(tv, [numbers], passages))
            else:
                add_triple(g, tv, color=CANDIDATE_COLOUR, width=1.5, dashes=True, label_text=label,
                      title=tooltip(tv, [numbers], passages))

    # what earlier sub-steps reached (their entities keep their places, greyed when nothing current holds them)
    for c in e.initial_candidates:
        if c.triple_id in triples:
            reached |= {entity(triples[c.triple_id].subject), entity(triples[c.triple_id].object)}
    for i, h in enumerate(e.hops, 1):
        if i > hop or (i == hop and phase == "initial"):
            break
        for v in h:
            for c in v.candidates:
                if c.triple_id in triples:
                    reached |= {entity(triples[c.triple_id].subject), entity(triples[c.triple_id].object)}
    if phase == "initial":
        for c in e.initial_candidates:
            tv = triples.get(c.triple_id)
            if tv is None:
                continue
            add_triple(g, tv, color=HOP_COLOURS[0] if c.kept else DROPPED_COLOUR, width=4.0 if c.kept else 1.5,
                  dashes=not c.kept, label_text=f"{tv.predicate}\n{c.score:.2f}",
                  font_color=None if c.kept else DROPPED_TEXT,
                  title=tooltip(tv, [f"score(q, [t]) {c.score:.3f} · {'kept' if c.kept else 'dropped'}"], passages))
    elif phase == "kept":
        beams_at(hop, hop)
        candidates([(v.beam + 1, c) for v in e.hops[hop - 1] for c in v.candidates], "kept")
    else:
        beams_at(hop - 1)
        candidates([(v.beam + 1, c) for v in e.hops[hop - 1] for c in v.candidates], phase)
    for _, _, data in g.edges(data=True):
        if "label_text" in data:
            data["label"] = data.pop("label_text")
    current = set(g.nodes)
    for key in reached - current:
        if key in positions:
            name = next((n for tv in triples.values() for n, k in ((tv.subject, entity(tv.subject)),
                                                                   (tv.object, entity(tv.object))) if k == key), key)
            g.add_node(key, label=short(name, LABEL), gold=False, start=False, faded=True, shape="box")
    starts = {entity(triples[b.triple_ids[0]].subject) for step in e.steps[: max(1, hop + 1)] for b in step
              if b.triple_ids and b.triple_ids[0] in triples}
    for key, data in g.nodes(data=True):
        faded = data.get("faded", False)
        data["color"] = FADED_NODE if faded else (START_ENTITY_COLOUR if key in starts else ENTITY_COLOUR)
        if faded:
            data["font_color"] = DROPPED_TEXT
            data["border"] = DROPPED_COLOUR
        data["title"] = f"<b>{esc_html(data['label'])}</b>" + ("<br>in no beam now" if faded else "")
    legend = [("edge", HOP_COLOURS[0], "initial triple"), ("edge", HOP_COLOURS[1], "hop 1"),
              *([("edge", HOP_COLOURS[2], "hop 2")] if len(e.hops) > 1 else []),
              ("edge", CANDIDATE_COLOUR, "candidate (dashed)"), ("edge", DROPPED_COLOUR, "dropped (greyed)"),
              ("node", START_ENTITY_COLOUR, "start entity")]
    return Picture(g, picture_positions(g, positions), frame, legend)


# -- the tables --------------------------------------------------------------------------------------------------------
def _spo(triples: Mapping[int, TripleView], tid: int) -> str:
    return spo_text(triples[tid].spo) if tid in triples else f"triple #{tid}"


def _gold(triples: Mapping[int, TripleView], tid: int) -> str:
    return "★" if tid in triples and triples[tid].gold else ""


def chain(triples: Mapping[int, TripleView], ids: list[int]) -> str:
    return " → ".join(_spo(triples, x) for x in ids)


def rows(e: BeamsSearched, phase: str, hop: int) -> list[dict[str, Any]]:
    """The table of one sub-step (numbers as recorded: gear.viz.tables shows them with two decimals, as the picture
    does). The rows the diversity penalty moved across the top b are marked (gear.viz.tables.MARK) and say how."""
    triples = triples_of(e)
    if phase == "initial":
        return [{"n": c.rank, "initial triple t": _spo(triples, c.triple_id), "score(q, [t])": c.score,
                 "B0": "kept" if c.kept else "dropped", "gold": _gold(triples, c.triple_id)}
                for c in e.initial_candidates]
    previous = e.steps[hop - 1] if hop - 1 < len(e.steps) else []
    order = beam_order.hop_order(e, hop)

    def beam_of(r: beam_order.Candidate) -> Any:
        return previous[r.beam] if r.beam < len(previous) else None

    def candidate(r: beam_order.Candidate, carried: str = "(carried)") -> str:
        return _spo(triples, r.candidate.triple_id) if r.candidate.triple_id >= 0 else carried

    totals = {v.beam: v.total for v in e.hops[hop - 1]} if 0 < hop <= len(e.hops) else {}
    if phase == "candidates":
        return [{"beam": r.beam + 1, "T (the beam's chain)": chain(triples, b.triple_ids) if (b := beam_of(r)) else "",
                 "s": b.score if b else None, "candidate t": candidate(r, "(none left: carried forward)"),
                 "|V|": totals.get(r.beam, 0), "gold": _gold(triples, r.candidate.triple_id)} for r in order.rows]
    if phase == "scores":
        return [{"beam": r.beam + 1, "candidate t": candidate(r), "s": b.score if (b := beam_of(r)) else None,
                 "score(q, T∘t)": r.candidate.hop_score, "s′ = s + score": r.candidate.accumulated,
                 "gold": _gold(triples, r.candidate.triple_id)} for r in order.rows]
    if phase == "penalty":
        return [{"beam": r.beam + 1, "n": r.candidate.rank, "candidate t": candidate(r), "s′": r.candidate.accumulated,
                 "factor": r.candidate.penalty, "s′ × factor": r.candidate.score,
                 "order by s′": r.before, "order after": r.after, "the penalty": order.effect(r),
                 "gold": _gold(triples, r.candidate.triple_id), MARK: order.mark(r)} for r in order.rows]
    return [{"place": r.after, "beam": r.beam + 1, "candidate t": candidate(r), "s′ × factor": r.candidate.score,
             f"B{hop}": "kept" if r.candidate.kept else "dropped", "the penalty": order.effect(r),
             "gold": _gold(triples, r.candidate.triple_id), MARK: order.mark(r)}
            for r in sorted(order.rows, key=lambda r: r.after)]


# -- Algorithm 1 beside it ---------------------------------------------------------------------------------------------
ALGORITHM_CSS = """
.alg1 { font-family: 'Liberation Mono', 'DejaVu Sans Mono', monospace; font-size: 13px; line-height: 1.45;
        background: #f8f9fa; border: 1px solid #dee2e6; border-radius: 6px; padding: 8px 6px; margin: 0;
        color: #495057; }
.alg1 .l { display: flex; align-items: baseline; }
.alg1 .ln { flex: none; width: 1.8em; text-align: right; margin-right: 0.6em; color: #adb5bd; }
.alg1 .code { flex: 1; min-width: 0; white-space: pre-wrap; }
.alg1 .on { background: #fff3bf; color: #212529; font-weight: 700; border-left: 4px solid #f59f00;
            margin-left: -6px; padding-left: 2px; }
.alg1-title { font-weight: 700; font-size: 15px; margin: 0 0 4px 0; color: #212529; }
"""


def algorithm_html(highlight: Iterable[int], lines: Sequence[tuple[int, str]] | None = None) -> str:
    """Algorithm 1's listing as HTML (gear.retrieve.beam's numbering), the lines of the current sub-step marked. A
    line's indent is a margin, not spaces: a line too long for its column wraps under itself, not under the line
    numbers."""
    from gear.viz.lesson import ALGORITHM_1

    on = set(highlight)
    body = []
    for n, text in (lines if lines is not None else ALGORITHM_1):
        code = text.lstrip(" ")
        indent = len(text) - len(code)
        body.append(f"<div class='l{' on' if n in on else ''}'><span class='ln'>{n:d}</span>"
                    f"<span class='code' style='padding-left:{indent:d}ch'>{esc_html(code)}</span></div>")
    return ("<div class='alg1-title'>Algorithm 1 · Diverse Triple Beam Search</div>"
            f"<div class='alg1'>{''.join(body)}</div>")
