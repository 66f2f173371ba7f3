"""What tripleLink's two sub-steps show in a lesson (gear.viz.lesson.link_steps): how a proximal triple — a fact in
the reader's own words — becomes an initial node, an index triple the graph walk can start from.

"link-match" draws the matching itself: the proximal triples in a column on the left, the index triples they found
on the right, an arrow with the cosine between each pair (two proximal triples that land on one index triple meet
there). "link-nodes" draws the distinct index triples found as edges of the index's graph, at the places the beam
search's lesson of the same iteration gives them, so the next step (the initial beams) opens on the same picture.
Imports no Streamlit; every label is escaped by gear.viz.graph.graph_html and the handout's SVG.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import networkx as nx

from gear.events import BeamsSearched, TriplesLinked
from gear.trace import PassageView, TripleLinkView, TripleView
from gear.viz import layout
from gear.viz.beam_lesson import add_triple, entity, lesson_layout, source_line, tooltip
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

PROXIMAL_COLOUR = "#fff4e6"  # the reader's words: not in the index
INDEX_COLOUR = "#e7f5ff"
MATCH_COLOUR = "#1971c2"
BOX_TEXT = 44  # characters of a triple a box shows (the tooltip holds it whole)
COLUMN_GAP = 160.0  # px between the two columns' boxes: room for the similarity on the arrow


def _linked(e: TriplesLinked) -> dict[int, tuple[TripleView, list[TripleLinkView]]]:
    """Each distinct index triple found, with the links (proximal triples) that found it, in the order found."""
    found: dict[int, tuple[TripleView, list[TripleLinkView]]] = {}
    for link in e.links:
        if link.linked is not None:
            found.setdefault(link.linked.id, (link.linked, []))[1].append(link)
    return found


def match_picture(e: TriplesLinked, passages: Mapping[int, PassageView] | None = None) -> Picture:
    passages = passages or {}
    g = nx.MultiDiGraph()
    for n, link in enumerate(e.links):
        text = spo_text(link.proximal)
        g.add_node(f"p{n:d}", label=short(text, BOX_TEXT), shape="box", color=PROXIMAL_COLOUR, gold=False,
                   title=f"<b>{esc_html(text)}</b><br>proximal triple {n + 1:d}: written by the reader"
                         + ("" if link.linked else "<br>no index triple found"))
    for tid, (tv, links) in _linked(e).items():
        text = spo_text(tv.spo)
        g.add_node(f"t{tid:d}", label=short(text, BOX_TEXT), shape="box", color=INDEX_COLOUR, gold=tv.gold,
                   title=f"<b>{esc_html(text)}</b><br>index triple #{tid:d}, found by {len(links)} proximal "
                         f"triple{'s' if len(links) != 1 else ''}<br>{source_line(tv, passages)}")
    for n, link in enumerate(e.links):
        if link.linked is None:
            continue
        g.add_edge(f"p{n}", f"t{link.linked.id}", key=n, label=f"cos {link.similarity:.2f}", color=MATCH_COLOUR,
                   width=1.5 + 3.0 * max(0.0, link.similarity), gold=False,
                   title=f"{esc_html(spo_text(link.proximal))} → {esc_html(spo_text(link.linked.spo))}<br>cosine "
                         f"{link.similarity:.3f}")
    boxes = node_boxes(g)
    left = [k for k in g.nodes if str(k).startswith("p")]
    right = [k for k in g.nodes if str(k).startswith("t")]
    half_left = max((boxes[k].right for k in left), default=0.0)
    half_right = max((boxes[k].left for k in right), default=0.0)
    x_right = half_left + COLUMN_GAP + half_right
    positions: dict[Any, layout.Point] = {}
    for column, x in ((left, 0.0), (right, x_right)):
        y = 0.0
        step = max((boxes[k].height for k in column), default=0.0) + layout.GAP
        # the right column centred on the left one, so the arrows run level where they can
        offset = (len(left) - len(column)) * step / 2 if column is right else 0.0
        for k in column:
            positions[k] = (x, offset + y)
            y += step
    legend = [("node", PROXIMAL_COLOUR, "proximal triple t′ (the reader's words)"),
              ("node", INDEX_COLOUR, "index triple h¹_base(t′, T)"), ("edge", MATCH_COLOUR, "matched (cosine)")]
    positions = layout.place_labels(g, positions, boxes)
    return Picture(g, positions, layout.bounds(positions, boxes), legend, flow=False)


def nodes_picture(e: TriplesLinked, beams: BeamsSearched | None = None,
                  passages: Mapping[int, PassageView] | None = None) -> Picture:
    """The initial nodes as edges between entities; at the beam lesson's places when the search of the same
    iteration is in the trace (with its candidates), so the picture does not jump at the next step."""
    passages = passages or {}
    g = nx.MultiDiGraph()
    for tv, links in _linked(e).values():
        found_by = [f"found by t′ = {esc_html(spo_text(x.proximal))} (cos {x.similarity:.3f})" for x in links[:6]]
        add_triple(g, tv, color=HOP_COLOURS[0], width=4.0,
                   title=tooltip(tv, [*found_by, f"best cosine {max(x.similarity for x in links):.3f}"], passages))
        g.nodes[entity(tv.subject)]["start"] = True
    for _, data in g.nodes(data=True):
        data["color"] = START_ENTITY_COLOUR if data["start"] else ENTITY_COLOUR
        data["title"] = f"<b>{esc_html(data['label'])}</b>" + ("<br>start entity" if data["start"] else "")
    legend = [("edge", HOP_COLOURS[0], "initial node (index triple)"), ("node", START_ENTITY_COLOUR, "start entity"),
              ("node", ENTITY_COLOUR, "other entity")]
    if beams is not None and beams.recorded and beams.steps:
        positions, frame = lesson_layout(beams)
        if all(k in positions for k in g.nodes):
            return Picture(g, picture_positions(g, positions), frame, legend)
    positions = place(g, flow=True)
    return Picture(g, positions, layout.bounds(positions, node_boxes(g)), legend)


def picture(e: TriplesLinked, phase: str, beams: BeamsSearched | None = None,
            passages: Mapping[int, PassageView] | None = None) -> Picture:
    return match_picture(e, passages) if phase == "link-match" else nodes_picture(e, beams, passages)


def rows(e: TriplesLinked, phase: str) -> list[dict[str, Any]]:
    """The sub-step's table (numbers as recorded: gear.viz.tables shows them with two decimals)."""
    if phase == "link-match":
        return [{"t′ (proximal)": spo_text(link.proximal),
                 "h¹_base(t′, T)": spo_text(link.linked.spo) if link.linked else "— (nothing found)",
                 "cosine": link.similarity if link.linked else None,
                 "source passage": link.linked.passage_title if link.linked else "",
                 "gold": "★" if link.linked and link.linked.gold else ""} for link in e.links]
    return [{"n": n, "initial node": spo_text(tv.spo), "found by": len(links),
             "best cosine": max(x.similarity for x in links), "source passage": tv.passage_title,
             "gold": "★" if tv.gold else ""} for n, (tv, links) in enumerate(_linked(e).values(), 1)]
