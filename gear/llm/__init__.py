"""LLM access for GeAR: one protocol, one live path (the OpenAI-compatible client), and cache replay.

The embedded model is llama.cpp's own llama-server, which gear starts on first use (gear.llm.llama_server), reached
through the same client as any other endpoint (gear.llm.embedded). `make_llm` is the only place that turns
configuration into a backend, so the engine never branches on which model it talks to. Any backend can be wrapped
with a record/replay cache to make runs reproducible and demos key-free; the default kind "auto" serves recorded
answers and calls the live model for the rest. `llm_from_settings` adds the
process-wide memo (gear.llm.memo) on top, so an identical deterministic call is never paid for twice.

Its modules: base (the LLM protocol), openai_client and openai_errors (the OpenAI-compatible client and its
failures in one line), embedded, llama_server, server_profile and model_files (the embedded model: its server, how
it runs here, its file), replay and memo (recordings and the process's memo), queue (turns at a model that serves one
call at a time) and speed (how fast a model reads and writes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gear.files import data_dir
from gear.llm.base import LLM, LLMError, LLMResult, Message, TextListener, answered_at_once, estimate_tokens
from gear.llm.memo import MemoLLM
from gear.llm.queue import current_listener, listening
from gear.llm.replay import CachedLLM, cache_key

if TYPE_CHECKING:
    from gear.config import LLMGroup

__all__ = [
    "KINDS",
    "LLM",
    "CachedLLM",
    "LLMError",
    "LLMResult",
    "MemoLLM",
    "Message",
    "TextListener",
    "answer_stores",
    "answered_at_once",
    "cache_of",
    "current_listener",
    "default_user_cache",
    "estimate_tokens",
    "fresh_llm",
    "legacy_user_cache",
    "listening",
    "llm_from_settings",
    "llm_key",
    "make_llm",
    "recorded_llm",
    "request_key",
]

KINDS = ("auto", "local", "openai", "replay", "record")


def default_user_cache() -> Path:
    """Where the "auto" LLM records new answers when no cache directory is configured: the data folder's
    (gear.files.data_dir), the same for the app, the CLI and the library — two answer stores let one question give
    two runs (the app recorded into data/, the CLI into ~/.cache, and neither saw the other's answer)."""
    return data_dir() / "llm_cache"


def legacy_user_cache() -> Path:
    """Where `gear ask/eval` recorded before the answer store was one: still read (never written), so nothing
    recorded there is lost."""
    return Path.home() / ".cache" / "gear" / "llm"


def answer_stores(group: LLMGroup) -> list[Path]:
    """The folders of recorded answers the configured LLM reads, the one it records into first (what make_llm wires;
    a page watching for new recordings watches these)."""
    written, read = _stores(group)
    return [written, *read] if written is not None else list(read)


def _stores(group: LLMGroup) -> tuple[Path | None, tuple[Path, ...]]:
    """The folder the LLM records into (None: it records nothing) and the ones it only reads: "replay" reads the
    cache folder; "record" records there; "auto" records into the cache folder (default: default_user_cache(), then
    also reading the older user cache legacy_user_cache()) and reads the bundled recordings; a live kind records only
    into a cache folder named on purpose."""
    cache = Path(group.llm_cache_dir) if group.llm_cache_dir else None
    if group.llm == "replay":
        return None, (cache,) if cache else ()
    if group.llm == "auto":
        older = (legacy_user_cache(),) if cache is None else ()  # a cache named on purpose is read alone
        bundled = (Path(group.llm_bundled_cache),) if group.llm_bundled_cache else ()
        return cache or default_user_cache(), (*older, *bundled)
    return cache, ()


def make_llm(group: LLMGroup) -> LLM:
    """Build the LLM a settings group names (Settings is one: it is passed whole).

    llm "local": the embedded model (llama-server, started on first use with the group's threads, slots, context per
    slot, cache reuse, GPU layers, batches and flash attention; None: chosen from the build and the cores,
    gear.llm.server_profile); "openai": an OpenAI-compatible endpoint; "replay": answers from the cache folder only
    (error on a miss; the model defaults to the recorded one); "record": call a live model (OpenAI-compatible when a
    base URL or an API key is set, else local) and write every answer to the cache folder; "auto": answers recorded
    (_stores: the user's answer store, or the bundled recordings) at once, the live model (chosen as for "record")
    for the rest, recorded into the answer store, never into the others. For "local"/"openai", a cache folder wraps the
    model in a cache that serves hits and records misses. An OpenAI-compatible endpoint gets the group's timeout per
    answer, the client's retries, and at most its max_concurrent calls at once from this process; like the embedded
    model, one client (and queue) is shared by every caller in the process with the same endpoint, model, key and
    limits.
    """
    kind = group.llm
    if kind not in KINDS:
        raise LLMError(f"unknown LLM kind {kind!r}: use one of {', '.join(KINDS)}")
    written, read = _stores(group)
    if kind in ("replay", "record") and group.llm_cache_dir is None:
        raise LLMError(f"LLM kind {kind!r} needs a cache directory: set GEAR_LLM_CACHE_DIR")
    if kind == "replay":
        return CachedLLM.replay_only(read[0], model=group.llm_model)
    api_key = group.llm_api_key.get_secret_value() if group.llm_api_key else None
    live_kind = kind
    if kind in ("record", "auto"):
        live_kind = "openai" if (group.llm_base_url or api_key) else "local"
    inner: LLM
    if live_kind == "openai":
        from gear.llm.openai_client import shared_openai_llm

        inner = shared_openai_llm(group.llm_model or "gpt-4o-mini", base_url=group.llm_base_url, api_key=api_key,
                                  timeout=group.llm_timeout, max_retries=group.llm_max_retries,
                                  max_concurrent=group.llm_max_concurrent)
    else:
        from gear.llm.embedded import shared_embedded_llm

        model = group.llm_model
        inner = shared_embedded_llm(model_path=Path(model) if model and model.endswith(".gguf") else None,
                                    threads=group.llm_threads, ctx_per_slot=group.llm_ctx_per_slot,
                                    parallel=group.llm_parallel, cache_reuse=group.llm_cache_reuse,
                                    gpu_layers=group.llm_gpu_layers, ubatch=group.llm_ubatch, batch=group.llm_batch,
                                    flash_attn=group.llm_flash_attn, exact=group.llm_exact)
    if written is None:
        return inner
    return CachedLLM(inner, written, "record" if kind == "record" else "auto", read_dirs=read)


def cache_of(llm: LLM) -> CachedLLM | None:
    """The record/replay cache inside an LLM's wrappers (the memo), if it has one."""
    seen = 0
    while not isinstance(llm, CachedLLM) and hasattr(llm, "inner") and seen < 8:
        llm, seen = getattr(llm, "inner"), seen + 1  # noqa: B009 - the wrappers (memo) are not typed as having one
    return llm if isinstance(llm, CachedLLM) else None


def fresh_llm(llm: LLM) -> LLM:
    """The same model asked afresh, for one run ("Ask the model again", `gear ask --live`): every request goes to the
    live model once (a request repeated within the run gets the answer given earlier in it, as a replay would), past
    the recordings and the process's memo; answers no recording holds yet are recorded, recordings are never
    overwritten. Raises LLMError for an LLM that serves recordings only."""
    cache = cache_of(llm)
    if cache is None:  # a live model without recordings: every call asks it; a fresh memo keeps repeats consistent
        while isinstance(llm, MemoLLM):
            llm = llm.inner
        return MemoLLM(llm)
    if cache.inner is None:
        raise LLMError("asking the model again needs a live model, and this LLM serves recorded answers only "
                       "(GEAR_LLM=replay): choose auto, local or openai")
    return CachedLLM(cache.inner, cache.cache_dir, "fresh", model=cache.model, read_dirs=cache.read_dirs)


def recorded_llm(llm: LLM) -> CachedLLM | None:
    """The recordings `llm` reads, served alone (no model asked; a request never recorded is an LLMError): the run
    those recordings hold. None when `llm` reads no recordings."""
    cache = cache_of(llm)
    if cache is None:
        return None
    return CachedLLM(None, cache.cache_dir, "replay", model=cache.model, read_dirs=cache.read_dirs)


def request_key(llm: LLM, messages: list[Message], json_schema: dict | None, max_tokens: int) -> str:
    """The name of one request to this LLM, as its recordings know it (a trace keeps it on each LLMCalled, so a run
    asked again can be lined up call by call with the recorded one)."""
    return cache_key(llm.model, messages, json_schema, max_tokens)


def llm_key(group: LLMGroup) -> tuple[object, ...]:
    """What makes two configurations the same LLM (the engine keeps one loaded model per key): the group's fields that
    make the model (LLMGroup.MODEL_FIELDS)."""
    return tuple(str(v) if isinstance(v := getattr(group, name), Path) else v for name in group.MODEL_FIELDS)


def llm_from_settings(settings: LLMGroup) -> LLM:
    """The LLM named by the settings, behind the process-wide memo: the one factory the engine, extraction and the app
    use."""
    return MemoLLM(make_llm(settings))
