"""Record/replay cache for LLM calls: reproducible runs, a demo and tests that need no key and no model, and the
app's default "recorded, else live" model (answers already recorded are served at once, anything else goes to the
live model and is recorded into the user's own cache, never into the bundled one).

Each entry is one pretty, key-sorted JSON file named by the sha256 of the canonical request (model, messages, schema,
max_tokens), so a cache directory can be committed and diffs stay readable. Served entries keep their original token
counts and seconds, so token accounting of a replayed run matches the recorded one.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Literal

from gear.files import atomic_write_json
from gear.llm.base import LLM, LLMError, LLMResult, Message, Source, TextListener, last_user_content

Mode = Literal["record", "replay", "auto", "fresh"]
_MODES = ("record", "replay", "auto", "fresh")


def cache_key(model: str, messages: list[Message], json_schema: dict | None, max_tokens: int) -> str:
    """sha256 of the canonical JSON of the request: identical requests share one entry on every machine."""
    payload = {"model": model, "messages": messages, "json_schema": json_schema, "max_tokens": max_tokens}
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def recorded_models(cache_dir: Path) -> set[str]:
    """Model names found in a cache directory (unreadable entries are ignored)."""
    models: set[str] = set()
    if not cache_dir.is_dir():
        return models
    for entry in cache_dir.glob("*.json"):
        try:
            model = json.loads(entry.read_text(encoding="utf-8")).get("model")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(model, str):
            models.add(model)
    return models


class CachedLLM:
    """Wraps an LLM with an on-disk cache.

    mode "record": call the inner model and (over)write the entry — once per request in this object's life: a request
    asked again (the same reasoner prompt in two iterations) gets the answer recorded for it, since a replay can only
    give the one recorded answer, and a second live answer may differ (llama.cpp rounds differently when the prompt
    comes from its cache); "replay": serve from the cache only and raise LLMError on a miss; "auto": serve hits, call
    through and record misses; "fresh": ask the model anew for every request (once per request in this object's
    life, like "record"), and record only what no recording answers yet — a recording stays the run that replays
    everywhere, and a fresh run that differs from it is said to differ (gear.trace.difference), not written over it.
    `read_dirs` are further caches that are read (after `cache_dir`) but never written: the bundled recordings.
    """

    def __init__(self, inner: LLM | None, cache_dir: Path, mode: Mode = "auto", *, model: str | None = None,
                 read_dirs: tuple[Path, ...] = ()) -> None:
        if mode not in _MODES:
            raise LLMError(f"unknown cache mode {mode!r}: use one of {', '.join(_MODES)}")
        if inner is None and mode != "replay":
            raise LLMError(f"cache mode {mode!r} needs a model to call; use mode 'replay' to serve from the cache only")
        self.inner = inner
        self.cache_dir = Path(cache_dir)
        self.read_dirs = tuple(Path(d) for d in read_dirs if Path(d) != Path(cache_dir))
        self.mode: Mode = mode
        self.model: str = model or (inner.model if inner is not None else "")
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._recorded: set[Path] = set()  # entries this object wrote (record mode serves them to a repeated request)
        self._given: dict[Path, LLMResult] = {}  # fresh mode: what the model answered each request in this life

    @classmethod
    def replay_only(cls, cache_dir: Path, model: str | None = None) -> CachedLLM:
        """Serve only from `cache_dir`; `model` defaults to the recorded one when the cache holds exactly one."""
        cache_dir = Path(cache_dir)
        if model is None:
            models = recorded_models(cache_dir)
            if len(models) == 1:
                model = models.pop()
            elif not models:
                raise LLMError(f"LLM cache {cache_dir} is empty or missing: record a run first (GEAR_LLM=record)")
            else:
                raise LLMError(
                    f"LLM cache {cache_dir} holds several models ({', '.join(sorted(models))}): set GEAR_LLM_MODEL"
                )
        return cls(None, cache_dir, "replay", model=model)

    def path_for(self, messages: list[Message], json_schema: dict | None, max_tokens: int) -> Path:
        return self.cache_dir / f"{cache_key(self.model, messages, json_schema, max_tokens)}.json"

    def answers_at_once(self, messages: list[Message], json_schema: dict | None, max_tokens: int) -> Source | None:
        """"record" when a recorded answer to this request exists where `complete` would look (in record mode only
        one this object recorded: any other it asks the model for anew)."""
        path = self.path_for(messages, json_schema, max_tokens)
        if self.mode == "record":
            return "record" if path in self._recorded else None
        if self.mode == "fresh":
            return "memo" if path in self._given else None
        return "record" if any(p.is_file() for p in (path, *(d / path.name for d in self.read_dirs))) else None

    def _load(self, path: Path) -> LLMResult | None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return LLMResult(
                text=str(data["text"]),
                prompt_tokens=int(data["prompt_tokens"]),
                completion_tokens=int(data["completion_tokens"]),
                seconds=float(data["seconds"]),
                model=str(data.get("model", self.model)),
                cached=True,
                source="record",
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return None  # a corrupt entry counts as a miss; recording overwrites it

    def complete(self, messages: list[Message], *, json_schema: dict | None = None, max_tokens: int = 512,
                 on_text: TextListener | None = None) -> LLMResult:
        path = self.path_for(messages, json_schema, max_tokens)
        if self.mode == "fresh" and path in self._given:
            given = replace(self._given[path], cached=True, source="memo")
            if on_text is not None:
                on_text(given.text)
            return given
        if self.mode not in ("record", "fresh") or path in self._recorded:
            for candidate in (path, *(d / path.name for d in self.read_dirs)):
                hit = self._load(candidate)
                if hit is not None:
                    with self._lock:
                        self.hits += 1
                    if on_text is not None:
                        on_text(hit.text)
                    return hit
        if self.inner is None or self.mode == "replay":
            self.misses += 1
            prompt = " ".join(last_user_content(messages).split())[:80]
            raise LLMError(
                f"no recorded answer in LLM cache {self.cache_dir} for model {self.model!r} and prompt "
                f"{prompt!r}: record it first (GEAR_LLM=record) or use a live model"
            )
        with self._lock:
            self.misses += 1
        # no lock around the call: remote servers run calls in parallel. The atomic write keeps every entry whole, but
        # two processes recording the same request at once each write their own answer and the later one stays, so
        # the earlier run's report no longer replays: the recording scripts hold one lock (scripts/eval_common.sh)
        started = time.perf_counter()
        streaming = {"on_text": on_text} if on_text is not None else {}  # older LLMs may not stream
        result = self.inner.complete(messages, json_schema=json_schema, max_tokens=max_tokens, **streaming)
        seconds = result.seconds or (time.perf_counter() - started)
        if self.mode == "fresh":
            with self._lock:
                self._given[path] = result
            if any(p.is_file() for p in (path, *(d / path.name for d in self.read_dirs))):
                return result  # recorded before: the recording stays what replays
        atomic_write_json(
            path,
            {
                "model": self.model,
                "messages": messages,
                "json_schema": json_schema,
                "max_tokens": max_tokens,
                "text": result.text,
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "seconds": round(seconds, 4),
            },
            indent=2,
            sort_keys=True,
        )
        with self._lock:
            self._recorded.add(path)
        return result
