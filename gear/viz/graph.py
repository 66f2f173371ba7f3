"""The graph pictures: the beams of one iteration and an entity's neighbourhood, as networkx graphs drawn as pyvis
HTML, and the drawing itself (`graph_html`, shared with gear.viz.ppr). Imports no Streamlit.

Safety: passage text, triples and LLM output are untrusted. Every string that reaches a pyvis label or tooltip is
html-escaped here; tooltips are small HTML fragments built only from escaped strings and our own tags. The HTML is
self-contained (vis-network in line, no CDN tags), so a graph draws offline and makes no outside request.
"""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx

from gear.events import BaseRetrieved, BeamsSearched, InitialNodes, PassagesExpanded, PassagesFused, PassagesLinked
from gear.store.graph import normalise_entity
from gear.trace import PassageView, Trace, TripleView
from gear.viz import layout

# -- colours (colour-blind-safe-ish palette, distinct in print and on a projector) ------------------------------------
HOP_COLOURS = ["#e8590c", "#1971c2", "#7b2cbf", "#2b8a3e"]  # initial triple, hop 1, hop 2, hop 3+
HOP_NAMES = ["initial node (tripleLink)", "hop 1 expansion", "hop 2 expansion", "hop 3+ expansion"]
ENTITY_COLOUR = "#adb5bd"
START_ENTITY_COLOUR = "#ffc078"
CENTRE_COLOUR = "#ffd43b"
GOLD_COLOUR = "#f59f00"
FONT = "Liberation Sans, Arial, sans-serif"
PICTURE_WIDTH = 820  # px of a picture in the app's main column at 1280 px (the sidebar open)


def esc_html(text: object) -> str:
    """HTML-escape untrusted text; "href" is broken up so pyvis never switches to its link-tooltip template."""
    return html.escape(str(text), quote=True).replace("href", "hre&#102;")


