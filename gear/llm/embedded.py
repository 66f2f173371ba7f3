"""The embedded model: the one OpenAI-compatible client pointed at the llama-server gear owns (gear.llm.llama_server).

There is one LLM path: the embedded Qwen2.5-Coder-1.5B is reached exactly as vLLM, Ollama or OpenAI are, through
gear.llm.openai_client (with record/replay and the memo above it), so recorded answers stay valid: the client sends the
model name the set-up always used (the server's `--alias`), and the cache is keyed by the request. What this wrapper
adds is what a server of one's own needs:

- the server is started (or found, when another process on the machine runs it) before the first call and again after
  it died; the first call waits for the model to load (≈1–2 s on a warm disk);
- calls from this process take turns in a `ModelQueue` with as many places as the server has slots, so a waiting app
  session is told its place instead of waiting silently on a socket;
- a call that fails because the server died is one line saying so (and where its log is); the next call restarts it.
"""

from __future__ import annotations

import os
import shlex
import threading
from pathlib import Path

from gear.llm.base import LLMError, LLMResult, Message, TextListener
from gear.llm.llama_server import (
    DEFAULT_CACHE_REUSE,
    DEFAULT_CTX_PER_SLOT,
    EmbeddedServer,
    Running,
    ServerConfig,
    cache_root,
    default_threads,
    find_binary,
    health,
    physical_cores,
    shared_server,
)
from gear.llm.model_files import DEFAULT_MODEL, ensure_model
from gear.llm.openai_client import OpenAILLM
from gear.llm.queue import ModelQueue
from gear.llm.server_profile import ServerProfile, build_of, choose

EMBEDDED_TIMEOUT = 600.0  # seconds without a byte: a long read on a slow CPU, or a turn behind another process's call
EMBEDDED_RETRIES = 1  # a refused connection to our own server means it died: say so, do not back off for seconds
#: llama-server's request field for exact mode (GEAR_LLM_EXACT): the prompt read whole, never partly from the slot's
#: cache, so that the same request gets the same text at temperature 0 (llama.cpp #4902)
READ_WHOLE: dict[str, bool] = {"cache_prompt": False}


def server_profile(*, parallel: int | None = None, ubatch: int | None = None, batch: int | None = None,
                   flash_attn: bool | None = None, binary: Path | None = None) -> ServerProfile:
    """Slots, micro-batch, batch and flash attention for the installed llama-server on this machine: what is set,
    else what its build and the cores call for (gear.llm.server_profile). Without a llama-server, a CPU build's."""
    if binary is None:
        try:
            binary = find_binary()
        except LLMError:
            binary = None
    build = build_of(binary) if binary is not None else "cpu"
    return choose(build, physical_cores(), parallel=parallel, ubatch=ubatch, batch=batch, flash_attn=flash_attn)


def server_config(*, model_path: Path | None = None, threads: int | None = None, ctx_per_slot: int | None = None,
                  parallel: int | None = None, cache_reuse: int | None = None, gpu_layers: int | None = None,
                  ubatch: int | None = None, batch: int | None = None, flash_attn: bool | None = None
                  ) -> ServerConfig:
    """The embedded server's configuration from settings (finds the binary and joins the model file if needed);
    $GEAR_LLAMA_SERVER_ARGS adds llama-server options of one's own (e.g. "--spec-type ngram-mod")."""
    binary = find_binary()
    profile = server_profile(parallel=parallel, ubatch=ubatch, batch=batch, flash_attn=flash_attn, binary=binary)
    return ServerConfig(binary=binary, model_path=model_path or ensure_model(), alias=DEFAULT_MODEL.name,
                        threads=threads or default_threads(), ctx_per_slot=ctx_per_slot or DEFAULT_CTX_PER_SLOT,
                        parallel=profile.parallel,
                        cache_reuse=DEFAULT_CACHE_REUSE if cache_reuse is None else cache_reuse,
                        ubatch=profile.ubatch, gpu_layers=gpu_layers,
                        extra_args=tuple(shlex.split(os.environ.get("GEAR_LLAMA_SERVER_ARGS", ""))),
                        batch=profile.batch, flash_attn=profile.flash_attn)


