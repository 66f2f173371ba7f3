"""The front door in a real browser: a question asked while the index is being built waits in line and runs
when the build ends; a read-only checkout saves everything a person makes into their own data folder; a link to a
page opens that page."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.sessions import ROOT, studio_server
from tests.e2e.test_browser import AS_SHIPPED, DOCS, TRIPLES, browser_page, demo_data, require_browser  # noqa: F401

pytestmark = pytest.mark.e2e

NOBODY = 65534


SETTLED = """() => document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state')
  === 'notRunning'"""


def settled(page) -> None:
    """Wait until the script run a click started has ended (what it draws replaces what was there)."""
    page.wait_for_timeout(200)
    page.wait_for_function(SETTLED, timeout=60_000)


def pick(page, label: str, option: str) -> None:
    from playwright.sync_api import expect

    page.get_by_role("combobox", name=label).first.click()
    choice = page.get_by_role("option", name=option).first
    expect(choice).to_be_visible()
    choice.click()


# -- item 1: a question asked during a build --------------------------------------------------------------------------
@pytest.fixture
def building_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The app as shipped on the walk-through demo, whose "musique" demo (the e2e corpus) builds only once the
    yielded release file exists (tests/e2e/held_build.py)."""
    data = demo_data(tmp_path)
    files = tmp_path / "tiny_demo"
    files.mkdir()
    (files / "corpus.json").write_text(json.dumps([{"title": t, "text": x} for t, x in DOCS]), encoding="utf-8")
    (files / "openie.json").write_text(json.dumps({"docs": [
        {"title": t, "text": x, "extracted_triples": [list(tr) for tr in trs]}
        for (t, x), trs in zip(DOCS, TRIPLES, strict=True)]}), encoding="utf-8")
    (files / "qa.json").write_text(json.dumps([{"id": "2hop__e2e", "question": "Which sea is Sicily in?",
                                                "answer": "Mediterranean Sea", "paragraphs": [
                                                    {"title": DOCS[2][0], "paragraph_text": DOCS[2][1],
                                                     "is_supporting": True}]}]), encoding="utf-8")
    release = tmp_path / "release"
    env = {**AS_SHIPPED, "GEAR_STUDIO_BUILD_DEMOS": "1", "GEAR_TEST_DEMO_FILES": str(files),
           "GEAR_TEST_RELEASE": str(release)}
    with studio_server(data, env, tmp_path / "streamlit.log", launcher=("-m", "tests.e2e.held_build")) as url:
        yield url, release


