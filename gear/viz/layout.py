"""Where each node of a graph picture goes, computed once here rather than by the browser's physics, so a picture is
the same every time it opens, fits its frame, and a lesson's graph can grow step by step with every node kept in its
place.

Why not vis-network's own layouts: its hierarchical layout sorts a graph with a cycle (the beams often close one)
into dozens of levels — a 13-node picture had every node at x ≈ ±5,300–5,900, and fitted to a readable zoom the
frame showed nothing but one long edge — and its physics gives a different picture on every load. Here: columns by
distance from the start entities for paths (`layered`), a seeded spring layout for anything else (`spread`), both
spaced so that no two nodes' label boxes overlap (`separate`), and the box around it all (`bounds`) for the camera.

Sizes are estimates of what vis-network draws (18 px labels below a dot, 15 px edge labels); they err on the large
side, and a browser test measures the real boxes (tests/e2e/test_lesson.py).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

NODE_FONT = 18  # px, gear.viz.graph's node labels
EDGE_FONT = 15  # px, its edge labels
CHAR = 0.6  # the width of an average character, in font sizes (Liberation Sans is ≈0.5; kept generous)
GAP = 24.0  # px between two label boxes
Point = tuple[float, float]


@dataclass(frozen=True)
class Box:
    """A node's extent around its centre (label included), in picture units (px at zoom 1)."""

    left: float
    right: float
    up: float
    down: float

    @property
    def width(self) -> float:
        return self.left + self.right

    @property
    def height(self) -> float:
        return self.up + self.down


def text_width(text: str, font: float) -> float:
    return len(text) * font * CHAR


def node_box(label: str, shape: str = "dot", size: float = 16.0, font: float = NODE_FONT) -> Box:
    """A vis-network node's box: a dot (radius `size`) with its label below it, or a box with the label inside."""
    width = text_width(label, font)
    if shape == "box":
        half = width / 2 + 10
        return Box(half, half, font * 0.7 + 8, font * 0.7 + 8)
    half = max(size, width / 2 + 4)
    return Box(half, half, size + 2, size + font * 1.4 + 6)


def layered(g: nx.MultiDiGraph | nx.Graph, boxes: Mapping[Hashable, Box], starts: Iterable[Hashable] = (),
            edge_labels: Mapping[tuple[Hashable, Hashable], float] | None = None) -> dict[Hashable, Point]:
    """Paths from left to right: a node's column is its distance (along edges either way) from the start nodes (else
    from the graph's sources; each component on its own), its row order the mean row of its neighbours to the left
    (fewer crossings). Columns are as far apart as their widest labels and the longest edge label between them
    (`edge_labels`: its width per pair of nodes) need."""
    level = levels(g, starts)
    columns: dict[int, list[Hashable]] = {}
    for node in g.nodes:  # insertion order: the beams' order
        columns.setdefault(level[node], []).append(node)
    undirected = g.to_undirected(as_view=True)
    rows: dict[Hashable, float] = {}
    for c in sorted(columns):
        nodes = columns[c]
        if c > min(columns):
            def mean_row(n: Hashable) -> float:
                left = [rows[m] for m in undirected.neighbors(n) if m in rows]
                return sum(left) / len(left) if left else math.inf
            nodes.sort(key=mean_row)  # stable: nodes without a left neighbour keep their order, last
        for r, node in enumerate(nodes):
            rows[node] = float(r)
    x: dict[int, float] = {}
    at = 0.0
    order = sorted(columns)
    for i, c in enumerate(order):
        if i:
            before = order[i - 1]
            label = max((w for (u, v), w in (edge_labels or {}).items()
                         if {level.get(u), level.get(v)} <= {before, c} and u in level and v in level), default=0.0)
            at += max(boxes[n].right for n in columns[before]) + max(boxes[n].left for n in columns[c]) \
                + max(GAP * 3, min(label, 220.0) + GAP * 2)
        x[c] = at
    positions: dict[Hashable, Point] = {}
    for c in order:
        y = 0.0
        stacked = []
        for n in columns[c]:
            y += boxes[n].up
            stacked.append((n, y))
            y += boxes[n].down + GAP
        middle = (y - GAP) / 2
        for n, yy in stacked:
            positions[n] = (x[c], yy - middle)
    return positions


