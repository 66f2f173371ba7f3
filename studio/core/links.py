"""A link to any step of a lesson: the page's address names the run and the step — `?trace=walkthrough&step=7` for a
bundled trace (assets/traces/walkthrough.json), `?saved=FILE.json&step=7` for a run saved in the data folder's
traces/ — so a lecturer can put step 7 on a slide and a student's fresh browser opens there, offline. Teaching mode
keeps the address in step with the step shown; a name that is unknown, or a step out of range, is said so and the
lesson opens at its start."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from gear.trace import Trace, TraceError
from gear.viz.beam_knobs import KNOBS
from studio.core import paths
from studio.core.keys import LINK, TEACH_STEP, TEACHING
from studio.core.safe import esc_md, one_line
from studio.core.saves import open_trace

APPLIED = "lesson_link_applied"  # session state: the address last applied or written (so it is applied once)
NOTE = "lesson_link_note"  # session state: what was wrong with the link just opened
KNOB_LINK = "lesson_link_knobs"  # session state: the beam-search knobs the link just opened names
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
_STEP = re.compile(r"^[0-9]{1,6}$")  # ASCII digits only: "²" is a digit to str.isdigit, not to int


def link_for(path: Path) -> dict[str, str] | None:
    """The address parameters naming a trace file: bundled by its stem, saved by its file name; None elsewhere."""
    path = path.resolve()
    if path.parent == paths.BUNDLED_TRACES.resolve():
        return {"trace": path.stem}
    if path.parent == paths.traces_dir().resolve():
        return {"saved": path.name}
    return None


def resolve(params: dict[str, str]) -> tuple[Path | None, str]:
    """The trace file a link names, or None and why not (a name is a plain file name: no folder can be reached)."""
    if "trace" in params:
        name = params["trace"]
        path = paths.BUNDLED_TRACES / f"{name}.json"
        if not _NAME.match(name) or not path.is_file():
            known = ", ".join(sorted(p.stem for p in paths.BUNDLED_TRACES.glob("*.json")))
            return None, f"There is no bundled trace named “{name}” (bundled: {known})."
        return path, ""
    name = params.get("saved", "")
    path = paths.traces_dir() / name
    if not _NAME.match(name) or not name.endswith(".json") or name.endswith(".tags.json") or not path.is_file():
        return None, f"There is no saved trace “{name}” in {paths.shown(paths.traces_dir())}."
    return path, ""


def wanted() -> dict[str, str]:
    return {k: str(st.query_params[k]) for k in ("trace", "saved", "step") if k in st.query_params}


def apply_link(show: Callable[[Trace, Path], None], steps_of: Callable[[Trace], int]) -> None:
    """Open the lesson the page's address names, once per address: `show(trace, path)` makes it the session's trace
    and `steps_of(trace)` counts its steps. Called before the page draws anything."""
    params = wanted()
    if not ({"trace", "saved"} & params.keys()) and "step" not in params:
        return
    if st.session_state.get(APPLIED) == params:
        return
    st.session_state[APPLIED] = params
    path, problem = resolve(params) if {"trace", "saved"} & params.keys() else (None, "The link names no trace.")
    step = 1
    if path is not None:
        try:
            trace = open_trace(path)  # a link in the data folder that points out of it is not followed
        except (TraceError, OSError) as exc:
            problem = f"Cannot open {path.name}: {one_line(exc).removeprefix(f'{path}: ')}"
        else:
            show(trace, path)
            n = steps_of(trace)
            raw = params.get("step", "1")
            if not _STEP.match(raw) or not 1 <= int(raw) <= n:
                problem = f"This lesson has steps 1 to {n}; there is no step “{raw}”."
            else:
                step = int(raw)
    st.session_state[TEACHING] = True
    st.session_state[TEACH_STEP] = step - 1
    # the beam-search knobs the link names (`&diversity=off`): studio.views.beam_knobs sets them when its step draws
    st.session_state[KNOB_LINK] = {} if problem else {k: str(st.query_params[k]) for k in KNOBS
                                                       if k in st.query_params}
    if problem:
        st.session_state[NOTE] = problem.rstrip(".") + ". The lesson opens at its start."


def link_note() -> None:
    """Say once what was wrong with the link just opened."""
    note = st.session_state.pop(NOTE, None)
    if note:
        st.warning(esc_md(note), icon=":material/link_off:")


def clear_address() -> None:
    """Take a lesson's step out of the page's address (the run is no longer shown as a lesson, or another is)."""
    for key in ("trace", "saved", "step", *KNOBS):
        if key in st.query_params:
            del st.query_params[key]
    st.session_state.pop(APPLIED, None)


def keep_address(step: int, extra: Mapping[str, str] | None = None) -> str | None:
    """Write the shown trace and step into the page's address (so reloading or sharing it opens here), with `extra`
    (the beam-search knobs a step was changed to: studio.views.beam_knobs), and return the full link, or None when the
    trace has no address (a live run not saved, an upload)."""
    link = st.session_state.get(LINK)
    if not link:
        clear_address()
        return None
    params = {**link, "step": str(step), **(extra or {})}
    if {k: str(st.query_params[k]) for k in st.query_params} != params:
        st.query_params.from_dict(params)
    st.session_state[APPLIED] = {k: v for k, v in params.items() if k in ("trace", "saved", "step")}
    base = st.context.url or ""
    return f"{base.split('?')[0]}?{urlencode(params)}"


def copy_link(url: str | None) -> None:
    """The "Copy link" control: the address of this step in a code box, whose copy button puts it on the clipboard."""
    if url is None:
        st.caption("A link to a step needs a run kept in a file: save this run (below), then open it from the "
                   "Traces page or the replay list.")
        return
    st.caption("Copy link — this step of this run (opens offline, in any browser that reaches this app):")
    st.code(url, language=None)
