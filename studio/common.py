"""Shared Streamlit pieces: page guard, escaping, cached engines, the sidebar (index, method, LLM, knobs)."""

from __future__ import annotations

import functools
import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from gear.config import Settings
from studio import demo

# Encoders by embedder name for indexes built with a non-standard encoder (tests register a fake one here).
ENCODER_FACTORIES: dict[str, Callable[[], Any]] = {}

METHODS: dict[str, tuple[str, str]] = {  # label -> (retriever, expansion)
    "BM25": ("bm25", "none"),
    "Dense": ("dense", "none"),
    "Hybrid": ("hybrid", "none"),
    "Hybrid + NaiveGE": ("hybrid", "naive"),
    "Hybrid + SyncGE": ("hybrid", "sync"),
    "GeAR (hybrid)": ("hybrid", "gear"),
}
EXPANSIONS = {"none": "none (base retriever only)", "naive": "NaiveGE", "sync": "SyncGE", "gear": "GeAR (multi-step)"}
LLM_KINDS = {"replay": "replay (recorded answers)", "local": "local model", "openai": "OpenAI-compatible"}

_CSS = """
<style>
  .block-container { padding-top: 2.2rem; max-width: 1400px; }
  [data-testid="stDataFrame"] { font-size: 15px; }
  .gear-note { color: #495057; font-size: 0.95rem; }
</style>
"""

_CONTROL = ("RerunException", "StopException", "RerunData")


_INERT = re.compile(r"[&<>\"'\\`*_{}\[\]()#+\-!|~:$]")


def esc_md(text: object) -> str:
    """Untrusted text made inert for st.markdown: HTML-escaped, and markdown/Streamlit syntax turned into entities
    (so a passage cannot add links, images, :material: icons, colours or maths)."""
    # one pass, so the entities written for one character are never escaped again by the rule for another
    return _INERT.sub(lambda m: f"&#{ord(m.group())};", str(text))


def md(text: object) -> None:
    """Write untrusted text as a paragraph (escaped)."""
    st.markdown(esc_md(text))


def guarded(fn: Callable[[], None]) -> Callable[[], None]:
    """Run a page body; any error becomes one st.error line, never a traceback."""

    @functools.wraps(fn)
    def wrapper() -> None:
        try:
            fn()
        except Exception as exc:
            if type(exc).__name__ in _CONTROL:
                raise
            st.error(f"{type(exc).__name__}: {one_line(exc)}")

    return wrapper


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:400]


def setup(title: str, icon: str) -> None:
    """Common page header; call once at the top of a page (st.set_page_config is done by app.py)."""
    st.markdown(_CSS, unsafe_allow_html=True)
    st.title(f"{icon} {title}")


# -- paths ------------------------------------------------------------------------------------------------------------
def traces_dir() -> Path:
    return demo.data_dir() / "traces"


def evals_dir() -> Path:
    return demo.data_dir() / "evals"


def list_indexes() -> dict[str, Path]:
    """label -> directory: the demos (built or buildable) and every index under data/indexes/."""
    found: dict[str, Path] = {}
    for name, d in demo.DEMOS.items():
        if d.available or demo.is_built(name):
            found[f"{name} (demo)"] = demo.index_dir(name)
    root = demo.indexes_dir()
    if root.is_dir():
        for sub in sorted(root.iterdir()):
            if sub.name in demo.DEMOS or sub.name.startswith("."):
                continue
            if (sub / "manifest.json").is_file():
                found[sub.name] = sub
    return found


def unavailable_demos() -> list[str]:
    return [f"{name}: {demo.status(name)}" for name, d in demo.DEMOS.items() if not d.available
            and not demo.is_built(name)]


# -- heavy objects -----------------------------------------------------------------------------------------------------
_lock = threading.Lock()


@st.cache_resource(show_spinner=False)
def _encoder(name: str, bf16: bool) -> Any:
    if name in ENCODER_FACTORIES:
        return ENCODER_FACTORIES[name]()
    from gear.embed import Encoder

    return Encoder(name, bf16=bf16)


def encoder_for(name: str) -> Any:
    with _lock:
        return _encoder(name, Settings().embed_bf16)


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
        _engine_status(thread)
    return thread


@st.fragment(run_every=2)
def _engine_status(thread: threading.Thread) -> None:
    if thread.is_alive():
        st.caption("⏳ loading the index and embedder (first use)…")
    else:
        st.caption("✅ index and embedder ready")


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


# -- the sidebar -------------------------------------------------------------------------------------------------------
def llm_status(kind: str, cache_dir: Path | None) -> str:
    if kind == "replay":
        d = cache_dir or demo.LLM_CACHE
        n = demo.replay_entries(d)
        return f"replay: {n} recorded answers" + ("" if n else f" (none in {_rel(d)})")
    if kind == "local":
        from gear.llm.local import llama_cpp_available

        runtime = llama_cpp_available()
        try:
            from gear.llm.model_files import find_parts

            find_parts()
            parts = True
        except Exception:
            parts = False
        if runtime and parts:
            return "local model installed (Qwen2.5-Coder-1.5B, llama.cpp)"
        return "local model not installed (" + ("no model files" if runtime else "no llama-cpp-python") + \
            "; run scripts/install_local_llm.sh)"
    return "OpenAI-compatible endpoint (key from OPENAI_API_KEY / GEAR_OPENAI_API_KEY, never shown)"


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(demo.ROOT))
    except ValueError:
        return str(p)


