"""What PPR's sub-steps show in a lesson (gear.viz.lesson.ppr_seed_steps, ppr_walk_steps): the facts matched to the
query, the seeds they give, the entities' scores after the walk, and the passages it ranks.

Every picture is the run's one PPR graph (gear.viz.ppr.ppr_graph: the walk's top entities and every seed, the ranked
passages in a column beside them) laid out once, so a node keeps its place from the seeds to the ranking: first only
the seeds are lit (dot size = seed weight), then every entity by its score after the walk, then the passages. The
entities stand in columns by their distance from the seeds, so the picture reads left to right as the walk spreads.
Imports no Streamlit; labels are escaped by gear.viz.ppr and gear.viz.graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

from gear.events import PPRRanked, PPRSeeded
from gear.viz import layout
from gear.viz.charts import passage_rows
from gear.viz.graph import node_boxes, place, short, spo_text
from gear.viz.picture import Picture
from gear.viz.ppr import PPR_EDGE_COLOURS, PPR_ENTITY_COLOUR, SEED_COLOUR, ppr_graph, ppr_legend

FADED = "#f1f3f5"
FADED_TEXT = "#adb5bd"
FADED_EDGE = "#e9ecef"


def _fade(g: nx.MultiDiGraph, keep: Iterable[Any] = ()) -> None:
    """Grey out every node but `keep`, and every edge."""
    kept = set(keep)
    for key, data in g.nodes(data=True):
        if key not in kept:
            data.update(color=FADED, font_color=FADED_TEXT, border=FADED_EDGE, gold=False)
            if data.get("shape") != "box":
                data["size"] = 8.0
    for _, _, data in g.edges(data=True):
        data.update(color=FADED_EDGE, font_color=FADED_TEXT)


PASSAGE_GAP = 140.0  # px between the entities and the column of ranked passages
LABEL = 22  # characters of a name the lesson's picture shows (the tooltips hold them whole)


def lesson_graph(ranked: PPRRanked, seeded: PPRSeeded | None) -> nx.MultiDiGraph:
    """ppr_graph made to fit a lesson's frame: names cut short, the predicates on the edges left to the tooltips
    (a spring layout of the whole picture spread 15 entities over 3,500 px, too small to read at 820), and the
    seeds marked as where the picture starts."""
    g = ppr_graph(ranked, seeded)
    for _, data in g.nodes(data=True):
        data.update(label=short(str(data["label"]), LABEL + (4 if data.get("shape") == "box" else 0)),
                    start=bool(data.get("seed")))
    for _, _, data in g.edges(data=True):
        data["label"] = ""
    return g


def lesson_layout(whole: nx.MultiDiGraph) -> dict[Any, layout.Point]:
    """The entities in columns by their distance from the seeds (gear.viz.graph.place's paths layout: the seeds on
    the left, what the walk reaches in one step next to them, …), the ranked passages in a column to their right in
    rank order."""
    boxes = node_boxes(whole)
    passages = [k for k in whole.nodes if str(k).startswith("p")]
    entities = whole.subgraph(k for k in whole.nodes if not str(k).startswith("p"))
    where = dict(place(nx.MultiDiGraph(entities), flow=True))
    if not passages:
        return where
    _, top, right, bottom = layout.bounds(where, boxes) if where else (0.0, 0.0, 0.0, 0.0)
    half = max(boxes[k].left for k in passages)
    step = max(boxes[k].height for k in passages) + layout.GAP
    y = (top + bottom) / 2 - step * (len(passages) - 1) / 2
    for n, key in enumerate(passages):
        where[key] = (right + PASSAGE_GAP + half, y + n * step)
    return where


def picture(ranked: PPRRanked, seeded: PPRSeeded | None, phase: str) -> Picture:
    """One sub-step's picture, at the whole graph's positions and with its frame (one camera for the four)."""
    whole = lesson_graph(ranked, seeded)
    positions = lesson_layout(whole)
    frame = layout.bounds(positions, node_boxes(whole))
    g = whole.copy()
    gold_known = any(p.gold for p in ranked.passages)
    legend = ppr_legend(gold_known)
    if phase in ("ppr-facts", "ppr-seeds"):
        weights = {e.id: e.seed for e in (seeded.entities if seeded else ranked.entities) if e.seed > 0}
        top = max(weights.values(), default=1.0) or 1.0
        _fade(g, {f"e{i}" for i in weights})
        for i, w in weights.items():
            if f"e{i}" in g:
                g.nodes[f"e{i}"].update(color=SEED_COLOUR, size=10.0 + 30.0 * (w / top) ** 0.5)
        legend = [("node", SEED_COLOUR, "seed entity (dot size = seed weight)"), ("node", FADED, "not a seed")]
    elif phase == "ppr-walk":
        _fade(g, {k for k in g.nodes if str(k).startswith("e")})
        for key, data in g.nodes(data=True):
            if str(key).startswith("e"):
                data.update(color=SEED_COLOUR if data.get("seed") else PPR_ENTITY_COLOUR)
        for _, _, data in g.edges(data=True):  # the walk moves along the entities' edges: those stay drawn
            if data.get("kind") != "context":
                data.update(color=PPR_EDGE_COLOURS.get(str(data.get("kind")), FADED_EDGE), font_color=None)
        legend = [item for item in legend if "passage" not in item[2]]
    return Picture(g, positions, frame, legend, flow=False)


def rows(ranked: PPRRanked | None, seeded: PPRSeeded | None, phase: str) -> list[dict[str, Any]]:
    """The sub-step's table (numbers rounded)."""
    if phase == "ppr-facts" and seeded is not None:
        return [{"n": n, "fact t": spo_text(f.triple.spo), "score (min-max)": round(f.score, 3),
                 "seeds the walk": "kept" if f.kept else "dropped", "gold": "★" if f.triple.gold else ""}
                for n, f in enumerate(seeded.facts, 1)]
    if phase == "ppr-seeds" and seeded is not None:
        total = sum(e.seed for e in seeded.entities) or 1.0
        return [{"seed entity": e.name, "weight": round(e.seed, 4),
                 "share of the entity seeds": f"{e.seed / total:.0%}"}
                for e in sorted(seeded.entities, key=lambda e: -e.seed)]
    if phase == "ppr-walk" and ranked is not None:
        by_seed = {e.id: n for n, e in enumerate(sorted((e for e in ranked.entities if e.seed > 0),
                                                        key=lambda e: -e.seed), 1)}
        return [{"rank": n, "entity": e.name, "seed weight": round(e.seed, 4) if e.seed > 0 else None,
                 "rank among seeds": by_seed.get(e.id), "PPR score": round(e.score, 5)}
                for n, e in enumerate(sorted(ranked.entities, key=lambda e: -e.score), 1)]
    if phase == "ppr-passages" and ranked is not None:
        return passage_rows(ranked.passages)
    return []
