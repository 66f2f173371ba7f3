"""Offline triple extraction (the paper's offline stage): one LLM call per passage, resumable, observable, cheap.

Each passage is sent with the paper's "Triple Extraction" prompt (Appendix "Offline Prompts", both demonstrations).
Two message styles:

- "paper": the prompt alone, as the paper sends it; the answer is read with the tolerant parsers (gear.parsing).
- "one-shot" (the default): the paper's prompt for its own Demonstration #1 as a first user turn, answered by an
  assistant turn holding that demonstration as valid JSON in the answer's shape (gear.extract.outputs: the paper's
  {"named_entities": [...], "triples": [[s, p, o], ...]}, or the triples alone), then the paper's prompt for the
  passage. Backends that support it get a JSON schema with `maxItems` caps, so the output always parses and
  repetition loops stop (measured in docs/results.md).

Every finished passage is appended to a JSONL journal (flushed and fsynced) keyed by sha256(the shape's prompt
version, message style, schema, model, title, passage text). A killed run therefore resumes with no lost and no
repeated LLM calls, and changing the prompt, the shape or the model invalidates exactly the entries it must. The
journal lives in a work directory beside the index (INDEX_DIR.extract/ by default); `gear index` never touches the
index until extraction has finished.

Each triple is aligned to exactly one passage: the one it was extracted from. Triples that are not three non-empty
strings and duplicates are dropped and counted; optionally (`require_grounded`) triples whose subject and object both
appear nowhere in the passage are dropped too.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from gear.config import STOP_REPEATS
from gear.extract import outputs
from gear.extract.journal import JOURNAL as JOURNAL
from gear.extract.journal import Journal, Record
from gear.extract.outputs import DEMO_PASSAGE, DEMO_TITLE, JOINT, OutputName
from gear.extract.repeats import RepeatGuard, Repeating
from gear.files import atomic_write_json
from gear.llm.base import LLM, LLMError, LLMResult, Message, estimate_tokens
from gear.llm.queue import HEARTBEAT_SECONDS, current_listener, listening
from gear.prompts import extraction_prompt
from gear.types import SPO

Style = Literal["paper", "one-shot"]

PROMPT_VERSION = JOINT.prompt_version  # the paper's answer; each output shape names its own (gear.extract.outputs)
MAX_TRIPLES = 18  # schema cap (measured: 1.5B loops repeat until the cap; MuSiQue passages average ≈10 facts)
MAX_ENTITIES = 12
MAX_TOKENS = 1024
MAX_PART_CHARS = 200  # subject/predicate/object longer than this are run-on sentences, not graph nodes
DEFAULT_OUTPUT: OutputName = "joint"


def extraction_schema(max_triples: int = MAX_TRIPLES, max_entities: int = MAX_ENTITIES,
                      output: OutputName = "joint") -> dict[str, Any]:
    """JSON schema of the answer in the given shape, capped to stop repetition loops."""
    return outputs.get(output).schema(max_triples, max_entities)


def extraction_messages(title: str, passage: str, style: Style = "one-shot", output: OutputName = "joint"
                        ) -> list[Message]:
    """The chat messages sent for one passage (see the module docstring for the two styles)."""
    final = {"role": "user", "content": extraction_prompt(title, passage)}
    if style == "paper":
        return [final]
    return [
        {"role": "user", "content": extraction_prompt(DEMO_TITLE, DEMO_PASSAGE)},
        {"role": "assistant", "content": outputs.get(output).demo_answer()},
        final,
    ]


@dataclass(frozen=True, slots=True)
class ExtractionConfig:
    """What determines an extraction's answer (all of it goes into the journal key) plus how to run it."""

    style: Style = "one-shot"
    use_schema: bool = True
    max_triples: int = MAX_TRIPLES
    max_tokens: int = MAX_TOKENS
    require_grounded: bool = False
    concurrency: int = 1
    output: OutputName = DEFAULT_OUTPUT
    stop_repeats: int = STOP_REPEATS  # stop the model after this many repeated triples in a row (0: never)

    def schema(self) -> dict[str, Any] | None:
        return extraction_schema(self.max_triples, output=self.output) if self.use_schema else None

    def messages(self, title: str, passage: str) -> list[Message]:
        return extraction_messages(title, passage, self.style, self.output)


