"""Figures and table rows of diagnoses (gear.viz.diagnosis): the funnel, losses per stage, categories per run."""

from __future__ import annotations

import json
from pathlib import Path

from gear.diagnosis import diagnose, summarise
from gear.trace import Trace
from gear.viz.diagnosis import (
    DROPPED_CELL,
    FOUND_CELL,
    LOST_CELL,
    OPEN_CELL,
    ZERO,
    category_label,
    diagnosis_category_figure,
    funnel_figure,
    lost_at_figure,
    outcome,
    side_by_side_rows,
    stage_table,
)

TRACES = Path(__file__).resolve().parents[2] / "assets" / "traces"


def summary():
    return summarise(diagnose(Trace.load(p)) for p in sorted(TRACES.glob("*.json")))


def test_the_funnel_has_a_trace_per_run_with_its_own_stages() -> None:
    s = summary()
    fig = funnel_figure(s)
    names = [t.name for t in fig.data]
    assert names == list(s.runs)
    naive = next(t for t in fig.data if t.name == "naive")
    assert list(naive.y) == ["gold passages", "base", "initial", "beam", "expanded", "fused", "final", "final@5"]
    assert list(naive.x) == [s.runs["naive"].gold, *(s.runs["naive"].funnel[st] for st in s.runs["naive"].stages)]
    assert naive.x[1] == 1
    # a funnel per run, each on its own stage axis (one shared axis would interleave the families' stages)
    assert len({t.yaxis for t in fig.data}) == len(fig.data)
    assert [a.text.split("<br>")[0] for a in fig.layout.annotations if a.name != ZERO] == list(s.runs)


def test_a_chain_is_a_funnel_that_never_widens_and_the_rest_is_drawn_as_what_it_is() -> None:
    """GeAR's gist 20 % → linked 80 % drawn as a funnel widened downwards. A run whose every gold passage
    reached a first run of its stages is a funnel (never increasing downwards); one where the graph reached passages
    an earlier stage missed is a bar per stage, titled so; a stage no gold passage reached says "0 · 0 %"."""
    s = summary()
    fig = funnel_figure(s)
    titles = {a.text.split("<br>")[0]: a.text for a in fig.layout.annotations if a.name != ZERO}
    for trace in fig.data:
        run = s.runs[trace.name]
        if trace.type == "funnel":
            assert run.chain and list(trace.x) == sorted(trace.x, reverse=True)
            assert "not a chain" not in titles[trace.name]
        else:
            assert trace.type == "bar" and trace.orientation == "h" and not run.chain
            assert "not a chain: each stage by any route" in titles[trace.name]
        for count, text in zip(trace.x, trace.text, strict=True):
            assert text == f"{count} · {round(100 * count / run.gold)} %"
    gear = next(t for t in fig.data if t.name == "gear (paper)")
    assert gear.type == "bar"  # the walk-through's GeAR runs: gist 1 of 8 gold passages, linked 5 — not a funnel
    assert s.runs["naive"].chain and next(t for t in fig.data if t.name == "naive").type == "funnel"
    none_found = {"naive": {**s.to_dict()["naive"], "funnel": {**s.runs["naive"].funnel, "final": 0, "final@k": 0}}}
    drawn = funnel_figure(none_found)
    assert drawn.data[0].type == "funnel" and list(drawn.data[0].text)[-2:] == ["0 · 0 %", "0 · 0 %"]
    # a bar of width 0 shows no words of its own: they are written where it would be
    assert [(a.y, a.text) for a in drawn.layout.annotations if a.name == ZERO] == [("final", "0 · 0 %"),
                                                                                    ("final@5", "0 · 0 %")]


def test_figures_take_a_summary_or_its_saved_form() -> None:
    s = summary()
    saved = json.loads(json.dumps(s.to_dict()))  # as an evaluation report keeps it
    for make in (funnel_figure, lost_at_figure, diagnosis_category_figure):
        assert make(s).to_plotly_json()["data"] == make(saved).to_plotly_json()["data"]


def test_categories_and_losses_per_run() -> None:
    s = summary()
    cats = diagnosis_category_figure(s)
    gear = next(t for t in cats.data if t.name == "gear (paper)")
    assert dict(zip(gear.x, gear.y, strict=True))["final ranking"] == 1  # the walk-through: ranked out, rank 11
    assert "no error" in list(cats.data[0].x)  # the sync 3-hop run found everything
    lost = lost_at_figure(s)
    naive = next(t for t in lost.data if t.name == "naive")
    assert dict(zip(lost.data[0].x, naive.y, strict=True))["base"] == 2
    assert "left the run" in lost_at_figure(s, "dropped_at").layout.title.text


