"""Streamlit widgets shared by the app pages. The app side of the house: it may import streamlit and gear; the gear
engine never imports it.

One module per concern: safe (escaping, page guard, header), resources (cached encoders/engines, demo builds, QA
sets), sidebar (index picker and settings), demo (bundled demos and data paths), trace_view and teaching (drawing a
run), and one module per page's logic (ask, compare, evaluate, traces, indexes); app_pages/ holds only page layouts."""
