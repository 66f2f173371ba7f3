"""The steps' names, notation and explanations: gear.viz.notation (the handout prints them too, without Streamlit);
kept here under its old name for the app's modules."""

from gear.viz.notation import GIST_READ, STEPS, TAUGHT, StepText, at_iteration, step_text, view_formula

__all__ = ["GIST_READ", "STEPS", "TAUGHT", "StepText", "at_iteration", "step_text", "view_formula"]