def short(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def spo_text(spo: Sequence[str]) -> str:
    return "(" + ", ".join(spo) + ")"


# -- the beams of one iteration as a graph ----------------------------------------------------------------------------
def passage_lookup(trace: Trace | Iterable[Any]) -> dict[int, PassageView]:
    """Every passage a trace mentions, by id (for tooltips that show a triple's source passage)."""
    found: dict[int, PassageView] = {}
    for event in trace:
        views: list[PassageView] = []
        if isinstance(event, (BaseRetrieved, PassagesExpanded, PassagesFused)):
            views = event.passages
        elif isinstance(event, PassagesLinked):
            views = [p for link in event.links for p in link.passages]
        elif hasattr(event, "passages") and isinstance(event.passages, list):
            views = [p for p in event.passages if isinstance(p, PassageView)]
        for p in views:
            found.setdefault(p.id, p)
    return found


@dataclass(frozen=True)
class TripleUse:
    """Where a triple sits in the final beams: beam number (1-based), position (0 = initial), beam score."""

    beam: int
    position: int
    beam_score: float
    hop_score: float
    penalty: float


def beam_graph(beams: BeamsSearched, initial: InitialNodes | None = None,
               passages: Mapping[int, PassageView] | None = None) -> nx.MultiDiGraph:
    """Entities as nodes, the final beams' triples as labelled directed edges (head → tail).

    Edge attributes: label, title (escaped HTML), color (by position in the beam), width (by best beam score),
    hop, gold. Node attributes: label, title, color, start (entity of an initial triple), gold.
    """
    passages = passages or {}
    g = nx.MultiDiGraph()
    triples = {t.id: t for t in beams.triples}
    final = beams.steps[-1] if beams.steps else []
    uses: dict[int, list[TripleUse]] = defaultdict(list)
    for b, beam in enumerate(final, 1):
        for pos, tid in enumerate(beam.triple_ids):
            hop = beam.hop_scores[pos] if pos < len(beam.hop_scores) else 0.0
            pen = beam.penalties[pos] if pos < len(beam.penalties) else 1.0
            uses[tid].append(TripleUse(b, pos, beam.score, hop, pen))
    initial_ids = {t.id for t in initial.triples} if initial else set()
    scores = [u.beam_score for us in uses.values() for u in us]
    lo, hi = (min(scores), max(scores)) if scores else (0.0, 1.0)

    def width(score: float) -> float:
        return 2.0 + 5.0 * ((score - lo) / (hi - lo) if hi > lo else 1.0)

    for tid, tuses in uses.items():
        t = triples.get(tid)
        if t is None:
            continue
        pos = min(u.position for u in tuses)
        head, tail = normalise_entity(t.subject) or t.subject, normalise_entity(t.object) or t.object
        for name, key in ((t.subject, head), (t.object, tail)):
            if key not in g:
                g.add_node(key, label=name, start=False, gold=False, triples=[], shape="box")
            g.nodes[key]["triples"].append(tid)
            if pos == 0 or tid in initial_ids:
                g.nodes[key]["start"] = True
                g.nodes[key]["root"] = g.nodes[key].get("root", False) or name == t.subject
            if t.gold:
                g.nodes[key]["gold"] = True
        best = max(u.beam_score for u in tuses)
        g.add_edge(head, tail, key=tid, triple=t, uses=sorted(tuses, key=lambda u: u.beam), hop=pos, gold=t.gold,
                   label=t.predicate, color=HOP_COLOURS[min(pos, 3)], width=width(best),
                   title=_triple_tooltip(t, tuses, passages.get(t.passage_id)))
    for _, data in g.nodes(data=True):
        data["color"] = START_ENTITY_COLOUR if data["start"] else ENTITY_COLOUR
        n = len(set(data["triples"]))
        data["title"] = (f"<b>{esc_html(data['label'])}</b><br>entity in {n:d} beam triple{'s' if n != 1 else ''}"
                         + ("<br>★ in a gold passage" if data["gold"] else ""))
    return g


def _triple_tooltip(t: TripleView, uses: Sequence[TripleUse], passage: PassageView | None) -> str:
    lines = [f"<b>{esc_html(spo_text(t.spo))}</b>"]
    for u in sorted(uses, key=lambda u: u.beam)[:6]:
        where = "initial node" if u.position == 0 else f"hop {u.position}"
        lines.append(f"beam {u.beam:d} · {where} · beam score {u.beam_score:.3f} · step score {u.hop_score:.3f} · "
                     f"diversity penalty ×{u.penalty:.3f}")
    if len(uses) > 6:
        lines.append(f"… in {len(uses) - 6:d} more beams")
    title = passage.title if passage else t.passage_title
    lines.append(f"source passage #{t.passage_id:d}: <i>{esc_html(title)}</i>" + (" ★ gold" if t.gold else ""))
    if passage is not None:
        lines.append(f"<span style='color:#555'>{esc_html(short(passage.text, 240))}</span>")
    return "<br>".join(lines)


def beams_legend(gold_known: bool, source: str = "sync", hops: Iterable[int] = (0, 1)) -> list[tuple[str, str, str]]:
    """(kind, colour, text) entries describing beam_graph's encoding (only the hops that are drawn)."""
    names = list(HOP_NAMES)
    if source == "naive":
        names[0] = "initial node (NaiveGE: triple of a base passage)"
    items = [("edge", HOP_COLOURS[min(i, 3)], names[min(i, 3)]) for i in sorted(set(hops))]
    items += [("node", START_ENTITY_COLOUR, "entity of an initial node"), ("node", ENTITY_COLOUR, "other entity"),
              ("text", "#495057", "edge width = beam score")]
    if gold_known:
        items.append(("gold", GOLD_COLOUR, "★ triple from a gold passage"))
    return items


# -- pyvis rendering ---------------------------------------------------------------------------------------------------
_CDN_TAG = re.compile(r"<(link|script)\b[^>]*\b(?:href|src)\s*=\s*[\"']https?://[^>]*>(?:\s*</script>)?",
                      re.IGNORECASE | re.DOTALL)

_FIXUP = """
<script type="text/javascript">
// Tooltips are escaped HTML built by gear.viz; show them formatted, and show labels with entities decoded. Nothing a
// trace holds is ever parsed into this page: a tooltip is parsed in an inert document (DOMParser: no script runs, no
// image loads there) and copied over node by node — text as text, and only the few tags gear.viz writes, with no
// attribute but a colour.
(function () {
  var TAGS = {B: 1, I: 1, BR: 1, SPAN: 1, SMALL: 1, SUP: 1, SUB: 1};
  var COLOUR = /^color:\\s*#[0-9a-fA-F]{3,6};?$/;
  function inert(s) { return new DOMParser().parseFromString(String(s), 'text/html').body; }
  function decode(s) { return inert(s).textContent; }
  function copy(from, to) {
    from.childNodes.forEach(function (n) {
      if (n.nodeType === 3) { to.appendChild(document.createTextNode(n.nodeValue)); return; }
      if (n.nodeType !== 1) { return; }
      if (!TAGS[n.tagName]) { copy(n, to); return; }
      var e = document.createElement(n.tagName.toLowerCase());
      var style = n.getAttribute('style');
      if (style && COLOUR.test(style.trim())) { e.style.color = style.split(':')[1].replace(';', '').trim(); }
      copy(n, e);
      to.appendChild(e);
    });
  }
  function fragment(s) { var d = document.createElement('div'); d.className = 'gear-tip'; copy(inert(s), d); return d; }
  function fix(set) {
    var updates = [];
    set.forEach(function (item) {
      var u = {id: item.id};
      if (typeof item.title === 'string') { u.title = fragment(item.title); }
      if (typeof item.label === 'string') { u.label = decode(item.label); }
      updates.push(u);
    });
    set.update(updates);
  }
  if (typeof nodes !== 'undefined') { fix(nodes); }
  if (typeof edges !== 'undefined') { fix(edges); }
  // The nodes stand where gear.viz.layout put them (no physics: the same picture on every load); the camera shows
  // FRAME — every node's label box — whole, centred, never zoomed in beyond 1, again whenever the frame is resized.
  if (typeof network !== 'undefined') {
    var frame = FRAME;
    var place = function () {
      var canvas = network.canvas.frame.canvas;
      var w = canvas.clientWidth, h = canvas.clientHeight;
      if (!w || !h) { return; }
      var scale = Math.min(1.0, 0.96 * Math.min(w / (frame[2] - frame[0]), h / (frame[3] - frame[1])));
      network.moveTo({position: {x: (frame[0] + frame[2]) / 2, y: (frame[1] + frame[3]) / 2}, scale: scale,
                      animation: false});
    };
    place();
    network.once('afterDrawing', function () { place(); window.gearFitted = true; });
    network.on('resize', function () { setTimeout(place, 0); });
  }
  window.gearReady = true;
})();
</script>
"""
FLOW_EDGES = {"type": "cubicBezier", "forceDirection": "horizontal", "roundness": 0.4}
# physics off: every node stands where gear.viz.layout put it (vis-network's hierarchical layout scattered a graph with
# a cycle across ±5,900 px, and its physics drew a different picture on every load)
FIXED = {"physics": {"enabled": False}, "layout": {"randomSeed": 1, "improvedLayout": False}}

_STYLE = f"""
<style>
  body {{ margin: 0; font-family: {FONT}; background: #ffffff; }}
  #mynetwork {{ border: none !important; }}
  .card {{ border: none !important; }}
  div.vis-tooltip {{ font-family: {FONT}; font-size: 14px; max-width: 520px; white-space: normal;
                    line-height: 1.35; padding: 8px 10px; background: #fffdf5; border: 1px solid #c9c9c9; }}
  .gear-legend {{ display: flex; flex-wrap: wrap; gap: 6px 18px; padding: 6px 10px; font-size: 14px;
                  color: #212529; border-bottom: 1px solid #e9ecef; }}
  .gear-legend span.sw {{ display: inline-block; vertical-align: middle; margin-right: 6px; }}
</style>
"""


def _legend_html(items: Sequence[tuple[str, str, str]]) -> str:
    parts = []
    for kind, colour, text in items:
        if kind == "edge":
            sw = f"<span class='sw' style='width:26px;height:4px;background:{colour}'></span>"
        elif kind == "node":
            sw = (f"<span class='sw' style='width:14px;height:14px;border-radius:50%;background:{colour};"
                  "border:1px solid #868e96'></span>")
        elif kind == "gold":
            sw = (f"<span class='sw' style='width:14px;height:14px;border-radius:50%;background:#fff;"
                  f"border:3px solid {colour}'></span>")
        else:
            sw = ""
        parts.append(f"<div>{sw}{esc_html(text)}</div>")
    return "<div class='gear-legend'>" + "".join(parts) + "</div>"


def node_text(key: object, data: Mapping[str, Any]) -> str:
    """A node's label as drawn, not yet escaped: wrapped into lines (gear.viz.layout.wrap), ★ for gold."""
    lines = layout.wrap(str(data.get("label", key)), layout.NODE_FONT)
    if data.get("gold"):
        lines[-1] += " ★"
    return "\n".join(lines)


def shown_label(key: object, data: Mapping[str, Any]) -> str:
    """A node's label as drawn (escaped; lines of gear.viz.layout.wrap; ★ for gold)."""
    return esc_html(node_text(key, data))


def edge_text(data: Mapping[str, Any]) -> str:
    """An edge's label as drawn, not yet escaped: each of its lines wrapped, ★ for gold ("" for none)."""
    label = str(data.get("label", "") or "")
    if not label.strip():
        return ""
    lines = [line for part in label.split("\n") for line in layout.wrap(part, layout.EDGE_FONT, layout.EDGE_WRAP, 2)]
    if data.get("gold"):
        lines[-1] += " ★"
    return "\n".join(lines[: layout.LINES + 1])


def node_boxes(g: nx.MultiDiGraph) -> dict[Any, layout.Box]:
    """Every box a picture of `g` draws: each node's (its label included) and each labelled edge's label
    (keyed by gear.viz.layout.EdgeLabel)."""
    boxes: dict[Any, layout.Box] = {
        key: layout.node_box(node_text(key, data), str(data.get("shape", "dot")), float(data.get("size", 16)))
        for key, data in g.nodes(data=True)}
    for u, v, k, data in g.edges(keys=True, data=True):
        text = edge_text(data)
        if text:
            boxes[layout.EdgeLabel(u, v, k)] = layout.label_box(text)
    return boxes


def place(g: nx.MultiDiGraph, flow: bool = False) -> dict[Any, layout.Point]:
    """Where graph_html puts each node and each edge label: columns along the paths (`flow`: start entities, node
    attribute "start", on the left; the labels in columns between), else a spring layout; spaced so that no two
    boxes overlap."""
    boxes = node_boxes(g)
    if not flow:
        return layout.spread(g, boxes)
    # the paths start at the nodes marked "root" (the heads of the initial triples), else at those marked "start"
    roots = [n for n, d in g.nodes(data=True) if d.get("root")]
    return layout.layered(g, boxes, roots or [n for n, d in g.nodes(data=True) if d.get("start")])


def picture_positions(g: nx.MultiDiGraph, positions: Mapping[Any, layout.Point]) -> dict[Any, layout.Point]:
    """The places of `g`'s own nodes and edge labels among a larger layout's `positions` (a lesson's whole search)."""
    wanted = set(g.nodes) | {layout.EdgeLabel(u, v, k) for u, v, k in g.edges(keys=True)}
    return {k: p for k, p in positions.items() if k in wanted}


SELF_LOOP = {"type": "curvedCW", "roundness": 0.45}


def graph_html(g: nx.MultiDiGraph, *, height: int = 560, legend: Sequence[tuple[str, str, str]] = (),
               physics: bool = False, flow: bool = False, positions: Mapping[Any, layout.Point] | None = None,
               frame: tuple[float, float, float, float] | None = None) -> str:
    """A self-contained vis-network page for a graph whose nodes/edges carry label, title, color (and width).
    Every node stands at `positions` (default: `place`), physics off, and the page opens showing `frame` (default:
    every box) whole. A labelled edge is drawn through a small box holding its label, at the place the layout gave
    that label (gear.viz.layout.EdgeLabel; one is found for a label without a place), so labels never pile up.
    `flow`: laid out left to right along the edges' direction, for a graph that reads as paths — the beams. A lesson
    passes the positions and frame of its whole graph, so that a node keeps its place from one step to the next.
    `physics` is kept for callers; the layout is always computed here."""
    from pyvis.network import Network

    del physics  # the picture no longer depends on the browser's simulation (see FIXED)
    net = Network(height=f"{height}px", width="100%", directed=True, cdn_resources="in_line", bgcolor="#ffffff",
                  font_color="#212529")
    boxes = node_boxes(g)
    where = layout.place_labels(g, dict(positions) if positions is not None else place(g, flow), boxes)
    ids = {key: n for n, key in enumerate(g.nodes)}
    for key, data in g.nodes(data=True):
        gold = bool(data.get("gold"))
        x, y = where.get(key, (0.0, 0.0))
        net.add_node(ids[key], label=shown_label(key, data), title=str(data.get("title", esc_html(key))),
                     shape=str(data.get("shape", "dot")), size=float(data.get("size", 16)), x=round(x, 1),
                     y=round(y, 1), physics=False)
        node = net.get_node(ids[key])
        colour = str(data.get("color", ENTITY_COLOUR))
        node["color"] = {"background": colour, "border": GOLD_COLOUR if gold else str(data.get("border", "#495057")),
                         "highlight": {"background": colour, "border": "#212529"}}
        node["borderWidth"] = 4 if gold else 1
        if data.get("font_color"):
            node["font"] = {"color": str(data["font_color"])}
    for u, v, k, data in g.edges(keys=True, data=True):
        colour = str(data.get("color", "#868e96"))
        title = str(data.get("title", ""))
        common = {"title": title, "width": float(data.get("width", 2.0)), "color": colour,
                  "dashes": bool(data.get("dashes", False))}
        label = layout.EdgeLabel(u, v, k)
        text = edge_text(data)
        if not text or label not in where:
            net.add_edge(ids[u], ids[v], arrows=str(data.get("arrows", "to")), **common)
            continue
        ids[label] = len(ids)
        x, y = where[label]
        net.add_node(ids[label], label=esc_html(text), title=title, shape="box", x=round(x, 1), y=round(y, 1),
                     physics=False, edgeLabel=True)
        node = net.get_node(ids[label])
        node["color"] = {"background": "#ffffff", "border": colour,
                         "highlight": {"background": "#fff9db", "border": "#212529"}}
        node["borderWidth"] = 1
        node["margin"] = layout.BOX_MARGIN
        node["font"] = {"size": layout.EDGE_FONT, "face": FONT, "color": str(data.get("font_color") or "#343a40"),
                        "strokeWidth": 0}
        if data.get("dashes"):
            node["shapeProperties"] = {"borderDashes": [5, 4]}
        loop = {"smooth": SELF_LOOP} if u == v else {}
        net.add_edge(ids[u], ids[label], arrows="", **common, **loop)
        net.add_edge(ids[label], ids[v], arrows=str(data.get("arrows", "to")), **common, **loop)
    net.set_options(json.dumps({
        "nodes": {"font": {"size": layout.NODE_FONT, "face": FONT, "strokeWidth": 3, "strokeColor": "#ffffff"},
                  "margin": layout.BOX_MARGIN},
        "edges": {"font": {"size": layout.EDGE_FONT, "face": FONT, "align": "horizontal", "strokeWidth": 0,
                           "background": "rgba(255,255,255,0.9)"},
                  "smooth": FLOW_EDGES if flow else {"enabled": False}, "selectionWidth": 2,
                  "arrows": {"to": {"scaleFactor": 0.6}}},
        "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False},
        **FIXED,
    }))
    page = net.generate_html(notebook=False)
    page = _CDN_TAG.sub("", page)
    page = re.sub(r"<center>\s*<h1>\s*</h1>\s*</center>", "", page)
    page = page.replace("</head>", _STYLE + "</head>", 1)
    if legend:
        hint = [] if flow else [("text", "#868e96", "drag to move · scroll to zoom")]
        page = page.replace('<div id="mynetwork"', _legend_html([*legend, *hint]) + '<div id="mynetwork"', 1)
    box = frame if frame is not None else layout.bounds(where, boxes)
    return page.replace("</body>", _FIXUP.replace("FRAME", json.dumps([round(b, 1) for b in box])) + "</body>", 1)


def outside_urls(page: str) -> list[str]:
    """src=/href= attributes that point off this machine (a test and a debugging aid)."""
    found = re.findall(r"(?:src|href)\s*=\s*[\"']?((?:https?:)?//[^\"'\s>]+)", page, re.IGNORECASE)
    return [u for u in found if not re.match(r"(?:https?:)?//(127\.0\.0\.1|localhost)([:/]|$)", u)]


# -- an entity's neighbourhood in an index ----------------------------------------------------------------------------
def find_entities(backend: Any, text: str, limit: int = 20) -> list[str]:
    """Entity names (normalised) containing `text`, most connected first."""
    names: list[str] = getattr(backend, "entities", None) or []
    adjacency = getattr(backend, "adjacency", None)
    needle = normalise_entity(text)
    if not needle or adjacency is None:
        return []
    degree = adjacency.degree()
    hits = [i for i, name in enumerate(names) if needle in name]
    hits.sort(key=lambda i: (name_rank(names[i], needle), -int(degree[i])))
    return [names[i] for i in hits[:limit]]


def name_rank(name: str, needle: str) -> int:
    return 0 if name == needle else (1 if name.startswith(needle) else 2)


def neighbourhood(backend: Any, entity: str, hops: int = 1, limit: int = 60) -> nx.MultiDiGraph:
    """The triples within `hops` of an entity (breadth-first, at most `limit` triples) as a graph: entities as
    nodes, triples as labelled directed edges. Needs the embedded backend's entity adjacency."""
    adjacency = getattr(backend, "adjacency", None)
    names: list[str] | None = getattr(backend, "entities", None)
    if adjacency is None or names is None:
        raise ValueError("browsing entities needs the embedded (memory) backend")
    index = {name: i for i, name in enumerate(names)}
    key = normalise_entity(entity)
    if key not in index:
        raise KeyError(f"entity {entity!r} is not in this index")
    start = index[key]
    g = nx.MultiDiGraph()
    g.add_node(names[start], label=entity, color=CENTRE_COLOUR, size=26, depth=0,
               title=f"<b>{esc_html(names[start])}</b><br>centre")
    frontier, seen_e = [start], {start}
    seen_t: set[int] = set()
    for depth in range(1, max(1, hops) + 1):
        nxt = []
        for e in frontier:
            for tid in adjacency.triples_with_entity(e):
                tid = int(tid)
                if tid in seen_t:
                    continue
                if len(seen_t) >= limit:
                    break
                seen_t.add(tid)
                s, p, o = backend.spo[tid]
                h, t = int(adjacency.head[tid]), int(adjacency.tail[tid])
                for ent in (h, t):
                    if ent not in seen_e:
                        seen_e.add(ent)
                        nxt.append(ent)
                        g.add_node(names[ent], label=names[ent], color=ENTITY_COLOUR if depth > 1 else "#74c0fc",
                                   size=16, depth=depth,
                                   title=f"<b>{esc_html(names[ent])}</b><br>{depth:d} hop(s) away")
                for ent, surface in ((h, s), (t, o)):
                    if g.nodes[names[ent]].get("label") == names[ent] and ent != start:
                        g.nodes[names[ent]]["label"] = surface  # show the name as written, not normalised
                pid = backend.passage_of(tid)
                title = backend.titles[pid] if hasattr(backend, "titles") else ""
                g.add_edge(names[h], names[t], key=tid, label=p, color=HOP_COLOURS[min(depth, 3)], width=2.0,
                           title=f"<b>{esc_html(spo_text((s, p, o)))}</b><br>source passage #{int(pid):d}: "
                                 f"<i>{esc_html(title)}</i>")
        frontier = nxt
    return g


def neighbourhood_legend(hops: int = 2) -> list[tuple[str, str, str]]:
    items = [("node", CENTRE_COLOUR, "chosen entity"), ("node", "#74c0fc", "1 hop away")]
    if hops > 1:
        items.append(("node", ENTITY_COLOUR, "2+ hops away"))
    items += [("edge", HOP_COLOURS[min(h, 3)], f"triple at hop {h}") for h in range(1, hops + 1)]
    return items


def top_entities(backend: Any, n: int = 20) -> list[tuple[str, int]]:
    adjacency = getattr(backend, "adjacency", None)
    names = getattr(backend, "entities", None)
    if adjacency is None or names is None:
        return []
    degree = adjacency.degree()
    order = sorted(range(len(degree)), key=lambda i: (-int(degree[i]), i))[:n]
    return [(names[i], int(degree[i])) for i in order]
