"""Traces: browse saved runs, filter them, open one in the Ask view, and tag failures with the paper's error
categories."""

from __future__ import annotations

import streamlit as st

from gear.trace import Trace
from studio.safe import esc_md, guarded, setup
from studio.traces import (
    category_chart,
    filtered,
    open_in_ask,
    pick_trace,
    show_table,
    tag_form,
    trace_files,
    trace_table,
)


@guarded
def page() -> None:
    setup("Traces — error analysis", ":material/folder_open:")
    files = trace_files()
    if not files:
        st.info("No traces yet. Save a run on the Ask page, or run an evaluation with traces.")
        return
    df = trace_table(files)
    view = filtered(df)
    show_table(view, len(df))
    if view.empty:
        return
    path = pick_trace(view)
    trace = Trace.load(path)
    st.markdown(f"**Question:** {esc_md(trace.question)}")
    if st.button("Open in the Ask view", key="tr_open", type="primary"):
        open_in_ask(trace, path)
    tag_form(path)
    category_chart(files)


page()
