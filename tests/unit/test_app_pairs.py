"""Evaluate's third tab, two runs question by question (studio/pages/evaluate_pairs.py): two methods run now
on the index's questions lined up, the paired numbers as gear.eval.pairing gives them, the two Sankeys, the filters and
a question's two runs at the stage where they part; two reports over other QA sets refused with the reason."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

from gear.eval.pairing import pair_reports
from tests.unit.test_app import start, studio  # noqa: F401  (studio: the fixture)

ROOT = Path(__file__).resolve().parents[2]


def two_methods_run_now(studio: dict) -> AppTest:  # noqa: F811
    at = start(studio)
    at.switch_page("app_pages/evaluate.py").run()
    at.multiselect(key="eval_methods").set_value(["Hybrid", "GeAR (hybrid)"]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    return at.run()


def reports(studio: dict) -> list[dict]:  # noqa: F811
    return [json.loads(p.read_text()) for p in sorted((studio["data"] / "evals").glob("*.json"))]


def test_two_methods_run_now_are_lined_up_with_their_paired_numbers(studio: dict) -> None:  # noqa: F811
    at = two_methods_run_now(studio)
    hybrid, gear = sorted(reports(studio), key=lambda r: r["method"] == "gear")
    assert hybrid["index_info"]["name"] == "tiny" and hybrid["index_info"]["passages"] > 0
    assert at.selectbox(key="pair_a").value.endswith("_hybrid") and "gear" in at.selectbox(key="pair_b").value
    # the pickers name reports as every other place does: index · method · when
    shown = [str(o) for o in at.selectbox(key="pair_a").options]
    assert any(o.startswith("tiny · Hybrid · 20") for o in shown) and any(
        o.startswith("tiny · GeAR (hybrid) · 20") for o in shown), shown
    expected = pair_reports(hybrid, gear, 5)
    # the Results tab: recall, answers and cost first (in view at 1280 px), "—" for the method that asks no LLM
    results = next(df.value for df in at.dataframe if "report" in df.value.columns)
    assert list(results.columns[-7:]) == ["EM", "F1", "tokens/q", "seconds/q", "method", "runs", "file"]
    by_method = results.set_index("method")
    assert by_method.loc["Hybrid", "tokens/q"] == "—" and by_method.loc["Hybrid GeAR", "tokens/q"] != "—"
    numbers = next(df.value for df in at.dataframe if "sign test p" in df.value.columns)
    assert list(numbers["measure"]) == [m.name for m in expected.measures]
    assert list(numbers["better"]) == [m.better for m in expected.measures]
    sankeys = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    sankeys = [s for s in sankeys if s["data"] and s["data"][0]["type"] == "sankey"]
    assert len(sankeys) == 2
    assert sum(sankeys[0]["data"][0]["link"]["value"]) == sum(len(q.passages) for q in expected.questions)
    table = next(df for df in at.dataframe if df.key and df.key.startswith("pair_questions_"))
    assert list(table.value["id"]) == [q.id for q in expected.questions]
    assert set(table.value["EM A"]) == {"—"} and set(table.value["answer A"]) == {"—"}  # hybrid answers nothing
    assert set(table.value["EM B"]) <= {"0", "1"}
    at.session_state[table.key] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    stage_tables = [df.value for df in at.dataframe if "gold passage" in df.value.columns]
    assert len(stage_tables) == 2  # A's and B's, side by side
    assert list(stage_tables[0]["gold passage"]) == list(stage_tables[1]["gold passage"])


def test_a_band_and_a_filter_keep_their_questions(studio: dict) -> None:  # noqa: F811
    at = two_methods_run_now(studio)
    band = at.selectbox(key="pair_band_categories")
    band.set_value(band.options[1]).run()
    assert not at.exception
    table = next(df for df in at.dataframe if df.key and df.key.startswith("pair_questions_"))
    assert len(table.value) == 1
    at.multiselect(key="pair_kinds").set_value(["B breaks"]).run()
    assert not at.exception
    assert not any(df.key and df.key.startswith("pair_questions_") for df in at.dataframe) or \
        all(len(df.value) <= 1 for df in at.dataframe if df.key and df.key.startswith("pair_questions_"))


def test_reports_over_other_questions_are_refused_with_the_reason(studio: dict) -> None:  # noqa: F811
    evals = studio["data"] / "evals"
    evals.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "docs" / "evals" / "dev50_every2_n20_naive.json", evals / "a_musique.json")
    shutil.copy(ROOT / "docs" / "evals" / "hotpotqa_hybrid.json", evals / "b_hotpotqa.json")
    at = start(studio)
    at.switch_page("app_pages/evaluate.py").run()
    at.selectbox(key="pair_a").set_value("a_musique").run()
    at.selectbox(key="pair_b").set_value("b_hotpotqa").run()
    assert not at.exception
    assert any("question ids differ" in e.value for e in at.error)