def test_a_question_asked_while_the_index_builds_runs_when_the_build_ends(building_server,
                                                                          browser_page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    url, release = building_server
    page = browser_page
    page.goto(url)
    expect(page.get_by_text("Showing: example: walkthrough")).to_be_visible(timeout=90_000)
    pick(page, "Index", "musique (demo)")
    # the build's progress at once, in place of the walk-through's replay (a run on another index)
    expect(page.get_by_text("Building the musique demo index")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Showing: example: walkthrough")).to_have_count(0)
    pick(page, "Method", "NaiveGE")  # no LLM: the question runs in seconds once the index is there
    box = page.get_by_label("Question", exact=True)
    box.fill("Which island is Mount Etna on?")
    box.press("Enter")
    page.get_by_role("button", name="Ask", exact=True).click()
    expect(page.get_by_text("Your question waits in line")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Final ranking")).to_have_count(0)
    page.wait_for_timeout(3_000)  # the progress polls every 2 s: still waiting, still saying so
    expect(page.get_by_text("Your question waits in line")).to_be_visible()
    release.touch()  # the build goes on and ends
    expect(page.get_by_text("Final ranking").first).to_be_visible(timeout=90_000)
    expect(page.get_by_text("Which island is Mount Etna on?").first).to_be_visible()
    expect(page.get_by_text("Your question waits in line")).to_have_count(0)
    expect(page.get_by_text("Building the musique demo index")).to_have_count(0)
    assert not page.dialogs  # type: ignore[attr-defined]


# -- item 3: a read-only checkout ------------------------------------------------------------------------------------
RUNTIME = ("app.py", "app_pages", "studio", "gear", "assets", ".streamlit")


def listing(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def set_writable(root: Path, writable: bool) -> None:
    for p in [root, *root.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode | stat.S_IWUSR if writable else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


@pytest.fixture
def read_only_server(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """The app run from a copy of the checkout that nobody may write to, by a user who may not write to it (root
    runs it as `nobody`), with no data folder named: it must find the user's own (~/.local/share/gear-studio). The
    walk-through demo is built there beforehand. Yields the URL, the checkout and the user's home."""
    require_browser()
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: cannot drop to a user a read-only checkout binds")
    # a folder the other user can reach (pytest's own temporary folders are its owner's alone)
    with tempfile.TemporaryDirectory(prefix="gear-readonly-") as shared:
        Path(shared).chmod(0o755)
        yield from _read_only_server(Path(shared), tmp_path)


def _read_only_server(root: Path, tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    checkout = root / "checkout"
    for name in RUNTIME:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.tags.json"))
        else:
            checkout.mkdir(exist_ok=True)
            shutil.copy2(src, checkout / name)
    home = root / "home"
    user_data = home / ".local" / "share" / "gear-studio"
    built = demo_data(tmp_path / "prepared")
    shutil.copytree(built / "indexes" / "walkthrough", user_data / "indexes" / "walkthrough")
    prefix: tuple[str, ...] = ()
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
        prefix = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
        # the other user runs this project's virtual environment: a checkout inside a private folder (`mktemp -d`
        # makes one) hides it, and the app could not start for a reason that is not the app's
        seen = subprocess.run([*prefix, sys.executable, "-c", "import streamlit"], capture_output=True, text=True)
        if seen.returncode != 0:
            pytest.skip(f"user {NOBODY} cannot use this checkout's virtual environment ({sys.prefix}: a folder above "
                        f"it is private to root): run the tests from a checkout others may read")
    set_writable(checkout, False)
    env = {**AS_SHIPPED, "HOME": str(home), "XDG_DATA_HOME": "", "XDG_CACHE_HOME": "",
           "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        with studio_server(None, env, root / "streamlit.log", checkout=checkout, prefix=prefix) as url:
            yield url, checkout, home
    finally:
        set_writable(checkout, True)


def test_a_read_only_checkout_saves_traces_tags_and_reports_in_the_users_data_folder(
        read_only_server, browser_page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    url, checkout, home = read_only_server
    before = listing(checkout)
    data = home / ".local" / "share" / "gear-studio"
    page = browser_page
    page.goto(url)
    expect(page.get_by_text("Showing: example: walkthrough")).to_be_visible(timeout=90_000)
    page.locator(".st-key-save_trace button").first.click()  # the replayed run, saved
    expect(page.get_by_text(re.compile(r"saved as \d{8}-\d{6}_"))).to_be_visible(timeout=30_000)
    page.get_by_role("link", name="Traces").click()
    settled(page)
    pick(page, "Trace", "walkthrough_3hop_gear.json")  # a bundled trace: it lives in assets/
    settled(page)  # the tag form of that trace replaces the first one's
    pick(page, "Categories", "reasoner hallucination")
    page.get_by_text("Tag this trace").click()  # closes the list (Escape would clear the choice)
    expect(page.locator('[data-testid="stMultiSelect"]').get_by_text("reasoner hallucination")).to_be_visible()
    page.get_by_role("button", name="Save tags").click()
    saved = re.compile(r"saved ~/.local/share/gear-studio/tags/assets__traces__walkthrough_3hop_gear.tags.json")
    expect(page.get_by_text(saved)).to_be_visible(timeout=30_000)
    page.get_by_role("link", name="Evaluate").click()
    settled(page)
    page.get_by_role("button", name="Run evaluation").click()  # BM25 and Hybrid: no LLM
    expect(page.get_by_text(re.compile(r"Saved \d+ report")).first).to_be_visible(timeout=120_000)
    tags = json.loads((data / "tags" / "assets__traces__walkthrough_3hop_gear.tags.json").read_text())
    assert tags["categories"] == ["reasoner hallucination"]
    assert len(list((data / "traces").glob("*.json"))) == 1
    assert list((data / "evals").glob("*.json"))  # the reports
    assert listing(checkout) == before  # nothing in the checkout changed
    log = (checkout.parent / "streamlit.log").read_text()
    assert "Traceback" not in log and "Permission denied" not in log, log[-3000:]
    assert not page.dialogs  # type: ignore[attr-defined]


# -- item 7: a page's own address ------------------------------------------------------------------------------------
@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[str]:
    data = demo_data(tmp_path)
    with studio_server(data, {**AS_SHIPPED}, tmp_path / "streamlit.log") as url:
        yield url


@pytest.mark.parametrize("path", ["Index", "Compare", "Traces", "Evaluate"])
def test_a_link_to_a_page_opens_that_page_without_a_dialog(fresh_server: str, browser_page,  # noqa: F811
                                                           path: str) -> None:
    """The first request a fresh server gets (the lecture's link): the page itself, no "Page not found" over it."""
    from playwright.sync_api import expect

    page = browser_page
    page.goto(f"{fresh_server}/{path}")
    expect(page.locator('[data-testid="stSidebarNav"] a[aria-current="page"]')).to_have_count(1, timeout=60_000)
    page.wait_for_timeout(1_500)
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator('[role="dialog"]').count() == 0
    expect(page.locator('[data-testid="stSidebarNav"] a[aria-current="page"]')).to_contain_text(path)


# -- item 6: graph pictures a person can read -------------------------------------------------------------------------
def open_picture(page, html: str, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    page.goto(f"file://{path}")
    page.wait_for_function("() => window.gearFitted === true", timeout=30_000)


def test_graph_pictures_open_with_labels_a_person_can_read(browser_page, tmp_path: Path) -> None:  # noqa: F811
    import networkx as nx

    from gear import viz
    from gear.events import BeamsSearched, InitialNodes
    from gear.trace import Trace

    page = browser_page
    # a picture larger than its frame opens whole (every node inside the frame; tests/e2e/test_lesson.py
    # checks each node's box), and says that scrolling zooms in
    g = nx.MultiDiGraph()
    for n in range(80):
        g.add_node(n, label=f"entity number {n} of a large neighbourhood")
        g.add_edge(n, (n + 1) % 80, label="next to")
    open_picture(page, viz.graph_html(g, legend=[("text", "#000", "a ring")]), tmp_path, "ring")
    assert 0 < page.evaluate("() => network.getScale()") <= 1
    assert "drag to move · scroll to zoom" in page.content()
    # the beams, drawn as paths from left to right: no two entities' labels overlap
    trace = Trace.load(ROOT / "assets" / "traces" / "walkthrough_3hop_gear.json")
    for n, (beams, initial) in enumerate(zip(trace.of(BeamsSearched), trace.of(InitialNodes), strict=True)):
        open_picture(page, viz.beams_html(beams, initial, viz.passage_lookup(trace), gold_known=True), tmp_path,
                     f"beams{n}")
        boxes = page.evaluate("() => nodes.getIds().map(id => network.getBoundingBox(id))")
        overlapping = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                       if a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"]
                       and b["top"] < a["bottom"]]
        assert overlapping == [], f"iteration {n + 1}: {len(overlapping)} pairs of node labels overlap"
