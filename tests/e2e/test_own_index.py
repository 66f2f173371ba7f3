"""Building an own index in a real browser, as a new user does it: twenty short .txt files about
books, one longer than a passage. Before Build the page names the file that is cut into several passages and why,
and how the files are titled; after Build the progress box is brought into view at once, and says no time left
until the model's pace is measured on the run itself (an assumed pace stayed "≈ 2 min left" for minutes).
The extraction is scripted (tests/e2e/scripted_build.py: never the real model), its first passage held until the
test has looked; the app runs as shipped otherwise (the embedded model chosen, on a CPU)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.sessions import studio_server
from tests.e2e.test_browser import AS_SHIPPED, browser_page, demo_data  # noqa: F401

pytestmark = pytest.mark.e2e

BOOKS = {f"Book_{n:02d}": f"Book {n} is a novel about the sea, written in {1900 + n} by an author from Leeds."
         for n in range(1, 20)}
LONG = "The_Red_House"  # 148 words: cut into two passages of at most ≈120
BOOKS[LONG] = " ".join(["The Red House is a novel by Mark Haddon about a family of eight who spend a week in a rented "
                         "house on the Welsh border, where old grievances surface and every chapter moves between "
                         "their minds."] * 4)[:900]


@pytest.fixture
def books(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "books"
    folder.mkdir()
    for name, text in BOOKS.items():
        (folder / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    return sorted(folder.iterdir())


@pytest.fixture
def scripted_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The app as shipped over the walk-through demo, its extraction scripted (a passage a second) and its first
    passage held until the yielded release file exists."""
    data = demo_data(tmp_path)
    release = tmp_path / "release"
    env = {**AS_SHIPPED, "GEAR_TEST_RELEASE": str(release), "GEAR_TEST_PASSAGE_SECONDS": "0.2"}
    with studio_server(data, env, tmp_path / "streamlit.log", launcher=("-m", "tests.e2e.scripted_build")) as url:
        yield url, release


def test_an_own_index_names_its_cut_files_and_shows_its_progress_in_view(
        scripted_server, books: list[Path], browser_page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    url, release = scripted_server
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{url}/Index")
    page.get_by_role("tab", name="Build a new index").click(timeout=90_000)
    name = page.get_by_label("Index name")
    name.fill("books")
    name.press("Enter")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files([str(p) for p in books])
    # before Build: the cut file, how many passages it becomes and why; how a file is titled
    cut = page.get_by_text("1 of 20 text files is cut into several passages")
    expect(cut).to_be_visible(timeout=60_000)
    expect(cut).to_contain_text(f"{LONG}.txt → 2 passages")
    expect(cut).to_contain_text("at most ≈120 words")
    expect(page.get_by_text("“The_Red_House.txt” → “The Red House”")).to_be_visible()
    # Streamlit's own caption under each uploader says the app's limit, as its label does
    expect(page.get_by_text("25MB per file").first).to_be_visible()
    assert page.get_by_text("500MB per file").count() == 0

    page.get_by_role("button", name="Build index").click()
    box = page.locator(".st-key-ix_progress")
    box.wait_for(state="attached", timeout=60_000)  # the script run reached the build
    expect(box).to_be_in_viewport(timeout=1_000)  # brought into view at once, below the uploaders as it is
    label = page.get_by_text("Building books: extracting triples")
    expect(label).to_contain_text("0 / 21 passages", timeout=60_000)
    # the first passage is held: no time left is said until the model's pace is measured on this run
    expect(label).to_contain_text("measuring the pace…")
    assert "left" not in label.inner_text()
    release.touch()
    expect(page.get_by_text("Index books is ready")).to_be_visible(timeout=120_000)
    assert not page.dialogs  # type: ignore[attr-defined]
