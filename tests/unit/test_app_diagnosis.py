"""AppTests of the diagnosis views: the Ask page's "Gold passages" panel, the funnel and questions of the
Evaluate and Traces pages (a row opens its trace; the person accepts or changes the proposed category, kept as the
run's tags), and the stage tables side by side on Compare. Same tiny index and recorded LLM answers as test_app."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

from gear.diagnosis import CATEGORY_LABELS, diagnose
from gear.events import FinalRanking, RunStarted
from gear.trace import Trace
from gear.viz.diagnosis import category_label, stage_table
from studio.gold.runs import SHORT_LABELS
from studio.pages.traces import CATEGORIES as TAG_NAMES
from tests.scripted_llm import XSS
from tests.unit.test_app import QUESTION, start, studio  # noqa: F401  (studio: the fixture)

GOLD_TITLES = ["Mount Etna", "Sicily"]


def frames(at: AppTest) -> list:
    """Every st.dataframe's data (a Styler's underlying frame)."""
    return [df.value.data if hasattr(df.value, "data") else df.value for df in at.dataframe]


def stage_frame(at: AppTest):
    return next(f for f in frames(at) if "gold passage" in f.columns and "lost at" in f.columns)


def cell_styles(element) -> dict[tuple[int, int], str]:
    """(row, column) → the CSS a pandas Styler gave that cell, as Streamlit sends it to the browser."""
    out: dict[tuple[int, int], str] = {}
    for selectors, css in re.findall(r"([^{}]+)\{([^}]*)\}", element.proto.arrow_data.styler.styles):
        for row, col in re.findall(r"_row(\d+)_col(\d+)", selectors):  # cells styled alike share one rule
            out[(int(row), int(col))] = css
    return out


def markdown(at: AppTest) -> str:
    return " ".join(str(m.value) for m in at.markdown)


def captions(at: AppTest) -> str:
    return " ".join(str(c.value) for c in at.caption)


def replay(studio: dict, trace: Trace, name: str = "run") -> AppTest:  # noqa: F811
    trace.save(studio["data"] / "traces" / f"{name}.json")
    at = start(studio)
    at.selectbox(key="trace_pick").set_value(f"saved: {name}").run()
    at.button(key="replay_pick").click().run()
    assert not at.exception
    return at


def no_raw_html(at: AppTest) -> None:
    for group in (at.markdown, at.caption, at.info, at.warning):
        for m in group:
            assert "<img" not in str(m.value) and "<script" not in str(m.value), m.value


# -- Ask ---------------------------------------------------------------------------------------------------------------
def test_ask_shows_where_each_gold_passage_went_after_a_live_run(studio: dict) -> None:  # noqa: F811
    at = start(studio)
    at.selectbox(key="example").set_value(QUESTION).run()
    at.button(key="ask").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    assert any("Gold passages" in h.value for h in at.subheader)
    trace: Trace = at.session_state["trace"]
    table = stage_frame(at)
    expected = stage_table(diagnose(trace, 5))
    assert list(table.columns) == expected.columns
    assert sorted(table["gold passage"]) == GOLD_TITLES
    assert table.to_dict("records") == expected.rows
    # GeAR's per-iteration stages: the best any iteration achieved, or one iteration's own marks
    iteration = at.radio(key="ask_diag_table_iteration")
    assert iteration.options == ["best of all", "1", "2"]
    iteration.set_value("2").run()
    assert stage_frame(at).to_dict("records") == stage_table(diagnose(trace, 5), 2).rows
    iteration.set_value("best of all").run()
    assert "Proposed category:" in markdown(at)
    # the stage each passage was lost at is highlighted red (a found passage's final@5 cell green)
    element = next(df for df in at.dataframe if "lost at" in df.value.columns)
    styles = cell_styles(element)
    columns = list(table.columns)
    for n, row in enumerate(expected.rows):
        where = "final@5" if row["lost at"] == "found" else row["lost at"].split(" → ")[0]
        colour = "#d3f9d8" if row["lost at"] == "found" else "#ffc9c9"
        assert colour in styles.get((n, columns.index(where)), ""), (row, styles)
    assert not styles.get((0, 0))  # the title cell is plain


def test_a_free_question_gets_one_line_saying_why_nothing_is_diagnosed(studio: dict) -> None:  # noqa: F811
    trace: Trace = studio["trace"]
    start_event = trace.first(RunStarted)
    free = Trace([RunStarted(0, start_event.question, start_event.method, start_event.retriever,
                             start_event.settings), *trace.events[1:]])
    at = replay(studio, free, "free")
    assert "does not know its gold passages" in captions(at)
    assert not any("lost at" in f.columns for f in frames(at))


def test_a_cancelled_run_is_diagnosed_as_far_as_it_went(studio: dict) -> None:  # noqa: F811
    trace: Trace = studio["trace"]
    # cut after the first iteration's fused list: what a Cancel during the gist read leaves
    cut = next(n for n, e in enumerate(trace.events) if e.kind == "passages_fused")
    at = replay(studio, Trace(list(trace.events[:cut + 1])), "cancelled")
    assert not at.exception
    table = stage_frame(at)
    assert sorted(table["gold passage"]) == GOLD_TITLES
    assert set(table["final@5"]) == {"·"}  # the final ranking never ran
    assert "cut short" in captions(at) + markdown(at)
    assert "provisional" in markdown(at) or "none yet" in markdown(at)


def test_a_live_run_cancelled_mid_way_gets_its_panel_on_the_next_run(studio: dict) -> None:  # noqa: F811
    """What the Ask page does after a Cancel: the rerun keeps the steps so far as the session's trace
    (studio.pages.ask's settle_stopped_run) and the panel diagnoses them."""
    from studio.pages.ask import CANCELLED, LIVE_EVENTS

    trace: Trace = studio["trace"]
    cut = next(n for n, e in enumerate(trace.events) if e.kind == "beams_searched")
    at = start(studio)
    at.session_state[LIVE_EVENTS] = list(trace.events[:cut + 1])
    at.session_state[CANCELLED] = True
    at.run()
    assert not at.exception
    assert any("Cancelled" in w.value for w in at.warning)
    table = stage_frame(at)
    assert sorted(table["gold passage"]) == GOLD_TITLES
    assert set(table["final"]) == {"·"} and all(v == "found" or v.startswith("open") for v in table["lost at"])
    assert "cut short" in captions(at) + markdown(at)


def test_gold_passages_no_stage_reached_are_named_from_the_index(studio: dict) -> None:  # noqa: F811
    trace: Trace = studio["trace"]
    # a run stopped right after it started: the trace names its gold passages by id only
    at = replay(studio, Trace(list(trace.events[:1])), "started")
    table = stage_frame(at)
    assert sorted(table["gold passage"]) == GOLD_TITLES  # not "passage #2": the index's own titles


def test_untrusted_titles_in_the_panel_are_escaped(studio: dict) -> None:  # noqa: F811
    trace: Trace = studio["trace"]
    start_event = trace.first(RunStarted)
    final = trace.first(FinalRanking)
    evil = next(p.id for p in final.passages if "Evil" in p.title)
    gold = [*start_event.gold_passage_ids, evil]
    forged = Trace([RunStarted(0, start_event.question, start_event.method, start_event.retriever,
                               start_event.settings, "", gold, start_event.answers), *trace.events[1:]])
    at = replay(studio, forged, "evil")
    table = stage_frame(at)
    assert any(XSS in t for t in table["gold passage"])  # a dataframe cell is text, never HTML
    assert "Evil" in markdown(at)  # the per-passage evidence names it, escaped
    no_raw_html(at)


# -- Evaluate ----------------------------------------------------------------------------------------------------------
def run_evaluation(studio: dict, method: str = "GeAR (hybrid)") -> AppTest:  # noqa: F811
    at = start(studio)
    at.switch_page("app_pages/evaluate.py").run()
    at.multiselect(key="eval_methods").set_value([method]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    return at.run()


def select_question(at: AppTest, row: int) -> AppTest:
    table = next(df for df in at.dataframe if df.key and "_questions_" in df.key)
    at.session_state[table.key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    return at.run()


def saved_reports(studio: dict) -> list[dict]:  # noqa: F811
    return [json.loads(p.read_text()) for p in sorted((studio["data"] / "evals").glob("*.json"))]


def test_evaluate_shows_the_funnel_categories_and_questions(studio: dict) -> None:  # noqa: F811
    at = run_evaluation(studio)
    (report,) = saved_reports(studio)
    (summary,) = report["diagnosis"].values()
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    funnels = [s for s in specs if any(t.get("type") == "funnel" for t in s["data"])]
    assert len(funnels) == 1
    (funnel,) = funnels[0]["data"]
    assert funnel["y"][:3] == ["gold passages", "base", "read"] and funnel["y"][-1] == "final@5"
    assert funnel["x"] == [2, *(summary["funnel"][s] for s in summary["stages"])]  # the report's own counts
    assert any("Proposed error category" in json.dumps(s["layout"]) for s in specs)
    questions = next(f for f in frames(at) if "proposed" in f.columns)
    assert list(questions["question"]) == [QUESTION]
    proposed = report["per_question"][0]["diagnosis"]["category"]
    assert questions["proposed"][0].startswith(CATEGORY_LABELS[proposed])
    hops = next(f for f in frames(at) if "hop" in f.columns and "gold found" in f.columns)
    assert list(hops["questions"]) == [1] and list(hops["gold found"]) == [f"{summary['found']} / 2"]
    assert SHORT_LABELS[proposed] in hops["proposed categories"][0]


def test_evaluate_filters_questions_by_lost_stage_and_category(studio: dict) -> None:  # noqa: F811
    # two evaluations of BM25: at k = 5 both gold passages are found; at k = 1 (the base list holds one passage)
    # one of them is lost at base
    at = run_evaluation(studio, "BM25")
    at.multiselect(key="eval_ks").set_value([1]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    at.multiselect(key="eval_show").set_value(sorted(p.stem for p in (studio["data"] / "evals").glob("*.json")))
    at.run()
    diagnoses = [r["per_question"][0]["diagnosis"] for r in saved_reports(studio)]
    categories = {d["category"] for d in diagnoses}
    assert len(categories) == 2 and "none" in categories
    assert len(next(f for f in frames(at) if "proposed" in f.columns)) == 2
    category = next(m for m in at.multiselect if m.label == "Proposed category")
    assert sorted(category.options) == sorted(CATEGORY_LABELS[c] for c in categories)  # only those present
    category.set_value(["none"]).run()
    shown = next(f for f in frames(at) if "proposed" in f.columns)
    assert list(shown["proposed"]) == ["no error · high"] and list(shown["lost at"]) == ["—"]
    next(m for m in at.multiselect if m.label == "Proposed category").set_value([]).run()
    lost = next(m for m in at.multiselect if m.label == "Lost at")
    assert lost.options == ["base"]
    lost.set_value(["base"]).run()
    shown = next(f for f in frames(at) if "proposed" in f.columns)
    assert list(shown["lost at"]) == ["base"] and list(shown["found"]) == ["1/2"]
    assert not shown["proposed"].iloc[0].startswith("no error")


def test_a_question_row_takes_the_verdict_and_opens_its_trace(studio: dict) -> None:  # noqa: F811
    at = run_evaluation(studio)
    at = select_question(at, 0)
    assert not at.exception
    (report,) = saved_reports(studio)
    entry = report["per_question"][0]
    trace_file = Path(entry["trace_file"])
    assert trace_file.is_file()
    proposed = entry["diagnosis"]["category"]
    assert f"proposed: {CATEGORY_LABELS[proposed]}" in markdown(at)
    next(b for b in at.button if b.label == "Accept the proposal").click().run()
    assert not at.exception
    tags = json.loads(trace_file.with_name(trace_file.stem + ".tags.json").read_text())
    assert tags["diagnosis"]["chosen"] == proposed and tags["diagnosis"]["proposed"] == proposed
    if proposed != "none":
        assert tags["categories"] == [CATEGORY_LABELS[proposed]]
    questions = next(f for f in frames(at) if "proposed" in f.columns)
    assert questions["yours"][0].endswith("✓")
    # change it: the person's category replaces the proposal in the tags
    at = select_question(at, 0)
    choice = next(s for s in at.selectbox if s.label == "Or change it to")
    choice.set_value("graph").run()
    next(b for b in at.button if b.label == "Save").click().run()
    tags = json.loads(trace_file.with_name(trace_file.stem + ".tags.json").read_text())
    assert tags["categories"][0] == "graph quality" and tags["diagnosis"]["chosen"] == "graph"
    questions = next(f for f in frames(at) if "proposed" in f.columns)
    assert questions["yours"][0] == "graph quality"
    # the row opens its trace on the Ask page
    at = select_question(at, 0)
    next(b for b in at.button if b.label == "Open on the Ask page").click().run()
    assert not at.exception
    assert at.session_state["trace"].question == QUESTION
    assert stage_frame(at) is not None  # the Ask page, with its gold panel


def test_an_old_report_is_diagnosed_from_its_saved_traces(studio: dict, tmp_path: Path) -> None:  # noqa: F811
    at = run_evaluation(studio, "BM25")
    (saved,) = (studio["data"] / "evals").glob("*.json")
    report = json.loads(saved.read_text())
    for entry in report["per_question"]:
        entry.pop("diagnosis")
        # the data folder moved since: the recorded path is gone, the report's own traces folder holds the file
        entry["trace_file"] = str(tmp_path / "elsewhere" / Path(entry["trace_file"]).name)
    report.pop("diagnosis", None)
    saved.write_text(json.dumps(report))
    at = at.run()
    assert not at.exception
    questions = next(f for f in frames(at) if "proposed" in f.columns)
    assert list(questions["question"]) == [QUESTION]


# -- Traces ------------------------------------------------------------------------------------------------------------
def test_traces_page_diagnoses_a_folder_and_keeps_the_verdict_as_tags(studio: dict) -> None:  # noqa: F811
    folder = studio["data"] / "traces"
    for name in ("trace", "ircot", "ppr"):
        studio[name].save(folder / f"{name}.json")
    at = start(studio)
    at.switch_page("app_pages/traces.py").run()
    assert not at.exception
    at.selectbox(key="tr_diag_folder").set_value("saved").run()
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    funnel = next(s for s in specs if any(t.get("type") == "funnel" for t in s["data"]))
    assert len(funnel["data"]) == 3  # a funnel per run (GeAR, IRCoT, PPR)
    questions = next(f for f in frames(at) if "proposed" in f.columns)
    assert len(questions) == 3
    assert list(questions.columns[:2]) == ["question", "method"]  # the method in view at 1280 px
    assert any(re.search(r"\d+ found in the final top 5\. ", str(c.value)) for c in at.caption)  # k said
    row = list(questions["method"]).index(next(r for r in questions["method"] if r.startswith("ppr")))
    at = select_question(at, row)
    choice = next(s for s in at.selectbox if s.label == "Or change it to")
    choice.set_value("none").run()
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    tags = json.loads((folder / "ppr.tags.json").read_text())
    assert tags["categories"] == [] and tags["diagnosis"]["chosen"] == "none"
    # the Traces page's own tag form keeps the verdict it did not write
    at.selectbox(key="tr_choice").set_value("saved · ppr.json").run()
    next(t for t in at.text_area if t.label == "Note").input("checked by hand")
    at.button[[b.label for b in at.button].index("Save tags")].click().run()
    tags = json.loads((folder / "ppr.tags.json").read_text())
    assert tags["note"] == "checked by hand" and tags["diagnosis"]["chosen"] == "none"


def test_the_traces_tag_names_are_the_diagnosis_categories() -> None:
    assert set(TAG_NAMES) == set(CATEGORY_LABELS.values()) - {CATEGORY_LABELS["none"]}


# -- Compare -----------------------------------------------------------------------------------------------------------
def test_compare_lays_the_stage_tables_side_by_side(studio: dict) -> None:  # noqa: F811
    at = start(studio)
    at.switch_page("app_pages/compare.py").run()
    methods = ["BM25", "GeAR (hybrid)", "PPR (HippoRAG 2)"]
    at.multiselect(key="cmp_methods").set_value(methods).run()
    at.button(key="cmp_run").click().run()
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    grid = next(f for f in frames(at) if "gold passage" in f.columns and "proposed category" in set(f["gold passage"]))
    assert list(grid.columns) == ["gold passage", *methods]
    assert sorted(grid["gold passage"][:-1]) == GOLD_TITLES and grid["gold passage"].iloc[-1] == "proposed category"
    k = at.slider(key="cmp_k").value
    results = at.session_state["cmp_results"][2]
    for label in methods:
        d = diagnose(results[label], k)
        for title, outcome in zip(grid["gold passage"].iloc[:-1], grid[label].iloc[:-1], strict=True):
            p = next(p for p in d.passages if p.title == title)
            assert outcome.startswith("✓" if p.status == "found" else "✗"), (label, title, outcome)
        assert grid[label].iloc[-1] == category_label(d)
    # each method's own stage table, in a tab
    tables = [f for f in frames(at) if "lost at" in f.columns]
    assert len(tables) == len(methods)
    assert {tuple(t.columns[1:3]) for t in tables} >= {("base", "final")}


def test_gold_panel_copes_without_an_index(studio: dict, tmp_path: Path) -> None:  # noqa: F811
    """A trace replayed where its index is gone: the panel diagnoses from the trace alone."""
    studio["trace"].save(studio["data"] / "traces" / "run.json")
    shutil.rmtree(studio["index"])
    at = start(studio)
    at.selectbox(key="trace_pick").set_value("saved: run").run()
    at.button(key="replay_pick").click().run()
    assert not at.exception
    assert sorted(stage_frame(at)["gold passage"]) == GOLD_TITLES
