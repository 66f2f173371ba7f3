"""GeAR Studio — the entry point: the page set-up and the navigation; every page is a file under pages/.

Run with `make run` or `python -m streamlit run app.py` (settings in .streamlit/config.toml keep it offline).
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="GeAR Studio", page_icon="🔎", layout="wide")
st.navigation([
    st.Page("pages/ask.py", title="Ask", icon="💬", default=True),
    # url_path: the addresses the pages have always had (/Compare, …), so bookmarks keep working
    st.Page("pages/compare.py", title="Compare", icon="⚖️", url_path="Compare"),
    st.Page("pages/evaluate.py", title="Evaluate", icon="📊", url_path="Evaluate"),
    st.Page("pages/traces.py", title="Traces", icon="🗂️", url_path="Traces"),
    st.Page("pages/index.py", title="Index", icon="🧱", url_path="Index"),
]).run()
