"""Encoders, engines and demo indexes are slow to make (seconds to minutes) and Streamlit reruns a page on every
click: they are made once per server process, shared by every page and session, and made ahead of time (in the
background) where the user would otherwise wait for them."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from gear.config import Settings
from gear.diagnosis.gold_marks import run_passages
from gear.trace import Trace
from studio.core import demos, paths
from studio.core.safe import esc_md, one_line

if TYPE_CHECKING:  # the engine and the encoder load torch: imported where one is made
    from gear.agent.engine import Engine
    from gear.data.questions import Question
    from gear.embed import Encoder
    from gear.store.base import SearchBackend

# Encoders by embedder name for indexes built with a non-standard encoder (tests register a fake one here).
ENCODER_FACTORIES: dict[str, Callable[[], Encoder]] = {}

_lock = threading.Lock()


# -- encoders and engines ----------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False)
def _encoder(name: str, bf16: bool, device: str) -> Encoder:
    if name in ENCODER_FACTORIES:
        return ENCODER_FACTORIES[name]()
    from gear.embed import Encoder

    return Encoder(name, bf16=bf16, device=device)


def encoder_for(name: str) -> Encoder:
    with _lock:
        settings = Settings()
        return _encoder(name, settings.embed_bf16, settings.device)


@st.cache_resource(show_spinner=False, max_entries=4)
def _engine(directory: str, mtime: float) -> Engine:
    from gear.agent.engine import Engine
    from gear.index import Manifest

    manifest = Manifest.read(Path(directory))
    return Engine.open(directory, Settings(), encoder=encoder_for(manifest.embedder))


def engine_for(directory: Path) -> Engine:
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


@st.cache_resource(show_spinner=False, max_entries=8)
def _warm_ppr(directory: str, mtime: float) -> threading.Thread:
    engine = _engine(directory, mtime)

    def build() -> None:
        # read from <index>/ppr/ when the index was built with it (seconds); else its parts are built here first, the
        # names encoded a few at a time (the encoder is shared: a question's encoding goes between two batches
        # instead of waiting minutes). A failure is said by the PPR run that meets it.
        settings = Settings()
        with contextlib.suppress(Exception):
            if not engine.has_ppr_index(settings):
                from gear.index.build import build_ppr_cache, in_turns

                build_ppr_cache(Path(directory), engine.backend, in_turns(engine.encoder.encode),
                                settings.ppr_synonym_threshold)
            engine.ppr_index(settings)

    thread = threading.Thread(target=build, name="gear-warm-ppr", daemon=True)
    thread.start()
    return thread


def _ppr_work(directory: Path) -> threading.Thread | None:
    """The background work making the index's PPR graph ready (started when the index was opened, or now)."""
    manifest = directory / "manifest.json"
    if not manifest.is_file():
        return None
    with _lock:
        mtime = manifest.stat().st_mtime
    return _warm_ppr(str(directory), mtime)


def wait_for_ppr_graph(directory: Path) -> None:
    """Wait (saying so) while PPR's entity graph is made ready in the background, rather than build it twice."""
    work = _ppr_work(directory)
    if work is not None and work.is_alive():
        with st.spinner("PPR's entity graph is being made ready (once per index)…"):
            work.join()


def ppr_graph_note(directory: Path) -> str:
    """What a comparison with PPR will wait for on this index: nothing once its entity graph is in memory."""
    work = _ppr_work(directory)
    if work is None or not work.is_alive():
        return ""
    return ("PPR's entity graph is being made ready in the background (since the index was opened); a comparison "
            "with PPR waits for it to finish.")


