"""Real browser: the Evaluate page's fourth tab at 1280 px — a person's sweep (`gear sweep` over the tiny index) drawn
as its heatmap and table, the bundled sweep of max iterations × beam length, and the paper's analyses (R@15 and
tokens across iterations) from the bundled runs; a hand-written sweep file with markup in its names shows it as
text. No model, no network."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.test_browser import (  # noqa: F401  (fixtures)
    XSS,
    assert_local,
    browser_page,
    data_dir,
    run_server,
    settled,
    shot,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def sweeps_server(data_dir: Path, tmp_path_factory: pytest.TempPathFactory):  # noqa: F811
    from gear.agent.engine import Engine
    from gear.config import Settings
    from gear.data.questions import load_qa
    from gear.embed import Encoder
    from gear.eval.sweep import Axis, load_sweep, run_sweep

    data = tmp_path_factory.mktemp("sweeps") / "data"
    shutil.copytree(data_dir, data)
    index = data / "indexes" / "tiny"
    engine = Engine.open(index, Settings(), encoder=Encoder(Settings().embedder))
    run_sweep(engine, load_qa(index / "qa.json")[0], Settings().with_(retriever="bm25", method="naive"),
              [Axis("beam_length", (1, 2, 3)), Axis("beam_width", (2, 5, 10))], [1, 2, 5], data / "sweeps" /
              "tiny_grid.json", protocol="one-run", index="tiny")
    hostile = load_sweep(data / "sweeps" / "tiny_grid.json").model_dump(mode="json")
    hostile["index"] = XSS
    hostile["baseline"] = hostile["cells"][0]["name"] = f"beam_length={XSS}"
    (data / "sweeps" / "hostile.json").write_text(json.dumps(hostile), encoding="utf-8")
    env = {"GEAR_STUDIO_DATA": str(data), "GEAR_STUDIO_BUILD_DEMOS": "0", "GEAR_STUDIO_INDEX": "tiny",
           "GEAR_LLM": "replay", "GEAR_LLM_CACHE_DIR": str(data.parent / "llm_cache")}
    yield from run_server(data, env)


def pick(page, label: str, option: str) -> None:
    page.get_by_label(label, exact=True).click()
    page.get_by_role("option", name=option, exact=True).click()


def test_a_sweeps_heatmap_the_bundled_grid_and_the_papers_analyses(sweeps_server, browser_page) -> None:  # noqa: F811
    from playwright.sync_api import expect

    page = browser_page
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(sweeps_server)
    page.get_by_role("link", name="Evaluate").click()
    settled(page)
    page.get_by_role("tab", name="Sweeps and the paper's analyses").click(timeout=120_000)
    settled(page)
    expect(page.get_by_text("A sweep's grid")).to_be_visible(timeout=60_000)
    # the newest of a person's sweeps first: the hand-written one, its names shown as text
    expect(page.locator(".js-plotly-plot .heatmaplayer").first).to_be_visible(timeout=60_000)
    expect(page.get_by_text(f"against the baseline (beam_length={XSS})")).to_be_visible()
    assert dialogs == []
    assert page.evaluate("document.querySelectorAll('img[src=\"x\"]').length") == 0
    pick(page, "Sweep", "tiny_grid")
    settled(page)
    heatmap = page.locator(".js-plotly-plot .heatmaplayer").first
    expect(heatmap).to_be_visible(timeout=60_000)
    expect(page.get_by_text("baseline").first).to_be_visible()
    shot(page, "sweeps_own_grid")

    pick(page, "Sweep", "bundled: dev50_every2_n20_gear_n_l")
    settled(page)
    expect(page.locator(".js-plotly-plot .heatmaplayer").first).to_be_visible(timeout=60_000)
    page.get_by_text("The paper's analyses beyond Table 1", exact=True).scroll_into_view_if_needed()
    expect(page.get_by_text("R@15 across iterations, MuSiQue (20 questions)")).to_be_visible(timeout=60_000)
    shot(page, "sweeps_bundled_and_analyses")

    assert dialogs == []
    assert_local(requests)
