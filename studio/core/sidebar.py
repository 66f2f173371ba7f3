"""Every page works on the same index with the same method, LLM and knobs: one sidebar, shared by all pages, keeps
those choices in one place (and in session state), so switching pages never loses or contradicts them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from gear import methods
from gear.config import Settings
from studio.core import demos, paths
from studio.core.keys import INDEX_SELECTED, RAN_HERE, TRACE
from studio.core.session import start
from studio.core.widgets import answer_origins

PRESETS: dict[str, tuple[str, str]] = methods.presets()  # label -> (retriever, method): Compare and Evaluate
METHOD_CHOICES = {m.name: m.choice for m in methods.METHODS}  # the Ask page's method list
DEFAULT_METHOD = "gear"
LLM_KINDS = {"auto": "auto: recorded, else live", "replay": "replay: recorded only",
             "local": "local: embedded model", "openai": "openai: an endpoint"}
LLM_HELP = ("auto: answers recorded before are served at once, anything else goes to the live model (the embedded "
            "Qwen2.5-Coder-1.5B, or the endpoint the server was started with). replay: recorded answers only (a new "
            "question is an error). local: always the embedded model. openai: an OpenAI-compatible endpoint you name.")
PROMPTS = {"": "default (paper)", "paper": "paper: the appendix prompts verbatim",
           "small": "small: JSON, grounded verdicts, no repeated query"}
READ_ORDERS = {"rank": "rank: by retrieval score", "cache": "cache: what the last read showed first"}
READ_ORDER_HELP = ("The order of the passages in a GeAR read prompt, which the paper leaves open. rank: by retrieval "
                   "score (the bundled recordings were made so). cache: the passages the run's previous read showed "
                   "come first, so the model's server skips what it has already read — on 20 dev50 questions 37 % "
                   "fewer tokens read, recall no lower, other answers than the recordings (docs/results.md).")


# -- the index picker --------------------------------------------------------------------------------------------------
def unavailable_demos() -> list[str]:
    return [f"{name}: {demos.status(name)}" for name, d in demos.DEMOS.items() if not d.available
            and not demos.is_built(name)]


def choose_index(key: str = "index_choice", container: Any = None) -> Path | None:
    """The index picker. The choice lives in session_state[INDEX_SELECTED] (not in the widget's own state, which
    Streamlit drops when the page changes), so every page opens on the same index."""
    box = container or st.sidebar
    options = demos.list_indexes()
    if not options:
        box.warning("No index yet: build one on the Index page.")
        return None
    labels = list(options)
    selected = st.session_state.get(INDEX_SELECTED)
    if selected not in labels:
        wanted = paths.wanted_index()
        preferred = [lbl for lbl in labels if wanted and lbl.split(" ")[0] == wanted] + \
                    [lbl for lbl in labels if lbl.startswith("walkthrough")] + \
                    [lbl for lbl in labels if not lbl.endswith("(demo)")] + labels
        selected = preferred[0]
    label = box.selectbox("Index", labels, index=labels.index(selected), key=f"{key}:{selected}",
                          help="Demo indexes are built from assets/ on first use; others live in data/indexes/.")
    if label != selected:
        st.session_state[INDEX_SELECTED] = label
        st.rerun()
    st.session_state[INDEX_SELECTED] = label
    for line in unavailable_demos():
        box.caption(line)
    return options[label]


# -- method, LLM and knobs ---------------------------------------------------------------------------------------------
def user_llm_cache() -> Path:
    """Where the live model's new answers are recorded (never into the bundled assets/llm_cache): the data folder's,
    the one answer store `gear ask`, `gear eval` and the library use too (gear.llm.default_user_cache)."""
    from gear.llm import default_user_cache

    return default_user_cache()


def llm_status(kind: str, cache_dir: Path | None) -> str:
    if kind == "replay":
        d = cache_dir or paths.LLM_CACHE
        n = demos.replay_entries(d)
        return f"replay: {n} recorded answers" + ("" if n else f" (none in {_rel(d)})")
    if kind == "auto":
        bundled, mine = demos.replay_entries(paths.LLM_CACHE), demos.replay_entries(user_llm_cache())
        return (f"{bundled} recorded answers bundled, {mine} recorded here; anything else is asked live — "
                + llm_status("local", None))
    if kind == "local":
        from gear.llm.llama_server import llama_server_available

        runtime = llama_server_available()
        try:
            from gear.llm.model_files import find_parts

            find_parts()
            parts = True
        except Exception:
            parts = False
        if runtime and parts:
            return "local model installed (Qwen2.5-Coder-1.5B, llama.cpp's llama-server)"
        return "local model not installed (" + ("no model files" if runtime else "no llama-server") + \
            "; run scripts/install_local_llm.sh)"
    return "OpenAI-compatible endpoint (key from OPENAI_API_KEY / GEAR_OPENAI_API_KEY, never shown)"


def llm_words(settings: Settings) -> str:
    """The LLM the settings name, in words a person reads ("the embedded model …", "gpt-4o-mini at …")."""
    endpoint = settings.llm_base_url or "api.openai.com"
    live = (f"{settings.llm_model or 'gpt-4o-mini'} at {endpoint}" if settings.llm_base_url or settings.llm_api_key
            else "the embedded model (Qwen2.5-Coder-1.5B)")
    return {"auto": f"{live}, reusing answers recorded before", "local": "the embedded model (Qwen2.5-Coder-1.5B)",
            "openai": f"{settings.llm_model or 'gpt-4o-mini'} at {endpoint}",
            "replay": "recorded answers only (a passage never recorded fails)",
            "record": f"{live}, recording every answer"}.get(settings.llm, settings.llm)


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(paths.ROOT))
    except ValueError:
        return str(p)


ORIGINS_SLOT = "_answer_origins_slot"  # this run's sidebar placeholder for "This session's last run"


def show_answer_origins(trace: Any) -> None:
    """"This session's last run — LLM answers: …" in the sidebar, for a run made in this session only (a fresh
    session shows a recorded example, whose answers came from the model when it was recorded, not now). The sidebar
    is drawn before a live run starts, so the Ask page calls this again when the run ends."""
    slot = st.session_state.get(ORIGINS_SLOT)
    if slot is None:
        return
    origins = answer_origins(trace) if st.session_state.get(RAN_HERE) else ""
    if origins:
        slot.caption(f"This session's last run — LLM answers: {origins}")
    else:
        slot.empty()


K_LABEL = "k of GeAR and IRCoT (passages per retrieval)"


def sidebar_settings(show_method: bool = True, show_knobs: bool = True) -> Settings:
    """Method, LLM and knobs from the sidebar, as Settings (paper defaults, App. B). The k slider is agent_k, the
    passages a multi-step method retrieves at each step: a single-step method retrieves gear.methods.DEPTH on every
    page."""
    sb = st.sidebar
    base = Settings()
    changes: dict[str, Any] = {}
    if show_method:
        sb.subheader("Retrieval")
        start("retriever", "hybrid")
        changes["retriever"] = sb.selectbox("Base retriever", ["bm25", "dense", "hybrid"], key="retriever",
                                            persist_state="session")
        start("method", DEFAULT_METHOD)
        changes["method"] = sb.selectbox("Method", list(METHOD_CHOICES), key="method", persist_state="session",
                                         format_func=METHOD_CHOICES.__getitem__)
    sb.subheader("LLM")
    start("llm_kind", base.llm if base.llm in LLM_KINDS else "auto")
    kind = sb.selectbox("LLM", list(LLM_KINDS), key="llm_kind", persist_state="session",
                        format_func=LLM_KINDS.__getitem__, help=LLM_HELP)
    changes["llm"] = kind
    cache = base.llm_cache_dir or paths.LLM_CACHE
    if kind == "replay":
        changes["llm_cache_dir"] = cache
    # "auto" keeps the configured cache, else None: the default answer store, which the CLI reads and records too
    elif kind == "openai":
        start("llm_base_url", base.llm_base_url or "")
        changes["llm_base_url"] = sb.text_input("Base URL", key="llm_base_url", persist_state="session") or None
        start("llm_model", base.llm_model or "gpt-4o-mini")
        changes["llm_model"] = sb.text_input("Model", key="llm_model", persist_state="session") or None
    sb.caption(llm_status(kind, cache if kind == "replay" else None))
    start("prompts", base.prompts or "")
    changes["prompts"] = sb.selectbox("Prompt profile", list(PROMPTS), key="prompts", persist_state="session",
                                      format_func=PROMPTS.__getitem__) or None
    start("read_order", base.read_order)
    changes["read_order"] = sb.selectbox("Read order", list(READ_ORDERS), key="read_order", persist_state="session",
                                         format_func=READ_ORDERS.__getitem__, help=READ_ORDER_HELP)
    st.session_state[ORIGINS_SLOT] = sb.empty()
    show_answer_origins(st.session_state.get(TRACE))
    if not show_knobs:
        return _finish_settings(base, changes, kind)
    sb.subheader("Knobs")
    for key, value in (("k", base.agent_k), ("beam_width", base.beam_width), ("beam_length", base.beam_length),
                       ("gamma", 0.0), ("neighbours", base.max_neighbours), ("max_iterations", base.max_iterations)):
        start(key, value)
    changes["agent_k"] = sb.slider(K_LABEL, 1, 30, key="k", persist_state="session",
                                   help=f"SyncGE, NaiveGE, PPR and the base retrievers retrieve {methods.DEPTH} "
                                        "passages on every page (the largest recall cut-off shown), so a question's "
                                        "R@5 is the same number everywhere.")
    changes["beam_width"] = sb.slider("beam width b", 1, 20, key="beam_width", persist_state="session")
    changes["beam_length"] = sb.slider("beam length l", 1, 4, key="beam_length", persist_state="session")
    gamma_default = 2.0 * changes["beam_width"]
    gamma = sb.number_input("γ (diversity; 0 = 2b as in the paper)", 0.0, 200.0, step=1.0, key="gamma",
                            persist_state="session")
    changes["gamma"] = gamma if gamma > 0 else None
    sb.caption(f"γ in use: {gamma if gamma > 0 else gamma_default:g} — the n-th candidate of a beam is weighted by "
               "exp(−min(n, γ)/γ)")
    changes["max_neighbours"] = sb.slider("neighbours per beam", 5, 200, key="neighbours", persist_state="session")
    changes["max_iterations"] = sb.slider("max iterations", 1, 6, key="max_iterations", persist_state="session")
    chosen = methods.find(changes.get("method", st.session_state.get("method")) or "")
    changes.update(peer_knobs(base, open_=chosen is not None and chosen.peer))
    return _finish_settings(base, changes, kind)


def peer_knobs(base: Settings, open_: bool = False) -> dict[str, Any]:
    """The knobs of the peers (docs/peers.md): PPR's damping and recognition filter, IRCoT's steps and retriever;
    folded away unless a peer is the chosen method."""
    box = st.sidebar.expander("PPR and IRCoT knobs", expanded=open_)
    for key in ("ppr_damping", "ppr_filter", "ircot_max_steps", "ircot_retriever"):
        start(key, getattr(base, key))
    return {
        "ppr_damping": box.slider("PPR damping d", 0.05, 0.95, step=0.05, key="ppr_damping", persist_state="session",
                                  help="probability of following an edge (1 − d: restart at the seeds)"),
        "ppr_filter": box.toggle("PPR recognition filter (LLM)", key="ppr_filter", persist_state="session",
                                 help="the LLM keeps the matched facts that help (HippoRAG 2's recognition memory)"),
        "ircot_max_steps": box.slider("IRCoT retrievals at most", 1, 8, key="ircot_max_steps", persist_state="session"),
        "ircot_retriever": box.selectbox("IRCoT retriever", ["base", "ppr"], key="ircot_retriever",
                                         persist_state="session",
                                         format_func={"base": "the base retriever", "ppr": "PPR"}.__getitem__),
    }


def _finish_settings(base: Settings, changes: dict[str, Any], kind: str) -> Settings:
    settings = base.with_(**{name: value for name, value in changes.items() if value is not None})  # empty: base's
    if changes.get("prompts") is None:  # the profile "default" clears a .env choice
        settings = settings.with_(prompts=None)
    if kind in ("local", "replay"):
        settings = settings.with_(llm_model=None, llm_base_url=None)
    # "auto" keeps the server's own endpoint (e.g. `gear serve-llm` named in GEAR_LLM_BASE_URL) for what is not recorded
    if kind == "openai" and settings.llm_base_url != base.llm_base_url:
        # a visitor's own URL never receives the server's API key
        settings = settings.with_(llm_api_key=None)
    return settings


def method_settings(base: Settings, label: str) -> Settings:
    """The sidebar's settings with one of PRESETS' (retriever, method) pairs (Compare and Evaluate)."""
    retriever, method = PRESETS[label]
    return base.with_(retriever=retriever, method=method)