def warm_engine(directory: Path | None) -> threading.Thread | None:
    """Open the index and load the embedder in the background as soon as a page shows, so the first Ask does not
    wait for the model to load; the sidebar says when it is ready. PPR's entity graph is made ready beside it, so a
    comparison never waits for it."""
    if directory is None or not (directory / "manifest.json").is_file():
        return None
    with _lock:
        mtime = (directory / "manifest.json").stat().st_mtime
    thread = _warm(str(directory), mtime)
    _warm_ppr(str(directory), mtime)
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
@dataclass
class DemoBuild:
    """A demo index built in the background, one at a time, in the order asked for: its stage, how far it is, since
    when, and why it failed. Every page and session reads the same record."""

    name: str
    stage: str = "waiting for its turn"
    done: int = 0
    total: int = 1
    started: float | None = None  # time.monotonic() when its build began; None while it waits its turn
    error: str | None = None

    @property
    def percent(self) -> int:
        return min(100, int(100 * self.done / max(self.total, 1)))

    def line(self) -> str:
        """Where the build is, in words: "encoding passages: 512 / 1,890 · 1 min 05 s so far"."""
        if self.started is None:
            ahead = [b.name for b in _builds.values() if b.started is not None and b.error is None
                     and not demos.is_built(b.name)]
            return f"waiting for the {ahead[0]} demo's build to finish" if ahead else self.stage
        elapsed = int(time.monotonic() - self.started)
        so_far = f"{elapsed // 60} min {elapsed % 60:02d} s" if elapsed >= 60 else f"{elapsed} s"
        count = f": {self.done:,} / {self.total:,}" if self.total > 1 else ""
        return f"{self.stage}{count} · {so_far} so far"


_builds: dict[str, DemoBuild] = {}
_queue: list[str] = []
_builder: list[threading.Thread] = []  # the thread working through _queue, while it runs
_builds_lock = threading.Lock()


def queue_demo_build(name: str) -> DemoBuild:
    """The build of demo `name`: queued now unless it is queued, running or done (a failed one is tried again)."""
    with _builds_lock:
        build = _builds.get(name)
        if build is not None and build.error is None:
            return build
        build = _builds[name] = DemoBuild(name)
        _queue.append(name)
        if not any(t.is_alive() for t in _builder):
            _builder[:] = [threading.Thread(target=_build_queued, name="gear-demo-build", daemon=True)]
            _builder[0].start()
        return build


def _start_build(name: str) -> None:
    queue_demo_build(name)


def _build_queued() -> None:
    while True:
        with _builds_lock:
            if not _queue:
                return
            build = _builds[_queue.pop(0)]
        build.started = time.monotonic()

        def progress(stage: str, done: int, total: int, build: DemoBuild = build) -> None:
            build.stage, build.done, build.total = stage, done, total

        try:
            progress("loading the embedder", 0, 1)
            demos.ensure_demo_index(build.name, progress, encoder=encoder_for(Settings().embedder))
            build.stage = "built"
        except Exception as exc:  # shown in the page
            build.error = one_line(exc)


def automatic_builds() -> bool:
    """Whether missing demo indexes are built without being asked ($GEAR_STUDIO_BUILD_DEMOS=0: only on a click)."""
    return os.environ.get("GEAR_STUDIO_BUILD_DEMOS", "1") != "0"


@st.cache_resource(show_spinner=False)
def start_demo_builds() -> dict[str, DemoBuild]:
    """Queue every missing demo index built at start once per server process, the small one first, so the
    walk-through is ready in seconds; the others are built when a page opens them."""
    if automatic_builds():
        for name, d in demos.DEMOS.items():  # in their order: the walk-through first
            if d.at_start and d.available and not demos.is_built(name):
                queue_demo_build(name)
    return _builds


def demo_build(directory: Path, start: bool = False) -> DemoBuild | None:
    """The build of the demo index at `directory` while it is not ready — queued now when automatic builds are on
    or `start` asks for it; a build not queued yet (started=None, not in the queue) otherwise — or None when the
    index is ready to use or is no demo."""
    d = demos.demo_of_index(directory)
    if d is None or demos.is_built(d.name) or not d.available:
        return None
    with _builds_lock:
        build = _builds.get(d.name)
    if build is not None and build.error is None:
        return build
    if start or automatic_builds():
        return queue_demo_build(d.name)
    return build or DemoBuild(d.name, stage="not built yet")