def passage_key(model: str, title: str, text: str, config: ExtractionConfig) -> str:
    """sha256 of everything that decides the LLM's answer for this passage (the output shape through its prompt
    version and schema; the paper's shape keeps the keys written before the shapes existed). Stopping a loop
    (stop_repeats) is not part of it: it shortens what is written, not the triples read from it."""
    payload = {
        "prompt": outputs.get(config.output).prompt_version,
        "style": config.style,
        "schema": config.schema(),
        "max_tokens": config.max_tokens,
        "model": model,
        "title": title,
        "text": text,
    }
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------------------- cleaning

_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def grounded(entity: str, passage_words: set[str]) -> bool:
    """Whether an entity shares at least one word with the passage (titles count as part of the passage)."""
    words = _words(entity)
    return bool(words) and bool(words & passage_words)


@dataclass
class CleanStats:
    malformed: int = 0
    duplicates: int = 0
    too_long: int = 0
    ungrounded: int = 0

    def add(self, other: CleanStats) -> None:
        self.malformed += other.malformed
        self.duplicates += other.duplicates
        self.too_long += other.too_long
        self.ungrounded += other.ungrounded


_DROPPED = re.compile(r"dropped (\d+) item")
_DUPES = re.compile(r"removed (\d+) duplicate")


def parse_extraction(text: object, title: str = "", passage: str = "", *, require_grounded: bool = False,
                     output: OutputName = "joint") -> tuple[list[SPO], list[str], CleanStats, list[str]]:
    """Triples and named entities from one LLM answer in the given shape, with drop counts and warnings. Never
    raises."""
    stats = CleanStats()
    try:
        found, entities, warnings = outputs.get(output).read(text)
        for warning in warnings:
            if m := _DROPPED.search(warning):
                stats.malformed += int(m.group(1))
            if m := _DUPES.search(warning):
                stats.duplicates += int(m.group(1))
        words = _words(f"{title} {passage}") if require_grounded else set()
        triples: list[SPO] = []
        seen: set[tuple[str, str, str]] = set()
        for s, p, o in found:
            if max(len(s), len(p), len(o)) > MAX_PART_CHARS:
                stats.too_long += 1
                continue
            key = (s.casefold(), p.casefold(), o.casefold())
            if key in seen:
                stats.duplicates += 1
                continue
            if require_grounded and not (grounded(s, words) or grounded(o, words)):
                stats.ungrounded += 1
                continue
            seen.add(key)
            triples.append((s, p, o))
        if output != "joint":
            entities = outputs.entities_of(triples)  # what was dropped above is no entity of the graph either
        return triples, entities, stats, warnings
    except Exception as exc:  # contract: never raise on model output
        return [], [], stats, [f"could not parse extraction ({type(exc).__name__})"]


# ------------------------------------------------------------------------------------------------------------ runner


@dataclass
class ExtractionResult:
    """Per-passage triples (aligned to the input order) and the run's accounting."""

    triples: list[list[SPO]]
    entities: list[list[str]]
    records: list[Record | None]
    calls: int = 0
    reused: int = 0
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    llm_seconds: float = 0.0
    dropped: CleanStats = field(default_factory=CleanStats)
    errors: list[str] = field(default_factory=list)

    @property
    def n_triples(self) -> int:
        return sum(len(t) for t in self.triples)

    def info(self, model: str, config: ExtractionConfig) -> dict[str, Any]:
        """What `gear info` shows and the manifest keeps under "extraction"."""
        done = [r for r in self.records if r is not None]
        return {
            "method": "llm",
            "model": model,
            "prompt": outputs.get(config.output).prompt_version,
            "output": config.output,
            "stop_repeats": config.stop_repeats,
            "style": config.style,
            "json_schema": config.use_schema,
            "max_triples": config.max_triples,
            "require_grounded": config.require_grounded,
            "passages": len(self.records),
            "extracted": len(done),
            "failed": self.failed,
            "llm_calls_this_run": self.calls,
            "reused_from_journal": self.reused,
            "triples": self.n_triples,
            "prompt_tokens": sum(r.prompt_tokens for r in done),
            "completion_tokens": sum(r.completion_tokens for r in done),
            "llm_seconds": round(sum(r.seconds for r in done), 2),
            "dropped": asdict(self.dropped),
        }


ExtractionProgress = Callable[["ExtractionResult", int, int], None]  # (result so far, done, total)


