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
from gear.llm.base import LLM, LLMError, LLMResult, Message, TextListener
from gear.llm.memo import MemoLLM
from gear.llm.replay import CachedLLM, Mode

if TYPE_CHECKING:
    from gear.config import Settings

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
    "cache_of",
    "default_user_cache",
    "fresh_llm",
    "legacy_user_cache",
    "llm_from_settings",
    "llm_key",
    "make_llm",
    "recorded_llm",
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


def make_llm(
    kind: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    cache_dir: Path | None = None,
    bundled_cache: Path | None = None,
    mode: Mode | None = None,
    timeout: float = 120.0,
    max_retries: int = 3,
    max_concurrent: int | None = None,
    n_threads: int | None = None,
    parallel: int | None = None,
    ctx_per_slot: int | None = None,
    cache_reuse: int | None = None,
    gpu_layers: int | None = None,
    ubatch: int | None = None,
    batch: int | None = None,
    flash_attn: bool | None = None,
    exact: bool = False,
) -> LLM:
    """Build the configured LLM.

    kind "local": the embedded model (llama-server, started on first use with `n_threads`, `parallel` slots of
    `ctx_per_slot` tokens, `cache_reuse`, `gpu_layers`, `ubatch`, `batch` and `flash_attn`; None: chosen from the
    build and the cores, gear.llm.server_profile); "openai": an OpenAI-compatible endpoint; "replay":
    answers from `cache_dir` only (error on a miss; `model` defaults to the recorded one); "record": call a live model
    (OpenAI-compatible when `base_url` or `api_key` is set, else local) and write every answer to `cache_dir`;
    "auto": answers recorded in `cache_dir` (default: default_user_cache(), then also the older user cache
    legacy_user_cache()) or `bundled_cache` at once, the live model (chosen as for "record") for the rest, recorded
    into `cache_dir`, never into the others.
    For "local"/"openai", a `cache_dir` wraps the model in a cache with `mode` (default "auto": serve hits, record
    misses). An OpenAI-compatible endpoint gets `timeout` seconds per answer, the client's `max_retries`, and at most
    `max_concurrent` calls at once from this process; like the embedded model, one client (and queue) is shared by
    every caller in the process with the same endpoint, model, key and limits.
    """
    if kind not in KINDS:
        raise LLMError(f"unknown LLM kind {kind!r}: use one of {', '.join(KINDS)}")
    if kind in ("replay", "record") and cache_dir is None:
        raise LLMError(f"LLM kind {kind!r} needs a cache directory: set GEAR_LLM_CACHE_DIR")
    if kind == "replay":
        assert cache_dir is not None
        return CachedLLM.replay_only(Path(cache_dir), model=model)

    live_kind = kind
    if kind in ("record", "auto"):
        live_kind = "openai" if (base_url or api_key) else "local"
    inner: LLM
    if live_kind == "openai":
        from gear.llm.openai_client import shared_openai_llm

        inner = shared_openai_llm(model or "gpt-4o-mini", base_url=base_url, api_key=api_key, timeout=timeout,
                                  max_retries=max_retries, max_concurrent=max_concurrent)
    else:
        from gear.llm.embedded import shared_embedded_llm

        inner = shared_embedded_llm(model_path=Path(model) if model and model.endswith(".gguf") else None,
                                    threads=n_threads, ctx_per_slot=ctx_per_slot, parallel=parallel,
                                    cache_reuse=cache_reuse, gpu_layers=gpu_layers, ubatch=ubatch, batch=batch,
                                    flash_attn=flash_attn, exact=exact)
    if kind == "record":
        assert cache_dir is not None
        return CachedLLM(inner, Path(cache_dir), mode or "record")
    if kind == "auto":
        older = (legacy_user_cache(),) if cache_dir is None else ()  # a cache named on purpose is read alone
        return CachedLLM(inner, Path(cache_dir or default_user_cache()), "auto",
                         read_dirs=(*older, *((Path(bundled_cache),) if bundled_cache else ())))
    if cache_dir is not None:
        return CachedLLM(inner, Path(cache_dir), mode or "auto")
    return inner


def answer_stores(settings: Settings) -> list[Path]:
    """The folders of recorded answers the configured LLM reads, the one it records into first (what make_llm
    wires; a page watching for new recordings watches these)."""
    if settings.llm in ("local", "openai") and settings.llm_cache_dir is None:
        return []
    if settings.llm in ("replay", "record"):
        return [Path(settings.llm_cache_dir)] if settings.llm_cache_dir else []
    stores = [Path(settings.llm_cache_dir or default_user_cache())]
    if settings.llm == "auto":
        if settings.llm_cache_dir is None:
            stores.append(legacy_user_cache())
        if settings.llm_bundled_cache:
            stores.append(Path(settings.llm_bundled_cache))
    return stores


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


def llm_key(settings: Settings) -> tuple[object, ...]:
    """What makes two configurations the same LLM (the engine keeps one loaded model per key)."""
    return (settings.llm, settings.llm_model, settings.llm_base_url, str(settings.llm_cache_dir),
            str(settings.llm_bundled_cache), settings.llm_threads, settings.llm_timeout, settings.llm_max_retries,
            settings.llm_max_concurrent, settings.llm_parallel, settings.llm_ctx_per_slot, settings.llm_cache_reuse,
            settings.llm_gpu_layers, settings.llm_ubatch, settings.llm_batch, settings.llm_flash_attn,
            settings.llm_exact)


def llm_from_settings(settings: Settings) -> LLM:
    """The LLM named by Settings, behind the process-wide memo: the one factory the engine, extraction and the app
    use."""
    api_key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return MemoLLM(make_llm(settings.llm, model=settings.llm_model, base_url=settings.llm_base_url, api_key=api_key,
                            cache_dir=settings.llm_cache_dir, bundled_cache=settings.llm_bundled_cache,
                            timeout=settings.llm_timeout, max_retries=settings.llm_max_retries,
                            max_concurrent=settings.llm_max_concurrent, n_threads=settings.llm_threads,
                            parallel=settings.llm_parallel, ctx_per_slot=settings.llm_ctx_per_slot,
                            cache_reuse=settings.llm_cache_reuse, gpu_layers=settings.llm_gpu_layers,
                            ubatch=settings.llm_ubatch, batch=settings.llm_batch,
                            flash_attn=settings.llm_flash_attn, exact=settings.llm_exact))