def ensure_index(directory: Path) -> Path | None:
    """The index directory when it is ready; for a demo still being built, its progress (and None)."""
    build = demo_build(directory)
    if build is None:
        return directory
    build_progress(build.name)
    return None


@st.fragment(run_every=2)
def build_progress(name: str) -> None:
    """A demo build's progress, redrawn every 2 s; the whole page runs again once the index is built (so a question
    that waited for it runs then)."""
    if demos.is_built(name):
        st.rerun(scope="app")
    build = _builds.get(name)
    if build is None:
        st.info(f"The {name} demo index is not built yet (automatic builds are off here: GEAR_STUDIO_BUILD_DEMOS=0).",
                icon=":material/construction:")
        st.button("Build it now", key=f"build_demo_{name}", on_click=_start_build, args=(name,))
        return
    if build.error:
        st.error(f"Building the {name} demo index failed: {esc_md(build.error)}")
        st.button("Try again", key=f"build_demo_{name}", on_click=_start_build, args=(name,))
        return
    cost = demos.DEMOS[name].build_time if name in demos.DEMOS else ""
    st.info(f"**Building the {name} demo index** ({cost + '; ' if cost else ''}once per machine: it is kept in the "
            "data folder). This page goes on by itself when it is ready.", icon=":material/construction:")
    st.progress(build.percent, text=build.line())


# -- the QA set of an index --------------------------------------------------------------------------------------------
def qa_for_index(directory: Path) -> list[Question]:
    """The QA set that goes with an index: the demo's, or one named in the manifest's source."""

    path: Path | None = None
    d = demos.demo_of_index(directory)
    if d is not None and d.qa.is_file():
        path = d.qa
    else:
        from gear.index.manifest import Manifest
        from gear.saved import SavedFileError, inside
        from gear.store.base import StoreError

        try:
            source = Manifest.read(directory).source
        except StoreError:
            source = {}
        qa = source.get("qa")
        try:  # a path the manifest names: followed only inside the project's assets and the data folder
            named = inside(paths.ROOT / qa, paths.homes(), "the data folder and the bundled files") \
                if isinstance(qa, str) and qa else None
        except SavedFileError:
            named = None
        if named is not None and named.is_file():
            path = named
        elif (directory / "qa.json").is_file():
            path = directory / "qa.json"
    if path is None:
        return []
    from gear.data.reading import InputError

    try:
        return _load_qa(str(path), path.stat().st_mtime)
    except (InputError, OSError) as exc:  # the page goes on without example questions, and says why
        st.caption(f"No example questions: {esc_md(one_line(exc))}")
        return []


@st.cache_data(show_spinner=False)
def _load_qa(path: str, mtime: float) -> list[Question]:
    from gear.data.questions import load_qa

    questions, _ = load_qa(path)
    return questions


def same_index(trace: Trace, backend: SearchBackend) -> bool:
    """Whether the run was made on this index: the passages it showed have the same ids here (a run opened with
    another index selected would mark the wrong passages)."""
    views = run_passages(trace)[:8]
    if not views:
        return True
    try:
        here = {p.id: (p.title, p.text) for p in backend.passages([v.id for v in views if v.id < backend.n_passages])}
    except Exception:  # an index that cannot be read now
        return False
    return all(here.get(v.id) == (v.title, v.text) for v in views)


def index_label_of(trace: Trace, selected: str | None = None) -> str | None:
    """The sidebar label of the built index the run was made on (its passages have the same ids there), the selected
    one first; None when none is: a run opened from the Traces page is marked and searched on its own index."""
    found = demos.list_indexes()
    for label in sorted(found, key=lambda lbl: lbl != selected):
        directory = found[label]
        if not (directory / "manifest.json").is_file():
            continue
        try:
            if same_index(trace, engine_for(directory).backend):
                return label
        except Exception:  # an index that cannot be opened: not this run's
            continue
    return None
