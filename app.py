"""GeAR Studio — the entry point: the page set-up and the navigation; every page is a file under app_pages/
(not pages/: Streamlit treats a pages/ folder as the old multipage layout on a server's first run, and a link to
/Index then opened behind a "Page not found" dialog).

Run with `make run` or `python -m streamlit run app.py` (settings in .streamlit/config.toml keep it offline).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

# the tab's icon is a file in the project: an emoji needs an emoji font, a ":material/…:" page icon is fetched from a
# font service; the pages' icons are Streamlit's bundled Material icons (drawn offline, no emoji font needed)
st.set_page_config(page_title="GeAR Studio", page_icon=str(Path(__file__).parent / "assets" / "icon.png"),
                   layout="wide")
st.navigation([
    st.Page("app_pages/ask.py", title="Ask", icon=":material/chat:", default=True),
    # url_path: the addresses the pages have always had (/Compare, …), so bookmarks keep working
    st.Page("app_pages/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="Compare"),
    st.Page("app_pages/evaluate.py", title="Evaluate", icon=":material/bar_chart:", url_path="Evaluate"),
    st.Page("app_pages/traces.py", title="Traces", icon=":material/folder_open:", url_path="Traces"),
    st.Page("app_pages/index.py", title="Index", icon=":material/database:", url_path="Index"),
]).run()
