"""Index: build an index from uploaded files or pick one; statistics; browse an entity's neighbourhood."""

from __future__ import annotations

import streamlit as st

from studio.core.safe import guarded, setup
from studio.core.sidebar import sidebar_settings
from studio.pages.index import build_tab, explore_tab


@guarded
def page() -> None:
    setup("Index", ":material/database:")
    # the LLM used when triples are extracted from raw text
    settings = sidebar_settings(show_method=False, show_knobs=False)
    st.sidebar.caption("The LLM above extracts the triples when an index is built from text without an OpenIE file.")
    explore, build = st.tabs(["Explore an index", "Build a new index"])
    with explore:
        explore_tab()
    with build:
        build_tab(settings)


page()
