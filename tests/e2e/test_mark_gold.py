"""Real browser: a question typed freely (its index has no QA set, so the run knows no gold passages), asked
on the Ask page at 1280 px; the person marks the two passages that answer it — one found by searching the index,
one among the run's own passages — sees the diagnosis appear, types the answer, saves it as a test question, finds it
among Ask's examples and as a QA set on the Evaluate page. Same data and scripted answers as test_browser (no model,
no network)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_browser import (  # noqa: F401  (fixtures)
    QUESTION,
    ask_button,
    assert_local,
    browser_page,
    data_dir,
    run_server,
    settled,
    shot,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def free_server(data_dir: Path, tmp_path_factory: pytest.TempPathFactory):  # noqa: F811
    """The app over a copy of the e2e data whose index has no QA set: every question is typed freely."""
    data = tmp_path_factory.mktemp("free") / "data"
    shutil.copytree(data_dir, data)
    (data / "indexes" / "tiny" / "qa.json").unlink()
    env = {"GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "tiny", "GEAR_LLM": "replay",
           "GEAR_LLM_CACHE_DIR": str(data_dir.parent / "llm_cache")}
    for url in run_server(data, env):
        yield url, data


def tick(page, label: str, first: bool) -> None:
    """Tick a checkbox by its label (Streamlit draws the label over the input, which takes no click itself)."""
    boxes = page.locator("label").filter(has=page.get_by_role("checkbox", name=re.compile(label)))
    (boxes.first if first else boxes.last).click()


def test_mark_diagnose_and_save_a_test_question(free_server, browser_page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    url, data = free_server
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(url)
    page.get_by_text("index and embedder ready").wait_for(timeout=180_000)
    question = page.get_by_label("Question", exact=True)
    question.fill(QUESTION)
    question.press("Enter")
    ask = ask_button(page)
    settled(page)
    ask.click()
    page.get_by_text("first graph drawn").first.wait_for(timeout=120_000)  # written when the run has finished
    settled(page)
    expect(page.get_by_text("Nothing to diagnose yet").first).to_be_visible()

    # mark one passage found by searching the index (the question is the default search) ...
    tick(page, r"^Mount Etna · #1 ", first=True)
    expect(page.get_by_text(re.compile(r"of 1 gold passage\(s\) found in the final top 5"))).to_be_visible(
        timeout=60_000)
    expect(page.get_by_text("Proposed category:").first).to_be_visible()
    # ... and one among the passages the run showed
    page.get_by_role("tab", name=re.compile(r"^This run's passages")).click()
    tick(page, r"^Sicily · #2 ", first=False)
    expect(page.get_by_text(re.compile(r"of 2 gold passage\(s\) found in the final top 5"))).to_be_visible(
        timeout=60_000)
    expect(page.get_by_role("button", name=re.compile(r"Sicily · #2$"))).to_be_visible()  # click: unmark
    answer = page.get_by_label(re.compile(r"^Right answer"))
    answer.fill("Mediterranean Sea")
    answer.press("Enter")
    expect(page.get_by_text(re.compile(r"^Suggestions"))).to_be_visible(timeout=60_000)
    settled(page)
    shot(page, "mark_gold_diagnosis")
    page.get_by_role("button", name="Save as a test question").click()
    expect(page.get_by_text(re.compile(r"Saved as a test question in tiny's own QA set \(1 question"))).to_be_visible(
        timeout=60_000)
    # the example list above the run counts it at once (the gold panel is a fragment: the page is drawn again)
    expect(page.get_by_label(re.compile(r"^Example questions \(1 of yours"))).to_be_attached(timeout=60_000)
    saved = json.loads((data / "indexes" / "tiny" / "own_qa.json").read_text(encoding="utf-8"))
    assert [r["question"] for r in saved] == [QUESTION] and saved[0]["answer"] == "Mediterranean Sea"
    assert [p["title"] for p in saved[0]["paragraphs"]] == ["Mount Etna", "Sicily"]

    # the saved question is among Ask's examples, and a QA set on the Evaluate page
    page.goto(url)
    page.get_by_label(re.compile(r"^Example questions \(1 of yours")).click()
    options = page.get_by_role("option")
    options.first.wait_for(timeout=30_000)
    assert any(text.startswith("★ yours") and QUESTION in text for text in options.all_inner_texts())
    page.keyboard.press("Escape")
    page.get_by_role("link", name="Evaluate").click()
    expect(page.get_by_text("your own questions (1, saved with their gold passages)")).to_be_visible(timeout=60_000)
    settled(page)
    shot(page, "mark_gold_evaluate")
    assert_local(page.requests)
    assert page.dialogs == []  # passage text and model output stayed text
