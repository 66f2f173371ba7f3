"""Encoders, engines and demo indexes are slow to make (seconds to minutes) and Streamlit reruns a page on every
click: they are made once per server process, shared by every page and session, and made ahead of time (in the
background) where the user would otherwise wait for them."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from gear.config import Settings
from studio import demo
from studio.safe import one_line

# Encoders by embedder name for indexes built with a non-standard encoder (tests register a fake one here).
ENCODER_FACTORIES: dict[str, Callable[[], Any]] = {}

_lock = threading.Lock()


# -- encoders and engines ----------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _encoder(name: str, bf16: bool, device: str) -> Any:
    if name in ENCODER_FACTORIES:
        return ENCODER_FACTORIES[name]()
    from gear.embed import Encoder

    return Encoder(name, bf16=bf16, device=device)


def encoder_for(name: str) -> Any:
    with _lock:
        settings = Settings()
        return _encoder(name, settings.embed_bf16, settings.device)


@st.cache_resource(show_spinner=False, max_entries=4)
def _engine(directory: str, mtime: float) -> Any:
    from gear.agent.engine import Engine
    from gear.index import Manifest

    manifest = Manifest.read(Path(directory))
    return Engine.open(directory, Settings(), encoder=encoder_for(manifest.embedder))


def engine_for(directory: Path) -> Any:
    """One Engine per index directory per server process (rebuilt when the manifest changes)."""
    manifest = directory / "manifest.json"
    with _lock:
        mtime = manifest.stat().st_mtime if manifest.exists() else 0.0
    return _engine(str(directory), mtime)


@st.cache_resource(show_spinner=False, max_entries=8)
def _warm(directory: str, mtime: float) -> threading.Thread:
    engine = _engine(directory, mtime)
    thread = threading.Thread(target=lambda: engine.encode_query("warm up the encoder"), name="gear-warm",
                              daemon=True)
    thread.start()
    return thread


def warm_engine(directory: Path | None) -> threading.Thread | None:
    """Open the index and load the embedder in the background as soon as a page shows, so the first Ask does not
    wait for the model to load; the sidebar says when it is ready."""
    if directory is None or not (directory / "manifest.json").is_file():
        return None
    with _lock:
        mtime = (directory / "manifest.json").stat().st_mtime
    thread = _warm(str(directory), mtime)
    with st.sidebar:
        if thread.is_alive():
            _engine_status(thread)
        else:  # no polling once ready: a fragment's rerun every 2 s would also cancel a download in progress
            st.caption(":material/check_circle: index and embedder ready")
    return thread


def engine_ready(directory: Path) -> bool:
    """Whether the index's engine (index and embedder) is loaded, without waiting for it."""
    manifest = directory / "manifest.json"
    if not manifest.is_file():
        return False
    with _lock:
        mtime = manifest.stat().st_mtime
    return not _warm(str(directory), mtime).is_alive()


@st.fragment(run_every=2)
def _engine_status(thread: threading.Thread) -> None:
    if thread.is_alive():
        st.caption(":material/hourglass_top: loading the index and embedder (first use)…")
    else:
        st.caption(":material/check_circle: index and embedder ready")


# -- demo indexes, built in the background -----------------------------------------------------------------------------
_builds: dict[str, dict[str, Any]] = {}


def _build_demos() -> None:
    for name in ("walkthrough", "musique"):  # the small one first: it is ready in seconds
        d = demo.DEMOS[name]
        if not d.available or demo.is_built(name):
            continue
        state = _builds.setdefault(name, {"stage": "waiting", "done": 0, "total": 1, "error": None})

        def progress(stage: str, done: int, total: int, state: dict[str, Any] = state) -> None:
            state.update(stage=stage, done=done, total=total)

        try:
            demo.ensure_demo_index(name, progress)
            state["stage"] = "built"
        except Exception as exc:  # shown in the page
            state["error"] = one_line(exc)


@st.cache_resource(show_spinner=False)
def start_demo_builds() -> dict[str, dict[str, Any]]:
    """Build missing demo indexes once per server process, in the background ($GEAR_STUDIO_BUILD_DEMOS=0: off)."""
    if os.environ.get("GEAR_STUDIO_BUILD_DEMOS", "1") != "0" and any(
            d.available and not demo.is_built(n) for n, d in demo.DEMOS.items()):
        threading.Thread(target=_build_demos, name="gear-demo-build", daemon=True).start()
    return _builds


def ensure_index(directory: Path) -> Path | None:
    """The index directory when it is ready; for a demo still building, a progress bar (and None)."""
    d = demo.demo_of_index(directory)
    if d is None or demo.is_built(d.name):
        return directory
    builds = start_demo_builds()
    state = builds.get(d.name)
    if state is None and os.environ.get("GEAR_STUDIO_BUILD_DEMOS", "1") == "0":
        with st.status(f"Building the {d.name} demo index…", expanded=True) as box:
            bar = st.progress(0, text="starting")

            def progress(stage: str, done: int, total: int) -> None:
                bar.progress(min(100, int(100 * done / max(total, 1))), text=f"{stage}: {done:,} / {total:,}")

            out = demo.ensure_demo_index(d.name, progress, encoder=encoder_for(Settings().embedder))
            box.update(label=f"Built the {d.name} demo index", state="complete", expanded=False)
        return out
    _build_progress(d.name)
    return None


@st.fragment(run_every=2)
def _build_progress(name: str) -> None:
    if demo.is_built(name):
        st.rerun(scope="app")
    state = _builds.get(name) or {"stage": "waiting for the walk-through demo", "done": 0, "total": 1}
    if state.get("error"):
        st.error(f"Building the {name} demo index failed: {state['error']}")
        return
    pct = min(100, int(100 * state["done"] / max(state["total"], 1)))
    st.info(f"The {name} demo index is being built in the background (first start only; the MuSiQue demo takes a "
            "few minutes on a CPU). This page continues when it is ready.")
    st.progress(pct, text=f"{state['stage']}: {state['done']:,} / {state['total']:,}")


# -- the QA set of an index --------------------------------------------------------------------------------------------
def qa_for_index(directory: Path) -> list[Any]:
    """The QA set that goes with an index: the demo's, or one named in the manifest's source."""

    path: Path | None = None
    d = demo.demo_of_index(directory)
    if d is not None and d.qa.is_file():
        path = d.qa
    else:
        try:
            source = json.loads((directory / "manifest.json").read_text(encoding="utf-8")).get("source") or {}
        except (OSError, ValueError):
            source = {}
        qa = source.get("qa")
        if qa and (demo.ROOT / qa).is_file():
            path = demo.ROOT / qa
        elif (directory / "qa.json").is_file():
            path = directory / "qa.json"
    if path is None:
        return []
    return _load_qa(str(path), path.stat().st_mtime)


@st.cache_data(show_spinner=False)
def _load_qa(path: str, mtime: float) -> list[Any]:
    from gear.data.corpus import load_qa

    questions, _ = load_qa(path)
    return questions