def levels(g: nx.MultiDiGraph | nx.Graph, starts: Iterable[Hashable] = ()) -> dict[Hashable, int]:
    """Each node's column: its distance, along edges either way, from the start nodes of its component (the given
    ones; else the nodes nothing points to; else its first node)."""
    undirected = g.to_undirected(as_view=True)
    wanted = [s for s in starts if s in g]
    level: dict[Hashable, int] = {}
    for component in nx.connected_components(undirected):
        roots = [s for s in wanted if s in component]
        if not roots and g.is_directed():
            roots = [n for n in g.nodes if n in component and g.in_degree(n) == 0]
        if not roots:
            roots = [next(n for n in g.nodes if n in component)]
        for node, distance in nx.multi_source_dijkstra_path_length(undirected, roots).items():
            level[node] = int(distance)
    return level


def spread(g: nx.MultiDiGraph | nx.Graph, boxes: Mapping[Hashable, Box], seed: int = 7) -> dict[Hashable, Point]:
    """Any graph: a spring layout with a fixed seed (the same picture every time), components side by side, then
    spaced until no two label boxes overlap."""
    undirected = nx.Graph(g.to_undirected(as_view=True))
    if len(undirected) == 0:
        return {}
    parts = sorted(nx.connected_components(undirected), key=lambda c: (-len(c), min(map(str, c))))
    positions: dict[Hashable, Point] = {}
    at = 0.0
    for part in parts:
        sub = undirected.subgraph(part)
        if len(sub) == 1:
            raw = {next(iter(part)): (0.0, 0.0)}
        else:
            raw = {n: (float(p[0]), float(p[1])) for n, p in nx.spring_layout(sub, seed=seed, iterations=200).items()}
        placed = separate(raw, boxes)
        left = min(p[0] - boxes[n].left for n, p in placed.items())
        right = max(p[0] + boxes[n].right for n, p in placed.items())
        for n, (x, y) in placed.items():
            positions[n] = (x - left + at, y)
        at += right - left + GAP * 3
    return positions


def separate(positions: Mapping[Hashable, Point], boxes: Mapping[Hashable, Box]) -> dict[Hashable, Point]:
    """The positions scaled up just enough (one factor for all, so the picture keeps its shape) that no two label
    boxes overlap; nodes at the very same place are first nudged apart in a small circle."""
    nodes = list(positions)
    pos = dict(positions)
    seen: dict[Point, int] = {}
    for n in nodes:  # identical positions cannot be separated by scaling
        p = pos[n]
        k = seen.get(p, 0)
        seen[p] = k + 1
        if k:
            angle = 2.4 * k
            pos[n] = (p[0] + 1e-3 * k * math.cos(angle), p[1] + 1e-3 * k * math.sin(angle))
    scale = 1e-9
    for i, a in enumerate(nodes):
        for b in nodes[i + 1:]:
            dx, dy = pos[b][0] - pos[a][0], pos[b][1] - pos[a][1]
            need_x = (boxes[a].right + boxes[b].left + GAP if dx >= 0 else boxes[a].left + boxes[b].right + GAP)
            need_y = (boxes[a].down + boxes[b].up + GAP if dy >= 0 else boxes[a].up + boxes[b].down + GAP)
            fx = need_x / abs(dx) if dx else math.inf
            fy = need_y / abs(dy) if dy else math.inf
            scale = max(scale, min(fx, fy))
    if len(nodes) < 2 or not math.isfinite(scale):
        scale = 1.0
    return {n: (x * scale, y * scale) for n, (x, y) in pos.items()}


def bounds(positions: Mapping[Hashable, Point], boxes: Mapping[Hashable, Box]) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of every label box: what the camera must show."""
    if not positions:
        return (-1.0, -1.0, 1.0, 1.0)
    return (min(p[0] - boxes[n].left for n, p in positions.items()),
            min(p[1] - boxes[n].up for n, p in positions.items()),
            max(p[0] + boxes[n].right for n, p in positions.items()),
            max(p[1] + boxes[n].down for n, p in positions.items()))


def overlapping(positions: Mapping[Hashable, Point], boxes: Mapping[Hashable, Box]) -> list[tuple[Hashable, Hashable]]:
    """Pairs of nodes whose label boxes overlap (none, for a layout from here)."""
    items: Sequence[tuple[Hashable, Point]] = list(positions.items())
    found = []
    for i, (a, pa) in enumerate(items):
        for b, pb in items[i + 1:]:
            if (pa[0] - boxes[a].left < pb[0] + boxes[b].right and pb[0] - boxes[b].left < pa[0] + boxes[a].right
                    and pa[1] - boxes[a].up < pb[1] + boxes[b].down and pb[1] - boxes[b].up < pa[1] + boxes[a].down):
                found.append((a, b))
    return found