def test_run_names_are_escaped_in_the_figures() -> None:
    s = summary().to_dict()
    s["<b>x</b>"] = s.pop("naive")
    assert "<b>x</b>" not in {t.name for t in funnel_figure(s).data}
    assert "<b>x</b>" not in {a.text for a in funnel_figure(s).layout.annotations}


def test_stage_table_shows_the_best_iteration_or_one_and_marks_the_losses() -> None:
    d = diagnose(Trace.load(TRACES / "walkthrough_3hop_gear.json"))
    table = stage_table(d)
    assert table.columns == ["gold passage", "base", "read", "link", "beam", "expanded", "fused", "gist", "linked",
                             "final", "final@5", "lost at"]
    assert table.per_iteration == ["base", "read", "link", "beam", "expanded", "fused", "gist"]
    rows = {r["gold passage"]: (r, m) for r, m in zip(table.rows, table.marks, strict=True)}
    basilica, marks = rows["St. Peter's Basilica"]
    # the best of iterations 1–4: rank 4 in a base list (iterations 2–4), a beam at hop 2 (iteration 1), never read
    assert basilica["base"] == "✓4" and basilica["beam"] == "✓h2" and basilica["read"] == "✗"
    assert basilica["final"] == "✓10" and basilica["final@5"] == "✗"
    assert basilica["lost at"] == "read → gist"
    assert marks == {"read": LOST_CELL, "gist": DROPPED_CELL}
    cathedral, marks = rows["Bremen Cathedral"]
    assert cathedral["lost at"] == "found" and marks == {"final@5": FOUND_CELL}
    # one iteration at a time: iteration 1's base list held the basilica at rank 5, iteration 2's beams missed it
    first = {r["gold passage"]: r for r in stage_table(d, 1).rows}["St. Peter's Basilica"]
    second = {r["gold passage"]: r for r in stage_table(d, 2).rows}["St. Peter's Basilica"]
    assert (first["base"], first["beam"], second["base"], second["beam"]) == ("✓5", "✓h2", "✓4", "✗")
    assert first["final"] == second["final"] == "✓10"  # once per run: the same in every view
    assert stage_table(d, 1).marks == table.marks  # where it was lost is the run's verdict, whichever view


def test_stage_table_of_a_run_cut_short() -> None:
    trace = Trace.load(TRACES / "walkthrough_3hop_gear.json")
    second = next(n for n, e in enumerate(trace.events) if e.kind == "iteration_started" and e.iteration == 2)
    cut = Trace(trace.events[:second + 2])  # iteration 2 had started its base retrieval: then Cancel
    d = diagnose(cut)
    basilica = next(r for r in stage_table(d, 2).rows if r["gold passage"] == "St. Peter's Basilica")
    assert basilica["base"] == "✓4" and basilica["read"] == "·"  # iteration 2 never read
    assert basilica["final"] == "·" and basilica["final@5"] == "·"  # no final ranking: the stage did not run
    table = stage_table(d)
    row = [r["gold passage"] for r in table.rows].index("St. Peter's Basilica")
    assert table.rows[row]["lost at"] == "open (read)"  # not "→ gist": a run cut short let nothing go for good
    assert table.marks[row] == {"read": OPEN_CELL}
    assert outcome(d, d.passages[row].id).startswith("…")


def test_side_by_side_rows_say_which_run_lost_which_passage_where() -> None:
    gear = diagnose(Trace.load(TRACES / "walkthrough_3hop_gear.json"))
    sync = diagnose(Trace.load(TRACES / "walkthrough_3hop_sync.json"))
    rows = side_by_side_rows({"GeAR": gear, "SyncGE": sync})
    assert [r["gold passage"] for r in rows][-1] == "proposed category"
    by_title = {r["gold passage"]: r for r in rows}
    assert by_title["St. Peter's Basilica"]["GeAR"] == "✗ read → gist"
    assert by_title["Bremen Cathedral"]["GeAR"] == "✓ rank 1"
    for title, row in by_title.items():
        if title != "proposed category":
            p = next(p for p in sync.passages if p.title == title)
            assert row["SyncGE"].startswith("✓" if p.status == "found" else "✗")
    assert by_title["proposed category"]["GeAR"] == category_label(gear) == "final ranking"