def extract_one(llm: LLM, title: str, text: str, config: ExtractionConfig, key: str | None = None,
                on_text: Callable[[str], None] | None = None) -> Record:
    """Call the LLM for one passage and clean its answer (LLMError propagates); `on_text` hears the answer as it is
    written. The answer is always streamed, so a repetition loop is stopped as it starts (config.stop_repeats)."""
    messages = config.messages(title, text)
    listener = RepeatGuard(config.stop_repeats, on_text) if config.stop_repeats else on_text
    started = time.perf_counter()
    try:
        result: LLMResult = llm.complete(messages, json_schema=config.schema(), max_tokens=config.max_tokens,
                                         on_text=listener)
    except Repeating as loop:  # stopped mid-loop (gear.extract.repeats): the answer is what was written
        result = LLMResult(loop.text, estimate_tokens("\n".join(m["content"] for m in messages)), loop.pieces,
                           time.perf_counter() - started, llm.model)
    triples, entities, stats, _ = parse_extraction(result.text, title, text, require_grounded=config.require_grounded,
                                                   output=config.output)
    return Record(
        key=key or passage_key(llm.model, title, text, config), title=title, text=text, raw=result.text,
        triples=triples, entities=entities, prompt_tokens=result.prompt_tokens,
        completion_tokens=result.completion_tokens, seconds=round(result.seconds, 4), model=result.model or llm.model,
        dropped={k: v for k, v in asdict(stats).items() if v},
    )


def extract_passages(
    passages: Sequence[tuple[str, str]],
    llm: LLM,
    work_dir: Path,
    config: ExtractionConfig | None = None,
    *,
    progress: ExtractionProgress | None = None,
    stop_on_error: bool = False,
    on_text: Callable[[str], None] | None = None,
) -> ExtractionResult:
    """Extract triples for (title, text) passages, reusing and extending the journal in `work_dir`.

    Passages already in the journal cost no LLM call. Identical passages are extracted once. With concurrency > 1 the
    calls run in a thread pool (remote endpoints); results are journaled as each completes. A failing passage
    (LLMError) is counted and left without triples (it is retried on the next run) unless `stop_on_error`.
    `on_text` hears each answer as the model writes it, in the caller's thread, so only when calls run one at a time
    (the app shows it, and a Cancel stops a run there instead of after the passage).
    """
    config = config or ExtractionConfig()
    with work_dir_lock(Path(work_dir)):
        return _extract_locked(passages, llm, Path(work_dir), config, progress, stop_on_error, on_text)


@contextmanager
def work_dir_lock(work_dir: Path) -> Iterator[None]:
    """One run per work directory: a second concurrent run would interleave and truncate the journal."""
    work_dir.mkdir(parents=True, exist_ok=True)
    handle = (work_dir / ".lock").open("a")
    try:
        try:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # pragma: no cover - not POSIX: no lock
            pass
        except OSError:
            raise LLMError(f"another extraction is running in {work_dir}; wait for it or use another work "
                           f"directory") from None
        yield
    finally:
        handle.close()


class _Batch:
    """One extraction run's bookkeeping: which passages share a journal key, what is done, and the result so far."""

    def __init__(self, passages: Sequence[tuple[str, str]], llm: LLM, config: ExtractionConfig,
                 progress: ExtractionProgress | None, stop_on_error: bool) -> None:
        self.passages, self.llm, self.config = passages, llm, config
        self.progress, self.stop_on_error = progress, stop_on_error
        self.positions: dict[str, list[int]] = {}
        for i, (title, text) in enumerate(passages):
            self.positions.setdefault(passage_key(llm.model, title, text, config), []).append(i)
        self.result = ExtractionResult([[] for _ in passages], [[] for _ in passages], [None] * len(passages))
        self.done = 0

    def report(self) -> None:
        if self.progress:
            self.progress(self.result, self.done, len(self.passages))

    def place(self, record: Record) -> None:
        result = self.result
        for i in self.positions[record.key]:
            result.triples[i] = list(record.triples)
            result.entities[i] = list(record.entities)
            result.records[i] = record
            self.done += 1
        result.prompt_tokens += record.prompt_tokens
        result.completion_tokens += record.completion_tokens
        for name, value in record.dropped.items():
            setattr(result.dropped, name, getattr(result.dropped, name, 0) + value)

    def call(self, key: str, on_text: Callable[[str], None] | None = None) -> Record:
        title, text = self.passages[self.positions[key][0]]
        return extract_one(self.llm, title, text, self.config, key, on_text)

    def finish(self, key: str, outcome: Callable[[], Record], journal: Journal) -> None:
        """Journal and place one finished call; a failed one is counted (and retried on the next run)."""
        try:
            record = outcome()
        except LLMError as exc:
            self.result.failed += len(self.positions[key])
            self.result.errors.append(f"{self.passages[self.positions[key][0]][0]!r}: {exc}")
            if self.stop_on_error:
                raise
            self.done += len(self.positions[key])
            return
        journal.append(record)
        self.result.calls += 1
        self.result.llm_seconds += record.seconds
        self.place(record)


