"""Evaluate: run gear.eval.evaluate on a QA set from the page, chart the results, save and reload them."""

from __future__ import annotations

import streamlit as st

from studio.diagnosis_runs import evaluation_diagnosis
from studio.evaluate import run_form, show_results
from studio.run_pairs import run_pairs
from studio.safe import guarded, setup
from studio.sidebar import choose_index, sidebar_settings
from studio.sweeps import sweeps_and_analyses


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
        evaluation_diagnosis()  # issue 19: where the gold was lost, per question (studio/diagnosis_runs.py)
    with pairs_tab:
        run_pairs()  # issue 38: two runs lined up question by question (studio/run_pairs.py)
    with sweeps_tab:
        sweeps_and_analyses()  # a gear sweep's grid, and the paper's analyses beyond Table 1 (studio/sweeps.py)


page()
