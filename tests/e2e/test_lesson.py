"""The lesson in a real browser (issue 37): every graph inside its frame with no two labels overlapping (each bundled
trace's pictures and generated worst cases), the handout opened with the network cut and printed, and a link to a
step opened in a fresh browser that cannot reach anything but the app."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gear import trace as t
from gear import viz
from gear.viz import handout, sub_steps
from gear.viz.lesson import lesson_steps
from tests.e2e.test_browser import browser_page, demo_server  # noqa: F401
from tests.unit.test_lesson import BUNDLED, ROOT, worst_cases

pytestmark = pytest.mark.e2e

# in the page of one graph: the canvas's size, every node's box (its label included) on screen, and overlaps
MEASURE = """() => {
  const canvas = network.canvas.frame.canvas;
  const width = canvas.clientWidth, height = canvas.clientHeight;
  const ids = nodes.getIds();
  const positions = network.getPositions(ids);
  const boxes = ids.map(id => {
    const b = network.getBoundingBox(id);
    const a = network.canvasToDOM({x: b.left, y: b.top}), z = network.canvasToDOM({x: b.right, y: b.bottom});
    return {id: id, label: nodes.get(id).label, left: a.x, top: a.y, right: z.x, bottom: z.y};
  });
  return {width: width, height: height, boxes: boxes, placed: Object.keys(positions).length};
}"""


def pictures() -> dict[str, str]:
    """Every graph page the app draws from the bundled traces (the beams of each iteration, each sub-step of the
    beam search's, tripleLink's and PPR's lessons) and the worst cases, by name."""
    pages: dict[str, str] = {}
    for path in BUNDLED:
        trace = t.Trace.load(path)
        passages = viz.passage_lookup(trace)
        for n, (beams, initial) in enumerate(zip(trace.of(t.BeamsSearched), trace.of(t.InitialNodes),
                                                 strict=True), 1):
            pages[f"{path.stem} beams {n}"] = viz.beams_html(beams, initial, passages)
        for s in lesson_steps(trace):
            if s.phase and s.phase != "repeat" and s.iteration == 1:
                picture = sub_steps.view(trace.events, s, passages).picture
                if picture is not None:
                    pages[f"{path.stem} lesson {s.phase} {s.hop}"] = picture.html(520)
    for name, g in worst_cases().items():
        for flow in (False, True):
            pages[f"worst case {name}{' as paths' if flow else ''}"] = viz.graph_html(g, flow=flow)
    return pages


def test_every_graph_lies_inside_its_frame_and_no_two_labels_overlap(browser_page, tmp_path: Path) -> None:  # noqa: F811
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    problems = []
    for n, (name, html) in enumerate(pictures().items()):
        path = tmp_path / f"graph{n}.html"
        path.write_text(html, encoding="utf-8")
        page.goto(f"file://{path}")
        page.wait_for_function("() => window.gearFitted === true", timeout=30_000)
        found = page.evaluate(MEASURE)
        width, height, boxes = found["width"], found["height"], found["boxes"]
        assert width > 600 and height > 300, name
        assert found["placed"] == len(boxes) > 0, name
        outside = [b["label"] for b in boxes if b["left"] < -1 or b["top"] < -1 or b["right"] > width + 1
                   or b["bottom"] > height + 1]
        overlapping = [(a["label"], b["label"]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                       if a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"]
                       and b["top"] < a["bottom"]]
        if outside or overlapping:
            problems.append(f"{name}: outside the frame {outside[:3]}, overlapping {overlapping[:3]}")
    assert problems == []


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
    pdf = page.pdf(format="A4", print_background=True)
    pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
    assert pages >= len(lesson_steps(trace))  # each step starts a page


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