class EmbeddedLLM:
    """The LLM protocol over the owned llama-server. The server is resolved lazily: building this object loads
    nothing, finds nothing and starts nothing (replaying a recorded run needs no server)."""

    def __init__(self, *, model_path: Path | None = None, threads: int | None = None, ctx_per_slot: int | None = None,
                 parallel: int | None = None, cache_reuse: int | None = None, gpu_layers: int | None = None,
                 timeout: float = EMBEDDED_TIMEOUT, ubatch: int | None = None, batch: int | None = None,
                 flash_attn: bool | None = None, exact: bool = False) -> None:
        if parallel is not None and parallel < 1:
            raise LLMError(f"the embedded model needs at least one slot, got {parallel}: fix GEAR_LLM_PARALLEL")
        if exact and parallel is None:
            parallel = 1  # read whole but batched with other requests, 2 texts of 40 differed (docs/results.md)
        self.model = DEFAULT_MODEL.name
        self.timeout = timeout
        #: every request read whole, never from the server's prompt cache (llama-server's `cache_prompt: false`): at
        #: temperature 0 the same request then gets the same text each time (docs/results.md, "Reproducibility")
        self.exact = exact
        self._options = {"model_path": model_path, "threads": threads, "ctx_per_slot": ctx_per_slot,
                         "parallel": parallel, "cache_reuse": cache_reuse, "gpu_layers": gpu_layers,
                         "ubatch": ubatch, "batch": batch, "flash_attn": flash_attn}
        self._queue = ModelQueue(parallel) if parallel is not None else None
        self._server: EmbeddedServer | None = None
        self._clients: dict[str, OpenAILLM] = {}
        self._lock = threading.Lock()

    @property
    def profile(self) -> ServerProfile:
        """The server's slots, micro-batch, batch and flash attention as set or chosen for this machine (reads the
        build's stamp; starts nothing)."""
        o = self._options
        return server_profile(parallel=o["parallel"], ubatch=o["ubatch"], batch=o["batch"],  # type: ignore[arg-type]
                              flash_attn=o["flash_attn"])  # type: ignore[arg-type]

    @property
    def queue(self) -> ModelQueue:
        """Turns at the server: one place per slot."""
        with self._lock:
            if self._queue is None:
                self._queue = ModelQueue(self.profile.parallel)
            return self._queue

    @property
    def server(self) -> EmbeddedServer:
        with self._lock:
            if self._server is None:
                self._server = shared_server(server_config(**self._options))  # type: ignore[arg-type]  # the options are server_config's own keywords, kept as given
            return self._server

    def ensure_loaded(self) -> None:
        """Start (or find) the server now, e.g. when the app starts, rather than on the first question."""
        self.server.ensure()

    def _client(self, running: Running) -> OpenAILLM:
        with self._lock:
            client = self._clients.get(running.url)
            if client is None:
                self._clients = {running.url: OpenAILLM(self.model, base_url=running.url, timeout=self.timeout,
                                                        max_retries=EMBEDDED_RETRIES, seed=0,
                                                        extra_body=READ_WHOLE if self.exact else None)}
                client = self._clients[running.url]
            return client

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        with self.queue.turn():
            server = self.server
            running = server.ensure()
            try:
                return self._client(running).complete(messages, json_schema=json_schema, max_tokens=max_tokens,
                                                      on_text=on_text)
            except LLMError:
                if server.alive() and health(running.root) is not None:
                    raise
                how = server.exit_status(wait=2.0)
                raise LLMError(f"the embedded model's server (llama-server, pid {running.pid}) stopped during this "
                               f"call{f' ({how})' if how else ''}: ask again to restart it (log: {server.log_path})"
                               ) from None


_shared: dict[tuple[object, ...], EmbeddedLLM] = {}
_shared_lock = threading.Lock()


def shared_embedded_llm(*, model_path: Path | None = None, threads: int | None = None,
                        ctx_per_slot: int | None = None, parallel: int | None = None, cache_reuse: int | None = None,
                        gpu_layers: int | None = None, timeout: float = EMBEDDED_TIMEOUT, ubatch: int | None = None,
                        batch: int | None = None, flash_attn: bool | None = None, exact: bool = False
                        ) -> EmbeddedLLM:
    """The process's one EmbeddedLLM per configuration (one queue for all its callers, one server)."""
    key = (str(model_path) if model_path else None, threads or default_threads(), ctx_per_slot, parallel,
           cache_reuse, gpu_layers, timeout, ubatch, batch, flash_attn, cache_root(), exact)
    with _shared_lock:
        if key not in _shared:
            _shared[key] = EmbeddedLLM(model_path=model_path, threads=threads, ctx_per_slot=ctx_per_slot,
                                       parallel=parallel, cache_reuse=cache_reuse, gpu_layers=gpu_layers,
                                       timeout=timeout, ubatch=ubatch, batch=batch, flash_attn=flash_attn,
                                       exact=exact)
        return _shared[key]