def _extract_locked(passages: Sequence[tuple[str, str]], llm: LLM, work_dir: Path, config: ExtractionConfig,
                    progress: ExtractionProgress | None, stop_on_error: bool,
                    on_text: Callable[[str], None] | None = None) -> ExtractionResult:
    journal = Journal(work_dir)
    batch = _Batch(passages, llm, config, progress, stop_on_error)
    started = time.perf_counter()
    todo: list[str] = []
    for key in batch.positions:
        record = journal.get(key)
        if record is None:
            todo.append(key)
        else:
            batch.place(record)
            batch.result.reused += 1
    batch.report()
    if config.concurrency <= 1:
        for key in todo:
            batch.finish(key, partial(batch.call, key, on_text), journal)
            batch.report()
    else:
        _extract_pooled(batch, todo, journal)
    batch.result.seconds = time.perf_counter() - started
    return batch.result


class _Stopped(Exception):  # a signal to the pool's calls, not an error
    """The run was stopped (Cancel, Ctrl-C): raised inside the calls still in flight so they hang up on the model."""


def _extract_pooled(batch: _Batch, todo: list[str], journal: Journal) -> None:
    """Calls in a thread pool (remote endpoints, a server with several slots), at most 2 × concurrency queued; each
    result journaled as it lands. While waiting, the caller's thread hears the queue's listener as a heartbeat (the
    app can stop a cancelled run there), and a stop ends the calls in flight too: each runs under a listener that
    raises once the run is stopped, and its client hangs up on the model (gear.llm.openai_client)."""
    concurrency = batch.config.concurrency
    stopped = threading.Event()
    heartbeat = current_listener()

    def check(_: object = None) -> None:
        if stopped.is_set():
            raise _Stopped

    def call(key: str) -> Record:
        with listening(check):
            return batch.call(key, check)

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="gear-extract") as pool:
        pending: dict[Future[Record], str] = {}
        queue = list(reversed(todo))
        try:
            while queue or pending:
                while queue and len(pending) < concurrency * 2:
                    key = queue.pop()
                    pending[pool.submit(call, key)] = key
                finished, _ = wait(pending, timeout=HEARTBEAT_SECONDS, return_when=FIRST_COMPLETED)
                if not finished and heartbeat is not None:
                    heartbeat(0)
                for future in finished:
                    batch.finish(pending.pop(future), future.result, journal)
                    batch.report()
        except BaseException:
            stopped.set()
            for future in pending:
                future.cancel()
            raise


def estimate_prompt_tokens(passages: Iterable[tuple[str, str]], config: ExtractionConfig) -> int:
    """Prompt tokens of a run (≈4 characters per token), for cost estimates before any call."""
    total = 0
    for title, text in passages:
        total += sum(len(m["content"]) for m in config.messages(title, text)) // 4 + 8
    return total


def openie_document(title: str, text: str, entities: Sequence[str], triples: Sequence[SPO]) -> dict[str, Any]:
    """One record of HippoRAG's OpenIE format."""
    return {
        "title": title,
        "text": text,
        "passage": f"{title}\n{text}",
        "extracted_entities": list(entities),
        "extracted_triples": [list(t) for t in triples],
    }


def write_openie(path: Path, documents: Sequence[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
    """Write {"docs": [...]} atomically (plus optional metadata keys HippoRAG ignores)."""
    payload: dict[str, Any] = {"docs": list(documents)}
    if meta:
        payload.update({k: v for k, v in meta.items() if k != "docs"})
    atomic_write_json(path, payload, indent=1)
