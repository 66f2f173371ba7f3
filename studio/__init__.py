"""Streamlit widgets shared by the app pages. The app side of the house: it may import streamlit and gear; the gear
engine never imports it."""
