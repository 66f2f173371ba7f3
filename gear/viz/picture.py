"""A lesson's picture: a graph with the positions and the frame of the whole sub-step sequence it belongs to, so
that every sub-step is drawn with the same camera and no node moves between them (the beam search's, tripleLink's
and PPR's lessons alike). The app draws it with vis-network (`html`), the handout as inline SVG from the same
positions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from gear.events import BeamsSearched, InitialNodes
from gear.trace import PassageView
from gear.viz import layout
from gear.viz.graph import (
    PICTURE_WIDTH,
    beam_graph,
    beams_legend,
    graph_html,
    node_boxes,
    place,
)


@dataclass(frozen=True)
class Picture:
    graph: nx.MultiDiGraph
    positions: dict[Any, layout.Point]
    frame: tuple[float, float, float, float]
    legend: list[tuple[str, str, str]]
    flow: bool = True

    def height(self, width: float, most: int = 1100, least: int = 240) -> int:
        """The canvas's height in px at `width` px wide: as tall as the frame needs at the zoom its width allows
        (gear.viz.layout.fitted_height), so its labels keep their size; a flat picture gets a flat frame."""
        return layout.fitted_height(self.frame, width, least, most)

    def html(self, height: int = 560) -> str:
        return graph_html(self.graph, height=height, legend=self.legend, flow=self.flow, positions=self.positions,
                          frame=self.frame)


def beams_picture(beams: BeamsSearched, initial: InitialNodes | None = None,
                  passages: Mapping[int, PassageView] | None = None, *, gold_known: bool = False) -> Picture:
    """The beams of one iteration as a Picture: the graph, its layout and frame, its legend."""
    g = beam_graph(beams, initial, passages)
    hops = {d["hop"] for _, _, d in g.edges(data=True)} or {0}
    legend = beams_legend(gold_known, initial.source if initial else "sync", hops)
    positions = place(g, flow=True)
    return Picture(g, positions, layout.bounds(positions, node_boxes(g)), legend)


def beams_html(beams: BeamsSearched, initial: InitialNodes | None = None,
               passages: Mapping[int, PassageView] | None = None, *, height: int | None = None,
               gold_known: bool = False) -> str:
    """beams_picture as a page, `height` px tall (default: the height that keeps its labels' size at 820 px)."""
    picture = beams_picture(beams, initial, passages, gold_known=gold_known)
    return picture.html(height if height is not None else picture.height(PICTURE_WIDTH))
