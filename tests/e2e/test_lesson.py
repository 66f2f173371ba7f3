"""The lesson in a real browser: every graph inside its frame with no two labels overlapping (each bundled
trace's pictures and generated worst cases), the handout opened with the network cut and printed, and a link to a
step opened in a fresh browser that cannot reach anything but the app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gear import events as ev
from gear import trace as t
from gear import viz
from gear.viz import handout, layout, sub_steps
from gear.viz.graph import PICTURE_WIDTH
from gear.viz.lesson import lesson_steps
from tests.e2e.test_browser import browser_page, demo_server  # noqa: F401
from tests.unit.test_lesson import BUNDLED, ROOT, worst_cases

pytestmark = pytest.mark.e2e

# in the page of one graph: the canvas's size and every label as drawn — each node's and each edge's label box, read
# from vis-network's own label modules (the canvas draws them: no DOM box exists) and turned into page pixels with
# canvasToDOM — with its font size on screen (font size × zoom). vis-network leaves out a label under 5 px on screen.
MEASURE = """() => {
  const canvas = network.canvas.frame.canvas;
  const scale = network.getScale();
  const labels = [];
  const measure = (kind, id, item) => {
    const module = item && item.labelModule;
    if (!module || !module.elementOptions || !module.elementOptions.label) { return; }
    const size = module.size;
    const a = network.canvasToDOM({x: size.left, y: size.top});
    const z = network.canvasToDOM({x: size.left + size.width, y: size.top + size.height});
    labels.push({kind: kind, id: id, label: String(module.elementOptions.label), px: module.fontOptions.size * scale,
                 left: a.x, top: a.y, right: z.x, bottom: z.y});
  };
  for (const id in network.body.nodes) { measure('node', id, network.body.nodes[id]); }
  for (const id in network.body.edges) { measure('edge', id, network.body.edges[id]); }
  return {width: canvas.clientWidth, height: canvas.clientHeight, labels: labels,
          nodes: nodes.getIds().length, placed: Object.keys(network.getPositions()).length};
}"""
SMALLEST = 12.0  # px: a label a class reads from the back of the room (on a projector showing 1280 px)
#: worst cases drawn larger than any picture of a run: a hub of 40 long-named leaves, a ring of 12, and the components
#: of a spring layout; there only what is drawn must stay apart and inside the frame
NO_FLOOR = ("worst case hub", "worst case cycle", "worst case components")


def pictures() -> dict[str, str]:
    """Every graph page the app draws from the bundled traces (the beams of each iteration, each sub-step of the
    beam search's, tripleLink's and PPR's lessons) and the worst cases, by name."""
    pages: dict[str, str] = {}
    for path in BUNDLED:
        trace = t.Trace.load(path)
        passages = viz.passage_lookup(trace)
        for n, (beams, initial) in enumerate(zip(trace.of(ev.BeamsSearched), trace.of(ev.InitialNodes),
                                                 strict=True), 1):
            pages[f"{path.stem} beams {n}"] = viz.beams_html(beams, initial, passages)
        for s in lesson_steps(trace):
            if s.phase and s.phase != "repeat" and s.iteration == 1:
                picture = sub_steps.view(trace.events, s, passages).picture
                if picture is not None:
                    pages[f"{path.stem} lesson {s.phase} {s.hop}"] = picture.html(picture.height(PICTURE_WIDTH))
    for name, g in worst_cases().items():
        for flow in (False, True):
            where = viz.graph.place(g, flow)
            frame = layout.bounds(where, viz.graph.node_boxes(g))
            pages[f"worst case {name}{' as paths' if flow else ''}"] = viz.graph_html(
                g, flow=flow, positions=where, height=layout.fitted_height(frame, PICTURE_WIDTH))
    return pages


def overlaps(labels: list[dict]) -> list[tuple[str, str]]:
    return [(a["label"], b["label"]) for i, a in enumerate(labels) for b in labels[i + 1:]
            if a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]]


def measure_pictures(page, folder: Path) -> dict[str, dict]:
    """Every picture of `pictures()` opened at the width the app gives it, its labels measured as drawn."""
    page.set_viewport_size({"width": PICTURE_WIDTH, "height": 800})
    found = {}
    for n, (name, html) in enumerate(pictures().items()):
        path = folder / f"graph{n}.html"
        path.write_text(html, encoding="utf-8")
        page.goto(f"file://{path}")
        page.wait_for_function("() => window.gearFitted === true", timeout=30_000)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        found[name] = page.evaluate(MEASURE)
    return found


