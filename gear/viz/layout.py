"""Where each node of a graph picture goes, computed once here rather than by the browser's physics, so a picture is
the same every time it opens, fits its frame, and a lesson's graph can grow step by step with every node kept in its
place.

Why not vis-network's own layouts: its hierarchical layout sorts a graph with a cycle (the beams often close one)
into dozens of levels — a 13-node picture had every node at x ≈ ±5,300–5,900, and fitted to a readable zoom the
frame showed nothing but one long edge — and its physics gives a different picture on every load. Here: columns by
distance from the start entities for paths (`layered`), a seeded spring layout for anything else (`spread`), both
spaced so that no two nodes' label boxes overlap (`separate`), and the box around it all (`bounds`) for the camera.

Edge labels are laid out too: each labelled edge's label is a box of its own (keyed by `EdgeLabel`) placed with the
nodes — in a column of its own between the columns it joins, or as one more body of the spring layout — so no label
sits on another, a node, or another edge's label, self-loops and parallel edges included (vis-network draws every
label of two parallel edges or two self-loops at one spot). Labels wrap (`wrap`) so that a column stays narrow enough
for the picture to be read at 820 px. Text widths are Liberation Sans's own (the font the pictures ask for, metric
compatible with Arial); a browser test measures the boxes drawn (tests/e2e/test_lesson.py).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

NODE_FONT = 16  # px, gear.viz.graph's node labels
EDGE_FONT = 15  # px, its edge labels
LINE = 1.2  # a label's line height, in font sizes
BOX_MARGIN = 5.0  # px between a box's text and its border (vis-network's default)
WRAP = 7.5  # em: a node label's line wider than this wraps
EDGE_WRAP = 6.5  # em: an edge label's (its box sits in a column of its own between two columns of nodes)
LINES = 3  # lines a label keeps (the tooltip holds it whole)
GAP = 12.0  # px between two node boxes
LABEL_GAP = 6.0  # px between two edge labels stacked in one column
Point = tuple[float, float]

# Liberation Sans advance widths of the printable ASCII characters, in thousandths of an em
_ASCII = (278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556,
          556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667,
          556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556,
          556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722,
          500, 500, 500, 334, 260, 334, 584)


@dataclass(frozen=True)
class EdgeLabel:
    """The key of an edge's label among a layout's positions and boxes (never a node's key)."""

    u: Hashable
    v: Hashable
    key: Hashable


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


def char_width(c: str) -> float:
    """A character's advance in em: Liberation Sans's for ASCII and accented Latin letters, generous for the rest."""
    o = ord(c)
    if 32 <= o < 127:
        return _ASCII[o - 32] / 1000
    base = unicodedata.normalize("NFD", c)[:1]
    if base and base != c and 32 <= ord(base) < 127:
        return _ASCII[ord(base) - 32] / 1000
    return 1.0 if unicodedata.east_asian_width(c) in "WF" else 0.8


def text_width(text: str, font: float) -> float:
    """The width of one line of text in px (5 % over the font's own advances: a browser rounds glyph by glyph)."""
    return 1.05 * font * sum(char_width(c) for c in text)


def wrap(text: str, font: float, width: float = WRAP, lines: int = LINES) -> list[str]:
    """`text` broken between words into lines no wider than `width` em (a longer word is cut), at most `lines`; the
    last line ends with … when text is left over."""
    limit = width * font
    out: list[str] = []
    line = ""
    for word in " ".join(str(text).split()).split(" "):
        while text_width(word, font) > limit:  # a word longer than a line: as much as fits, the rest on the next
            cut = max(1, max(n for n in range(1, len(word) + 1) if text_width(word[:n], font) <= limit or n == 1))
            if line:
                out.append(line)
                line = ""
            out.append(word[:cut])
            word = word[cut:]
        joined = f"{line} {word}" if line else word
        if line and text_width(joined, font) > limit:
            out.append(line)
            line = word
        else:
            line = joined
    if line or not out:
        out.append(line)
    if len(out) > lines:
        last = out[lines - 1]
        while last and text_width(last + "…", font) > limit:
            last = last[:-1].rstrip()
        out = [*out[: lines - 1], last + "…"]
    return out


def node_box(label: str, shape: str = "dot", size: float = 16.0, font: float = NODE_FONT) -> Box:
    """A vis-network node's box: a dot (radius `size`) with its label below it, or a box with the label inside.
    `label` may hold several lines (\n)."""
    lines = label.split("\n")
    width = max(text_width(line, font) for line in lines)
    height = len(lines) * font * LINE
    if shape == "box":
        half_w, half_h = width / 2 + BOX_MARGIN + 2, height / 2 + BOX_MARGIN + 2
        return Box(half_w, half_w, half_h, half_h)
    half = max(size, width / 2 + 4)
    return Box(half, half, size + 2, size + height + 8)


def label_box(label: str, font: float = EDGE_FONT) -> Box:
    """An edge label's box (drawn as a small box on its edge)."""
    return node_box(label, "box", font=font)


def layered(g: nx.MultiDiGraph | nx.Graph, boxes: Mapping[Hashable, Box],
            starts: Iterable[Hashable] = ()) -> dict[Hashable, Point]:
    """Paths from left to right: a node's column is its distance (along edges either way) from the start nodes (else
    from the graph's sources; each component on its own), and each edge with a label box in `boxes` (`EdgeLabel`) has
    its label in the column between the two it joins (a self-loop's, or an edge's within one column, right of that
    column). A column's order follows the mean row of its neighbours to the left (fewer crossings); columns are as far
    apart as their widest boxes need, and stacked boxes never touch."""
    level = levels(g, starts)
    column: dict[Hashable, int] = {n: 2 * level[n] for n in g.nodes}
    links = nx.MultiGraph()
    links.add_nodes_from(g.nodes)
    for u, v, k in _edges(g):
        label = EdgeLabel(u, v, k)
        if label in boxes:
            column[label] = 2 * min(level[u], level[v]) + 1
            links.add_edge(u, label)
            links.add_edge(label, v)
        else:
            links.add_edge(u, v)
    columns: dict[int, list[Hashable]] = {}
    for node, c in column.items():  # insertion order: the nodes in the beams' order, then the labels in the edges'
        columns.setdefault(c, []).append(node)
    rows: dict[Hashable, float] = {}
    for c in sorted(columns):
        nodes = columns[c]
        if c > min(columns):
            def mean_row(n: Hashable) -> float:
                left = [rows[m] for m in links.neighbors(n) if m in rows]
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
            gap = GAP if c - before == 1 and (c % 2 or before % 2) else GAP * 4  # a column of labels between, or none
            at += max(boxes[n].right for n in columns[before]) + max(boxes[n].left for n in columns[c]) + gap
        x[c] = at
    positions: dict[Hashable, Point] = {}
    for c in order:
        gap = LABEL_GAP if c % 2 else GAP
        y = 0.0
        stacked = []
        for n in columns[c]:
            y += boxes[n].up
            stacked.append((n, y))
            y += boxes[n].down + gap
        middle = (y - gap) / 2
        for n, yy in stacked:
            positions[n] = (x[c], yy - middle)
    return positions


def _edges(g: nx.MultiDiGraph | nx.Graph) -> list[tuple[Hashable, Hashable, Hashable]]:
    """(u, v, key) of every edge; a simple graph's key is 0."""
    if g.is_multigraph():
        return [(u, v, k) for u, v, k in g.edges(keys=True)]
    return [(u, v, 0) for u, v in g.edges()]


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


def spread(g: nx.MultiDiGraph | nx.Graph, boxes: Mapping[Hashable, Box], seed: int = 7,
           width: float = 1000.0) -> dict[Hashable, Point]:
    """Any graph: a spring layout with a fixed seed (the same picture every time), then spaced until no two boxes
    overlap; components side by side in rows at most `width` px wide (a picture that keeps to its frame's width keeps
    its labels' size). An edge with a label box in `boxes` (`EdgeLabel`) has its label laid out as a body on the edge
    (u — label — v), so labels keep apart from each other and from the nodes."""
    undirected = nx.Graph()
    undirected.add_nodes_from(g.nodes)
    for u, v, k in _edges(g):
        label = EdgeLabel(u, v, k)
        if label in boxes:
            undirected.add_edge(u, label)
            undirected.add_edge(label, v)
        elif u != v:
            undirected.add_edge(u, v)
    if len(undirected) == 0:
        return {}
    parts = sorted(nx.connected_components(undirected), key=lambda c: (-len(c), min(map(str, c))))
    positions: dict[Hashable, Point] = {}
    at = row_top = row_bottom = 0.0
    for part in parts:
        sub = undirected.subgraph(part)
        if len(sub) == 1:
            raw = {next(iter(part)): (0.0, 0.0)}
        else:
            raw = {n: (float(p[0]), float(p[1])) for n, p in nx.spring_layout(sub, seed=seed, iterations=200).items()}
        placed = separate(raw, boxes)
        left, top, right, bottom = bounds(placed, boxes)
        if at > 0 and at + right - left > width:  # a new row below
            at, row_top = 0.0, row_bottom + GAP * 3
        for n, (x, y) in placed.items():
            positions[n] = (x - left + at, y - top + row_top)
        row_bottom = max(row_bottom, row_top + bottom - top)
        at += right - left + GAP * 3
    return positions


def place_labels(g: nx.MultiDiGraph | nx.Graph, positions: Mapping[Hashable, Point],
                 boxes: Mapping[Hashable, Box]) -> dict[Hashable, Point]:
    """`positions` with a place for each edge label in `boxes` that has none yet (a layout made by hand): the middle
    of its edge (a self-loop's: right of its node), moved up or down the least that keeps it clear of every box
    placed."""
    placed = dict(positions)
    taken = [(k, p) for k, p in placed.items() if k in boxes]
    for u, v, k in _edges(g):
        label = EdgeLabel(u, v, k)
        if label not in boxes or label in placed or u not in placed or v not in placed:
            continue
        box = boxes[label]
        (ax, ay), (bx, by) = placed[u], placed[v]
        x, y = ((ax + boxes[u].right + GAP + box.left, ay) if u == v else ((ax + bx) / 2, (ay + by) / 2))
        step = box.height / 2 + LABEL_GAP
        for n in range(400):
            dy = (n + 1) // 2 * step * (1 if n % 2 else -1)
            if not any(_clash((x, y + dy), box, p, boxes[o]) for o, p in taken):
                y += dy
                break
        placed[label] = (x, y)
        taken.append((label, (x, y)))
    return placed


def _clash(a: Point, box_a: Box, b: Point, box_b: Box, margin: float = LABEL_GAP / 2) -> bool:
    return (a[0] - box_a.left - margin < b[0] + box_b.right and b[0] - box_b.left < a[0] + box_a.right + margin
            and a[1] - box_a.up - margin < b[1] + box_b.down and b[1] - box_b.up < a[1] + box_a.down + margin)


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
    """(left, top, right, bottom) of every box (nodes and edge labels): what the camera must show."""
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


def fitted_height(frame: tuple[float, float, float, float], width: float, least: int = 240, most: int = 1100) -> int:
    """The height in px of a canvas `width` px wide that shows `frame` whole at the camera's zoom (gear.viz.graph: the
    largest up to 1 at which the frame fits, with 4 % to spare): as tall as the picture needs, within [least, most].
    A picture's width, not a fixed height, then sets the zoom, so its labels keep their size."""
    x0, y0, x1, y1 = frame
    scale = min(1.0, 0.96 * width / (x1 - x0)) if x1 > x0 else 1.0
    return int(max(least, min(most, math.ceil((y1 - y0) * scale / 0.96) + 2)))
