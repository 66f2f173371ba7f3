"""Evaluate's fourth tab (studio/pages/evaluate_sweeps.py): a sweep from the data folder drawn as the heatmap
gear.viz.analyses makes of it, with its table; a sweep file that is not one refused in one line; the paper's analyses
from the bundled reports."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from gear.agent.engine import Engine
from gear.config import Settings
from gear.data.questions import load_qa
from gear.eval.sweep import Axis, load_sweep, run_sweep
from tests.conftest import FakeEncoder
from tests.unit.test_app import start, studio  # noqa: F401  (studio: the fixture)


def evaluate_page(studio: dict) -> AppTest:  # noqa: F811
    at = start(studio)
    at.switch_page("app_pages/evaluate.py").run()
    assert not at.exception
    return at


def a_sweep(studio: dict) -> Path:  # noqa: F811
    engine = Engine.open(studio["index"], Settings(), encoder=FakeEncoder())
    path = studio["data"] / "sweeps" / "tiny_grid.json"
    run_sweep(engine, load_qa(studio["index"] / "qa.json")[0], Settings().with_(retriever="bm25", method="naive"),
              [Axis("beam_length", (1, 2)), Axis("beam_width", (2, 10))], [2, 5], path, protocol="one-run",
              index="tiny")
    return path


def heatmaps(at: AppTest) -> list[dict]:
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return [f for f in figures if f["data"] and f["data"][0]["type"] == "heatmap"]


def test_a_sweep_is_drawn_as_its_heatmap_and_table(studio: dict) -> None:  # noqa: F811
    sweep = load_sweep(a_sweep(studio))
    at = evaluate_page(studio)
    assert at.selectbox(key="sweep_file").value == "tiny_grid"  # a person's own sweep before the bundled ones
    at.selectbox(key="sweep_measure").set_value("R@5").run()
    at.selectbox(key="sweep_rows").set_value("beam_length").run()
    at.selectbox(key="sweep_columns").set_value("beam_width").run()
    assert not at.exception
    heat = heatmaps(at)[0]["data"][0]
    expected = [[next(c.recall["5"] for c in sweep.cells if c.values == {"beam_length": b, "beam_width": w})
                 for w in (2, 10)] for b in (1, 2)]
    assert heat["z"] == expected
    table = next(df.value for df in at.dataframe if "ΔR@5" in df.value.columns)
    assert list(table["R@5"]) == [round(c.recall["5"], 1) for c in sweep.cells]
    assert list(table["ΔR@5"]).count("baseline") == 1


def test_a_file_that_is_no_sweep_is_refused_in_one_line(studio: dict) -> None:  # noqa: F811
    folder = studio["data"] / "sweeps"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text('{"kind": "gear-sweep", "ks": "<b>five</b>"}', encoding="utf-8")
    at = evaluate_page(studio)
    at.selectbox(key="sweep_file").set_value("broken").run()
    assert not at.exception
    assert any("broken.json&#58; not a sweep file" in e.value for e in at.error)
    assert not any("<b>" in e.value for e in at.error)


def test_the_papers_analyses_are_drawn_from_the_bundled_reports(studio: dict) -> None:  # noqa: F811
    at = evaluate_page(studio)
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert "R@15 across iterations, MuSiQue (20 questions)" in titles
    assert any(t.startswith("Tokens spent by the end of each iteration") for t in titles)
    diversity = next(df.value for df in at.dataframe if "the paper: with / without" in df.value.columns)
    assert {"2Wiki", "HotpotQA"} <= set(diversity["dataset"])
