"""The one decoder of a trace file: what each field of each event may hold, checked when the file is read.

A trace is untrusted input (gear.saved): whoever opens one by a link, on the Traces page or with `gear diagnose` reads
what someone else wrote, maybe by hand. Each event is checked against a strict schema mirrored from its dataclass
(gear.saved.typed): every number a finite number within its range, every id an integer, every string and list
bounded, and the names and ids of passages, triples and entities shorter than a page. So what a view draws from a
decoded trace has the type its class says: a `k` is an int, never HTML. Fields a newer version added are ignored and
fields an older one lacked take their defaults, so old traces still open.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, TypeAdapter

from gear.saved import (
    JSON,
    MAX_ITEMS,
    MAX_NAME,
    MAX_WORD,
    SAFE_INT,
    Cutoff,
    SavedFileError,
    check,
    count,
    kind_of,
    parse,
    read,
    typed,
)

FORMAT = "gear-trace"
FORMAT_VERSION = 1
MAX_BYTES = 16_000_000  # the largest bundled trace is 0.2 MB; a 100-iteration run with long passages stays below
MAX_EVENTS = 100_000


class TraceError(SavedFileError):
    """A trace file that cannot be read; the message names the file, the field and the problem, in one line."""


_ID = Field(ge=-1, le=SAFE_INT)  # -1: Algorithm 1's beam carried forward with no neighbour left
INTS: dict[str, Any] = {
    **dict.fromkeys(("id", "passage_id", "triple_id", "triple_ids", "passage_ids", "gold_passage_ids", "cited",
                     "collected", "source", "target"), _ID),
    "iteration": count(10_000), "iterations": count(10_000), "k": count(100_000), "width": count(100_000),
    "length": count(1_000), "max_neighbours": count(10_000_000), "recorded": count(10_000_000),
    "candidates_scored": count(10**12), "total": count(10**12), "beam": count(10_000_000), "rank": count(10**9),
    "prompt_tokens": count(10**9), "completion_tokens": count(10**9), "max_tokens": count(10**9),
    "cached_tokens": count(10**9), "ahead": count(10**9), "graph": count(10**12),
}
_SHARE = Field(ge=0.0, le=1.0)
FLOATS: dict[str, Any] = {"em": _SHARE, "f1": _SHARE, "recall": _SHARE, "damping": _SHARE, "gamma": Field(ge=0.0),
                          "ms": Field(ge=0.0), "seconds": Field(ge=0.0), "total_ms": Field(ge=0.0)}
_WORD, _NAME = Field(max_length=MAX_WORD), Field(max_length=MAX_NAME)
TEXTS: dict[str, Any] = {
    **dict.fromkeys(("role", "source", "method", "retriever", "question_id", "score_mode", "step", "model", "request",
                     "stage", "kind"), _WORD),
    **dict.fromkeys(("title", "passage_title", "name", "label", "answers"), _NAME),
}
KEYS: dict[str, Any] = {"recall": Cutoff}

#: the run's settings (RunStarted.settings) that hold a number or a flag, by name, as gear.config.Settings declares
#: them (tests/unit/test_saved_files.py holds the two to each other): readers of a trace use them as numbers — the
#: QA step's top k in a caption, the iteration cap in the diagnosis — so a file cannot hand them text
SETTING_KINDS: dict[str, type] = {
    **dict.fromkeys(("embed_bf16", "diversity", "answer", "ppr_filter", "llm_flash_attn", "llm_exact",
                     "es_rescore"), bool),
    **dict.fromkeys(("gamma", "ppr_damping", "ppr_synonym_threshold", "ppr_passage_weight", "llm_timeout",
                     "es_timeout"), float),
    **dict.fromkeys(("rrf_k", "beam_width", "beam_length", "max_neighbours", "max_iterations", "agent_k",
                     "passage_link_k", "gist_read_k", "qa_top_k", "ppr_seed_triples", "ppr_seed_entities",
                     "ircot_max_steps", "ircot_max_passages", "extraction_stop_repeats", "llm_threads", "llm_parallel",
                     "llm_ubatch", "llm_batch", "llm_ctx_per_slot", "llm_cache_reuse", "llm_gpu_layers",
                     "llm_max_retries", "llm_max_concurrent", "es_num_candidates", "es_oversample",
                     "es_neighbour_cap"), int),
}
_KIND_WORDS = {bool: "true or false", float: "a number", int: "a whole number"}


def _setting_kinds(settings: dict[str, Any]) -> dict[str, Any]:
    for name, kind in SETTING_KINDS.items():
        value = settings.get(name)
        if value is None:
            continue
        fits = type(value) is kind or (kind is float and type(value) is int)
        if not fits:
            raise ValueError(f"setting {name!r} should be {_KIND_WORDS[kind]}, not {kind_of(value)}")
    return settings


SETTINGS = Annotated[dict[Annotated[str, Field(max_length=MAX_WORD)], JSON],
                     Field(max_length=MAX_ITEMS), AfterValidator(_setting_kinds)]


_SCHEMAS: dict[type, TypeAdapter[Any]] = {}


def schema(cls: type) -> TypeAdapter[Any]:
    """The strict schema of one event class (made once per class)."""
    if cls not in _SCHEMAS:
        _SCHEMAS[cls] = typed(cls, ints=INTS, floats=FLOATS, texts=TEXTS, keys=KEYS, shapes={"settings": SETTINGS})
    return _SCHEMAS[cls]


def decode(data: Any, source: str, kinds: Mapping[str, type[Any]]) -> list[Any]:
    """A trace file's data as events (`kinds`: kind → event class); TraceError naming the first field that fails."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TraceError(f'{source}: not a GeAR trace (no "format": "{FORMAT}")')
    version = data.get("version")
    if version != FORMAT_VERSION or isinstance(version, bool):
        shown = version if isinstance(version, int) else "missing" if version is None else "not a number"
        raise TraceError(f"{source}: version: trace version {shown} is not supported (expected {FORMAT_VERSION})")
    raw = data.get("events")
    if not isinstance(raw, list):
        raise TraceError(f"{source}: events: should be a list of events, not {kind_of(raw)}")
    if len(raw) > MAX_EVENTS:
        raise TraceError(f"{source}: events: {len(raw):,} events, more than the {MAX_EVENTS:,} a trace may hold")
    events = []
    for n, item in enumerate(raw):
        kind = item.get("kind") if isinstance(item, dict) else None
        cls = kinds.get(kind) if isinstance(kind, str) else None
        if cls is None:
            said = "is missing" if kind is None else f"unknown kind {str(kind)[:40]!r}"
            raise TraceError(f"{source}: events[{n}]" + (": should be an object, not " + kind_of(item)
                                                          if not isinstance(item, dict) else f".kind: {said}"))
        events.append(check(schema(cls), item, source, ("events", n), TraceError))
    return events


def decode_json(text: str, source: str, kinds: Mapping[str, type[Any]]) -> list[Any]:
    return decode(parse(text, source, max_bytes=MAX_BYTES, error=TraceError), source, kinds)


def load(path: Path, kinds: Mapping[str, type[Any]]) -> list[Any]:
    return decode(read(path, max_bytes=MAX_BYTES, error=TraceError), str(path), kinds)