def test_every_graph_lies_inside_its_frame_with_labels_a_class_can_read_and_none_overlapping(
        browser_page, tmp_path: Path) -> None:  # noqa: F811
    """Measured on what the canvas draws: every label (nodes', edges', self-loops') inside the frame, no two label
    boxes overlapping, and none smaller than 12 px at the zoom a picture opens at, 820 px wide as in the app."""
    problems = []
    smallest = []
    for name, found in measure_pictures(browser_page, tmp_path).items():
        width, height = found["width"], found["height"]
        assert width == PICTURE_WIDTH and height >= 200, name
        assert found["placed"] == found["nodes"] > 0, name
        drawn = [x for x in found["labels"] if x["px"] >= 5]  # vis-network draws no label under 5 px
        outside = [x["label"] for x in drawn if x["left"] < -1 or x["top"] < -1 or x["right"] > width + 1
                   or x["bottom"] > height + 1]
        overlapping = overlaps(drawn)
        small = [] if name.startswith(NO_FLOOR) else [x["label"] for x in found["labels"] if x["px"] < SMALLEST]
        smallest.append(min((x["px"] for x in found["labels"]), default=SMALLEST))
        if outside or overlapping or small:
            problems.append(f"{name}: outside the frame {outside[:3]}, overlapping {overlapping[:3]}, "
                            f"under {SMALLEST:g} px {small[:3]}")
    assert problems == []
    assert len(smallest) > 50  # every bundled run's pictures were measured


def _written(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_handout_opens_offline_and_prints_a_step_a_page(browser_page, tmp_path: Path) -> None:  # noqa: F811
    page = browser_page
    trace = t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json")
    path = tmp_path / "lesson.html"
    path.write_text(handout.lesson_html(trace), encoding="utf-8")
    blocked: list[str] = []

    def only_the_file(route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_file)
    page.goto(f"file://{path}")
    assert page.locator("section.step").count() == len(lesson_steps(trace))
    assert page.locator("section.step svg").count() >= 5  # the beams' pictures, drawn without a script
    assert blocked == [] and all(u.startswith("file://") for u in page.requests)
    steps = lesson_steps(trace)
    for paper in ("A4", "Letter"):  # one step a page on either: the contents, the 14 steps, the teaching point
        pdf = page.pdf(format=paper, print_background=True)
        pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
        assert pages == len(steps) + 2, paper
    for path in BUNDLED:  # every bundled run: one step a page on both papers
        other = t.Trace.load(path)
        page.goto(f"file://{_written(tmp_path / f'{path.stem}.html', handout.lesson_html(other))}")
        for paper in ("A4", "Letter"):
            pdf = page.pdf(format=paper, print_background=True)
            assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == len(lesson_steps(other)) + 2, (path.stem, paper)
    part = tmp_path / "steps.html"
    part.write_text(handout.lesson_html(trace, steps=(5, 9)), encoding="utf-8")
    page.goto(f"file://{part}")
    pdf = page.pdf(format="A4", print_background=True)
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) == 5 + 2


def test_a_link_to_step_7_opens_there_in_a_fresh_browser_with_the_network_cut(demo_server: str,  # noqa: F811
                                                                                browser_page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page = browser_page
    blocked: list[str] = []

    def local_only(route) -> None:
        if route.request.url.startswith("http://127.0.0.1"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", local_only)
    page.goto(f"{demo_server}/?trace=walkthrough&step=7")
    steps = lesson_steps(t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json"))
    expect(page.get_by_text(f"Step 7 of {len(steps)}")).to_be_visible(timeout=90_000)
    title = steps[6].title
    expect(page.locator(".teach-title")).to_have_text(title)
    expect(page.get_by_test_id("stCode")).to_contain_text("?trace=walkthrough&step=7", timeout=90_000)  # to copy
    assert blocked == []


# in the app's page: each lesson table's columns against the box that holds it, and Algorithm 1's lines
TABLES = """() => {
  const tables = Array.from(document.querySelectorAll('table.lesson-table')).map(t => {
    const box = t.closest('.lesson-wrap').getBoundingClientRect();
    const heads = Array.from(t.querySelectorAll('th'));
    return {columns: heads.length, width: box.width,
            hidden: heads.filter(h => h.getBoundingClientRect().right > box.right + 1).map(h => h.textContent)};
  });
  const lines = Array.from(document.querySelectorAll('.alg1 .l'));
  const height = lines.length ? Math.min(...lines.map(l => l.getBoundingClientRect().height)) : 0;
  return {tables: tables, lines: lines.length,
          wrapped: lines.filter(l => l.getBoundingClientRect().height > height * 1.5).map(l => l.textContent)};
}"""


def test_every_lesson_table_shows_every_column_and_algorithm_1_no_wrapped_line_at_1280(
        demo_server: str, browser_page) -> None:  # noqa: F811
    """At 1280 px with the sidebar open, each of the walk-through's sub-steps (tripleLink's and Algorithm 1's) shows
    every column of its table without scrolling, and Algorithm 1's listing keeps every line on one line."""
    from playwright.sync_api import expect

    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 900})
    steps = lesson_steps(t.Trace.load(ROOT / "assets" / "traces" / "walkthrough.json"))
    problems = []
    for n, step in enumerate(steps, 1):
        if not step.phase:
            continue
        page.goto(f"{demo_server}/?trace=walkthrough&step={n}")
        expect(page.get_by_text(f"Step {n} of {len(steps)}")).to_be_visible(timeout=90_000)
        page.locator("table.lesson-table").first.wait_for(timeout=60_000)
        found = page.evaluate(TABLES)
        hidden = [h for table in found["tables"] for h in table["hidden"]]
        if hidden or found["wrapped"]:
            problems.append(f"step {n} ({step.title}): hidden columns {hidden}, wrapped lines {found['wrapped']}")
        if step.lines:
            assert found["lines"] == 20, n  # Algorithm 1 is beside the words
    assert problems == []
