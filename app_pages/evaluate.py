"""Evaluate: run gear.eval.evaluate on a QA set from the page, chart the results, save and reload them."""

from __future__ import annotations

import streamlit as st

from studio.core.safe import guarded, setup
from studio.core.sidebar import choose_index, sidebar_settings
from studio.gold.runs import evaluation_diagnosis
from studio.pages.evaluate import run_form, show_results
from studio.pages.evaluate_pairs import run_pairs
from studio.pages.evaluate_sweeps import sweeps_and_analyses


@guarded
def page() -> None:
    setup("Evaluate", ":material/bar_chart:")
    index = choose_index()
    base = sidebar_settings(show_method=False)
    run_tab, results_tab, pairs_tab, sweeps_tab = st.tabs(["Run an evaluation", "Results",
                                                           "Two runs, question by question",
                                                           "Sweeps and the paper's analyses"])
    with run_tab:
        if index is None:
            st.info("Pick or build an index first.")
        else:
            run_form(index, base)
    with results_tab:
        show_results()
        evaluation_diagnosis()  # where the gold was lost, per question (studio/gold/runs.py)
    with pairs_tab:
        run_pairs()  # two runs lined up question by question (studio/pages/evaluate_pairs.py)
    with sweeps_tab:
        sweeps_and_analyses()  # a gear sweep's grid, and the paper's analyses beyond Table 1


page()
