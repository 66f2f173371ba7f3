"""Streamlit widgets shared by the app pages (this package may import streamlit; gear engine modules may not)."""