def choose_index(key: str = "index_choice", container: Any = None) -> Path | None:
    """The index picker. The choice lives in session_state["index_selected"] (not in the widget's own state, which
    Streamlit drops when the page changes), so every page opens on the same index."""
    box = container or st.sidebar
    options = list_indexes()
    if not options:
        box.warning("No index yet: build one on the Index page.")
        return None
    labels = list(options)
    selected = st.session_state.get("index_selected")
    if selected not in labels:
        wanted = os.environ.get("GEAR_STUDIO_INDEX", "")
        preferred = [lbl for lbl in labels if wanted and lbl.split(" ")[0] == wanted] + \
                    [lbl for lbl in labels if lbl.startswith("walkthrough")] + \
                    [lbl for lbl in labels if not lbl.endswith("(demo)")] + labels
        selected = preferred[0]
    label = box.selectbox("Index", labels, index=labels.index(selected), key=f"{key}:{selected}",
                          help="Demo indexes are built from assets/ on first use; others live in data/indexes/.")
    if label != selected:
        st.session_state["index_selected"] = label
        st.rerun()
    st.session_state["index_selected"] = label
    for line in unavailable_demos():
        box.caption(line)
    return options[label]


def sidebar_settings(show_method: bool = True, show_knobs: bool = True) -> Settings:
    """Method, LLM and knobs from the sidebar, as Settings (paper defaults, App. B)."""
    sb = st.sidebar
    base = Settings()
    changes: dict[str, Any] = {}
    if show_method:
        sb.subheader("Method")
        changes["retriever"] = sb.selectbox("Base retriever", ["bm25", "dense", "hybrid"], index=2, key="retriever")
        changes["expand"] = sb.selectbox("Expansion", list(EXPANSIONS), index=3, key="expand",
                                         format_func=EXPANSIONS.get)
    sb.subheader("LLM")
    default_kind = base.llm if base.llm in LLM_KINDS else "replay"
    if "llm_kind" not in st.session_state:
        st.session_state["llm_kind"] = "replay" if default_kind == "local" and demo.replay_entries(
            base.llm_cache_dir or demo.LLM_CACHE) else default_kind
    kind = sb.selectbox("LLM", list(LLM_KINDS), key="llm_kind", format_func=LLM_KINDS.get)
    changes["llm"] = kind
    cache = base.llm_cache_dir or demo.LLM_CACHE
    if kind == "replay":
        changes["llm_cache_dir"] = cache
    elif kind == "openai":
        changes["llm_base_url"] = sb.text_input("Base URL", value=base.llm_base_url or "", key="llm_base_url") or None
        changes["llm_model"] = sb.text_input("Model", value=base.llm_model or "gpt-4o-mini", key="llm_model") or None
    sb.caption(llm_status(kind, cache if kind == "replay" else None))
    if not show_knobs:
        return _finish_settings(base, changes, kind)
    sb.subheader("Knobs")
    changes["agent_k"] = sb.slider("k (passages per retrieval)", 1, 30, base.agent_k, key="k")
    changes["beam_width"] = sb.slider("beam width b", 1, 20, base.beam_width, key="beam_width")
    changes["beam_length"] = sb.slider("beam length l", 1, 4, base.beam_length, key="beam_length")
    gamma_default = 2.0 * changes["beam_width"]
    gamma = sb.number_input("γ (diversity; 0 = 2b as in the paper)", 0.0, 200.0, 0.0, step=1.0, key="gamma")
    changes["gamma"] = gamma if gamma > 0 else None
    sb.caption(f"γ in use: {gamma if gamma > 0 else gamma_default:g} — the n-th candidate of a beam is weighted by "
               "exp(−min(n, γ)/γ)")
    changes["max_neighbours"] = sb.slider("neighbours per beam", 5, 200, base.max_neighbours, key="neighbours")
    changes["max_iterations"] = sb.slider("max iterations", 1, 6, base.max_iterations, key="max_iterations")
    return _finish_settings(base, changes, kind)


def _finish_settings(base: Settings, changes: dict[str, Any], kind: str) -> Settings:
    settings = base.with_(**changes)
    if kind != "openai":
        settings = settings.model_copy(update={"llm_model": None, "llm_base_url": None})
    return settings


def method_settings(base: Settings, label: str) -> Settings:
    retriever, expansion = METHODS[label]
    return base.with_(retriever=retriever, expand=expansion)


def gold_for(engine: Any, question: Any) -> list[int]:
    return engine.gold_ids(question.gold) if question is not None else []
