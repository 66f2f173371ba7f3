"""The embedded default model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) run in-process by llama-cpp-python.

Loaded lazily on the first call (so importing the engine or replaying a cache costs nothing), and guarded by a lock
because a llama.cpp context is not re-entrant: concurrent callers (Streamlit sessions) are served one at a time.
One thread by default: on this 2-core machine two threads collapse when another process is busy (see DESIGN.md).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from gear.llm.base import LLMError, LLMResult, Message, estimate_tokens
from gear.llm.model_files import DEFAULT_MODEL, INSTALL_HINT, ensure_model

DEFAULT_N_CTX = 8192
DEFAULT_SEED = 0


def default_threads() -> int:
    """$GEAR_LLM_THREADS, else 1."""
    try:
        return max(1, int(os.environ.get("GEAR_LLM_THREADS", "1")))
    except ValueError:
        return 1


def llama_cpp_available() -> bool:
    """Whether the runtime is importable (it is compiled from source, so it may be absent)."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


class LocalLLM:
    """llama.cpp chat completion at temperature 0 with a fixed seed; `json_schema` constrains output by grammar."""

    def __init__(
        self,
        model_path: Path | None = None,
        *,
        model: str | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        seed: int = DEFAULT_SEED,
    ) -> None:
        self.model_path = model_path
        self.model = model or (model_path.stem if model_path is not None else DEFAULT_MODEL.name)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self.load_seconds: float | None = None
        self._llama: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        """Create the llama.cpp context (assembling the GGUF from its packages on first use)."""
        if self.n_threads > 1:
            # llama.cpp's OpenMP workers spin while waiting; beside another busy process on 2 cores that collapses
            # generation to < 1 token/s (measured). Passive waiting keeps 2 threads at 1-thread speed or better.
            # Only effective before the OpenMP runtime starts, and never overrides the user's choice.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import llama_cpp
        except ImportError:
            raise LLMError(f"llama-cpp-python is not installed: {INSTALL_HINT}") from None
        path = self.model_path or ensure_model()
        started = time.perf_counter()
        try:
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                seed=self.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMError(f"could not load the local model {path}: {exc}") from None
        self.load_seconds = time.perf_counter() - started
        return llama

    def ensure_loaded(self) -> None:
        """Load now (e.g. at app start) rather than on the first question."""
        with self._lock:
            if self._llama is None:
                self._llama = self._load()

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512) -> LLMResult:
        kwargs: dict[str, Any] = {"messages": messages, "temperature": 0.0, "max_tokens": max_tokens, "seed": self.seed}
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        with self._lock:
            if self._llama is None:
                self._llama = self._load()
            started = time.perf_counter()
            try:
                response = self._llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # llama.cpp raises ValueError when the prompt exceeds the context
                raise LLMError(f"local model failed: {' '.join(str(exc).split())[:200]}") from None
            seconds = time.perf_counter() - started
        text = response["choices"][0]["message"].get("content") or ""
        usage = response.get("usage") or {}
        prompt_tokens = usage.get("prompt_tokens")
        completion_tokens = usage.get("completion_tokens")
        return LLMResult(
            text=text,
            prompt_tokens=prompt_tokens
            if isinstance(prompt_tokens, int)
            else estimate_tokens("\n".join(m.get("content", "") for m in messages)),
            completion_tokens=completion_tokens if isinstance(completion_tokens, int) else estimate_tokens(text),
            seconds=seconds,
            model=self.model,
        )
