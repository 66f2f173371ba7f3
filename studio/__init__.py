"""The app's side of the house, in rooms by role: it may import streamlit and gear; the gear engine never imports it.
app_pages/ holds only the pages' layouts; imports run pages → views and gold → core (tests/unit/test_architecture.py).

Its packages: pages (what one page owns), views (a run drawn), gold (the app's side of the diagnosis) and core (what
every page stands on)."""
