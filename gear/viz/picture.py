"""A lesson's picture: a graph with the positions and the frame of the whole sub-step sequence it belongs to, so
that every sub-step is drawn with the same camera and no node moves between them (the beam search's, tripleLink's
and PPR's lessons alike). The app draws it with vis-network (`html`), the handout as inline SVG from the same
positions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx

from gear.viz import layout
from gear.viz.graph import graph_html


@dataclass(frozen=True)
class Picture:
    graph: nx.MultiDiGraph
    positions: dict[Any, layout.Point]
    frame: tuple[float, float, float, float]
    legend: list[tuple[str, str, str]]
    flow: bool = True

    def height(self, width: float, most: int = 560, least: int = 280) -> int:
        """The frame's height in px at `width` px wide (the camera fits the frame whole), within [least, most]: a
        flat picture gets a flat frame instead of white space above and below."""
        x0, y0, x1, y1 = self.frame
        aspect = (y1 - y0) / (x1 - x0) if x1 > x0 else 1.0
        return int(max(least, min(most, width * aspect + 60)))

    def html(self, height: int = 560) -> str:
        return graph_html(self.graph, height=height, legend=self.legend, flow=self.flow, positions=self.positions,
                          frame=self.frame)
