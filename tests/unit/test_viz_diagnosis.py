"""Figures and table rows of diagnoses (gear.viz.diagnosis): the funnel, losses per stage, categories per run."""

from __future__ import annotations

import json
from pathlib import Path

from gear.eval.diagnosis import diagnose, summarise
from gear.trace import Trace
from gear.viz.diagnosis import diagnosis_category_figure, funnel_figure, lost_at_figure, stage_rows

TRACES = Path(__file__).resolve().parents[2] / "assets" / "traces"


def summary():
    return summarise(diagnose(Trace.load(p)) for p in sorted(TRACES.glob("*.json")))


def test_the_funnel_has_a_trace_per_run_with_its_own_stages() -> None:
    s = summary()
    fig = funnel_figure(s)
    names = [t.name for t in fig.data]
    assert names == list(s.runs)
    naive = next(t for t in fig.data if t.name == "naive")
    assert list(naive.y) == ["base", "initial", "beam", "expanded", "fused", "final", "final@5"]
    assert list(naive.x) == [s.runs["naive"].funnel[st] for st in s.runs["naive"].stages]
    assert naive.x[0] == 1 and fig.layout.funnelmode == "group"


def test_figures_take_a_summary_or_its_saved_form() -> None:
    s = summary()
    saved = json.loads(json.dumps(s.to_dict()))  # as an evaluation report keeps it
    for make in (funnel_figure, lost_at_figure, diagnosis_category_figure):
        assert make(s).to_plotly_json()["data"] == make(saved).to_plotly_json()["data"]


def test_categories_and_losses_per_run() -> None:
    s = summary()
    cats = diagnosis_category_figure(s)
    gear = next(t for t in cats.data if t.name == "gear (paper)")
    assert dict(zip(gear.x, gear.y, strict=True))["reasoner hallucination"] == 1
    assert "no error" in list(cats.data[0].x)  # the sync 3-hop run found everything
    lost = lost_at_figure(s)
    naive = next(t for t in lost.data if t.name == "naive")
    assert dict(zip(lost.data[0].x, naive.y, strict=True))["base"] == 2
    assert "left the run" in lost_at_figure(s, "dropped_at").layout.title.text


def test_run_names_are_escaped_in_the_figures() -> None:
    s = summary().to_dict()
    s["<b>x</b>"] = s.pop("naive")
    assert "<b>x</b>" not in {t.name for t in funnel_figure(s).data}


def test_stage_rows_per_stage_and_per_iteration() -> None:
    d = diagnose(Trace.load(TRACES / "walkthrough_3hop_gear.json"))
    rows = stage_rows(d)
    basilica = next(r for r in rows if r["gold passage"] == "St. Peter's Basilica")
    assert basilica["beam"] == "✓ hop 2 it1" and basilica["lost at"] == "read" and basilica["dropped at"] == "gist"
    assert basilica["final@5"] == "✗"
    wide = next(r for r in stage_rows(d, per_iteration=True) if r["gold passage"] == "St. Peter's Basilica")
    assert wide["base it1"] == "✓ 5" and wide["base it2"] == "✓ 4" and wide["linked"] == "✗"  # best: it2
    assert {k for k in wide if k.startswith("gist")} == {"gist it1", "gist it2", "gist it3", "gist it4"}
