"""Traces: browse this session's runs and saved ones, filter them, open one in the Ask view, and tag failures with the
paper's error categories."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from gear.trace import TraceError
from studio.core.paths import shown, traces_dir
from studio.core.safe import esc_md, guarded, one_line, setup
from studio.core.saves import open_trace
from studio.core.session import history, open_in_ask
from studio.gold.runs import traces_diagnosis
from studio.pages.traces import (
    SESSION,
    category_chart,
    filtered,
    pick_trace,
    save_session_run,
    session_run,
    show_table,
    tag_form,
    trace_files,
    trace_table,
)


@guarded
def page() -> None:
    setup("Traces — error analysis", ":material/folder_open:")
    files = trace_files()
    runs = history()
    if not files and not runs:
        st.info("No traces yet: every run you make on the Ask and Compare pages is listed here, and evaluations "
                "with traces add theirs.")
        return
    df = trace_table(files, runs)
    view = filtered(df)
    show_table(view, len(df))
    if view.empty:
        return
    key = pick_trace(view)
    run = session_run(key)
    try:
        trace = run.trace if run is not None else open_trace(key)
    except TraceError as exc:  # changed on disk since it was listed
        st.error(esc_md(one_line(exc)))
        return
    st.markdown(f"**Question:** {esc_md(trace.question)}")
    if st.button("Open in the Ask view", key="tr_open", type="primary"):
        if run is not None:
            open_in_ask(trace, f"this session's run of {run.name}", ran_here=True)
        else:
            open_in_ask(trace, Path(key))
    if run is not None:
        where = shown(traces_dir())
        st.caption(f"A run of this session: save it (into {where}) to tag it; saved runs are shared with everyone "
                   "using this app.")
        if st.button("Save trace", key="tr_save", icon=":material/save:", help=f"Keep it in {where}."):
            save_session_run(run)
            st.rerun()
    else:
        tag_form(Path(key))
    category_chart(files)
    # where the gold was lost, over a folder (studio/gold/runs.py); this session's runs have no file
    traces_diagnosis(view[view["where"] != SESSION])


page()
