"""The embedded default model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF) run in-process by llama-cpp-python.

Loaded lazily on the first call (so importing the engine or replaying a cache costs nothing). A llama.cpp context is not
re-entrant, so concurrent callers (Streamlit sessions) take turns through a `ModelQueue`, first come first served, each
told how many calls are ahead of it; `shared_local_llm` gives every engine in a process the same model and queue (two
indexes open in the app must not load the 1 GB model twice, nor run it twice at once on the same cores).

Threads: the machine's physical cores by default (`GEAR_LLM_THREADS` or Settings.llm_threads override), with
llama.cpp's OpenMP workers waiting passively, so a busy neighbour process does not collapse generation (spinning
workers on 2 cores fell below 1 token/s; bench/llm_steps.py measures 1 thread against all cores, quiet and busy).
The context is never reset between calls: llama.cpp re-uses the longest common token prefix of the previous prompt
from its KV cache, so a fixed prompt head costs nothing after the first call.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from pathlib import Path
from typing import Any

from gear.llm.base import LLMError, LLMResult, Message, TextListener, estimate_tokens
from gear.llm.model_files import DEFAULT_MODEL, INSTALL_HINT, ensure_model
from gear.llm.queue import ModelQueue

DEFAULT_N_CTX = 8192
DEFAULT_SEED = 0


def physical_cores() -> int:
    """Physical cores (hyper-threads share one core's arithmetic units, which llama.cpp already saturates)."""
    try:
        import psutil

        return max(1, psutil.cpu_count(logical=False) or os.cpu_count() or 1)
    except ImportError:  # pragma: no cover - psutil is a dependency
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """$GEAR_LLM_THREADS, else the physical cores."""
    try:
        return max(1, int(os.environ["GEAR_LLM_THREADS"]))
    except (KeyError, ValueError):
        return physical_cores()


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
        self.queue = ModelQueue(1)

    def _load(self) -> Any:
        """Create the llama.cpp context (assembling the GGUF from its packages on first use)."""
        # llama.cpp's OpenMP workers spin while waiting; beside another busy process on 2 cores that collapses
        # generation to < 1 token/s (measured). Passive waiting keeps all cores at 1-thread speed or better. Only
        # effective before the OpenMP runtime starts, and never overrides the user's choice.
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
        with self.queue.turn():
            if self._llama is None:
                self._llama = self._load()

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        kwargs: dict[str, Any] = {"messages": messages, "temperature": 0.0, "max_tokens": max_tokens, "seed": self.seed}
        if json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": json_schema}
        with self.queue.turn():
            if self._llama is None:
                self._llama = self._load()
            started = time.perf_counter()
            try:
                if on_text is None:
                    response = self._llama.create_chat_completion(**kwargs)
                    text = response["choices"][0]["message"].get("content") or ""
                    usage = response.get("usage") or {}
                    prompt_tokens, completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
                else:
                    text, prompt_tokens, completion_tokens = self._stream(kwargs, on_text)
            except ValueError as exc:  # llama.cpp raises ValueError when the prompt exceeds the context
                raise LLMError(f"local model failed: {' '.join(str(exc).split())[:200]}") from None
            seconds = time.perf_counter() - started
        return LLMResult(
            text=text,
            prompt_tokens=prompt_tokens
            if isinstance(prompt_tokens, int)
            else estimate_tokens("\n".join(m.get("content", "") for m in messages)),
            completion_tokens=completion_tokens if isinstance(completion_tokens, int) else estimate_tokens(text),
            seconds=seconds,
            model=self.model,
        )

    def _stream(self, kwargs: dict[str, Any], on_text: TextListener) -> tuple[str, int, int]:
        """Generate with streaming, passing each piece on; token counts from the context (llama-cpp-python reports
        no usage when streaming): the generated tokens are the text re-tokenised, the prompt the rest of the
        context that this call evaluated or re-used."""
        pieces: list[str] = []
        finish = None
        chunks = self._llama.create_chat_completion(**kwargs, stream=True)
        try:
            for chunk in chunks:
                choice = chunk["choices"][0]
                piece = choice.get("delta", {}).get("content")
                finish = choice.get("finish_reason") or finish
                if piece:
                    pieces.append(piece)
                    on_text(piece)
        finally:
            # a listener that raises (a cancelled app session) abandons the generation: close it here, inside the
            # turn, not whenever the traceback that holds it is dropped (maybe while the next caller runs)
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
        text = "".join(pieces)
        completion = len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0
        # the last sampled token (EOS, or the one that hit max_tokens) is never evaluated into the context
        prompt = max(0, int(self._llama.n_tokens) - max(0, completion - (1 if finish == "length" else 0)))
        return text, prompt, completion


_shared: dict[tuple[object, ...], LocalLLM] = {}
_shared_lock = threading.Lock()


@atexit.register
def _close_shared() -> None:
    """Free the shared models before the interpreter tears its modules down: llama-cpp-python's own finaliser would
    run after that and fail noisily ("'NoneType' object is not callable") at every exit of a process that used one."""
    with _shared_lock:
        for llm in _shared.values():
            llama, llm._llama = llm._llama, None
            if llama is not None:
                llama.close()


def shared_local_llm(model_path: Path | None = None, *, n_ctx: int = DEFAULT_N_CTX,
                     n_threads: int | None = None) -> LocalLLM:
    """The process's one LocalLLM for this model file and context (loaded once, one queue for all its callers)."""
    key = (str(model_path) if model_path else None, n_ctx, n_threads or default_threads())
    with _shared_lock:
        if key not in _shared:
            _shared[key] = LocalLLM(model_path, n_ctx=n_ctx, n_threads=n_threads)
        return _shared[key]
