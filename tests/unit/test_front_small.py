"""The small things that looked unfinished: the token chart's step names have room, the
example list gives one reason when it cannot be marked, `gear eval` prints the "all" row once, the beams picture is
laid out as paths."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from gear import viz
from gear.events import LLMCalled
from gear.trace import Trace
from tests.unit.test_app import start, studio  # noqa: F401


def test_the_token_chart_makes_room_for_every_step_name() -> None:
    calls = [LLMCalled(it, step, "m", 1000, 50, 1.0) for it in range(1, 5)
             for step in ("read (sync)", "read (gist)", "reason", "rewrite")] + [LLMCalled(4, "qa", "m", 900, 9, 1.0)]
    fig = viz.tokens_figure(Trace(list(calls)))
    assert len(fig.data[0].x) == 17  # GeAR's four iterations and the answer
    xaxis, legend = fig.layout.xaxis, fig.layout.legend
    assert xaxis.automargin is True and xaxis.tickangle == -45  # slanted, and plotly grows the margin to fit them
    assert legend.y >= 1 and legend.yanchor == "bottom"  # the legend above the plot, never over the names


def test_the_beams_are_laid_out_as_paths_and_other_graphs_open_whole() -> None:
    """Paths from left to right, every node placed here (no physics, no hierarchical layout: it scattered a graph with
    a cycle across ±5,900 px), and the page opens on every node."""
    from tests.unit.test_viz import beams_event

    beams, initial, passages = beams_event()
    page = viz.beams_html(beams, initial, passages)
    options = json.loads(page.split("var options = ", 1)[1].split(";\n", 1)[0])
    assert options["physics"]["enabled"] is False and "hierarchical" not in options["layout"]
    assert options["edges"]["font"]["background"]  # a label crossed by another edge stays readable
    assert "drag to move" not in page  # the whole path layout is fitted
    nodes = json.loads(page.split("nodes = new vis.DataSet(", 1)[1].split(");", 1)[0])
    assert nodes and all(isinstance(n["x"], float | int) and isinstance(n["y"], float | int) for n in nodes)
    xs = sorted({n["x"] for n in nodes})
    assert len(xs) >= 2 and xs[-1] - xs[0] < 3000  # columns, not a scatter across thousands of pixels
    assert "network.moveTo" in page and "gearFitted" in page


def test_one_reason_when_the_examples_cannot_be_marked(studio: dict, tmp_path: Path,  # noqa: F811
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty_cache"
    empty.mkdir()
    monkeypatch.setenv("GEAR_LLM_CACHE_DIR", str(empty))  # replay from an empty cache: no LLM can be made
    at = start(studio)
    at.run()
    captions = [str(c.value) for c in at.caption]
    assert sum("Cannot tell which examples are recorded" in c for c in captions) == 1
    assert not any("shown once the index" in c for c in captions)  # not also "wait, they are coming"


def printed(data: dict) -> str:
    from gear.cli import evaluate

    buffer = io.StringIO()
    console = evaluate.out
    evaluate.out = Console(file=buffer, width=200)
    try:
        evaluate._print_report(data, [5])
    finally:
        evaluate.out = console
    return buffer.getvalue()


REPORT = {"retriever": "hybrid", "method": "none", "n_questions": 2, "recall": {"5": 50.0}, "latency_ms": {}}


def test_gear_eval_prints_the_all_row_once() -> None:
    one_group = printed({**REPORT, "by_hop": {"all": {"n": 2, "recall": {"5": 50.0}}}})
    assert [line.split("│")[1].strip() for line in one_group.splitlines() if line.startswith("│")] == ["all"]
    mixed = printed({**REPORT, "by_hop": {"3hop1": {"n": 1, "recall": {"5": 66.7}},
                                          "all": {"n": 1, "recall": {"5": 33.3}}}})
    groups = [line.split("│")[1].strip() for line in mixed.splitlines() if line.startswith("│")]
    assert groups == ["all", "3hop1", "no hop type"]
