"""The extraction journal: an append-only JSONL of finished passages in the work directory, each line flushed and
fsynced, so a killed extraction run resumes with no lost and no repeated LLM calls."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gear.types import SPO

JOURNAL = "extractions.jsonl"


@dataclass
class Record:
    """One finished passage as stored in the journal."""

    key: str
    title: str
    text: str
    raw: str
    triples: list[SPO]
    entities: list[str]
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    model: str
    dropped: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> str:
        data = asdict(self)
        data["triples"] = [list(t) for t in self.triples]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Record | None:
        try:
            data = json.loads(line)
            triples = [(str(t[0]), str(t[1]), str(t[2])) for t in data["triples"]
                       if isinstance(t, list) and len(t) == 3]
            return cls(
                key=str(data["key"]), title=str(data["title"]), text=str(data["text"]), raw=str(data.get("raw", "")),
                triples=triples,
                entities=[str(e) for e in data.get("entities", [])],
                prompt_tokens=int(data.get("prompt_tokens", 0)),
                completion_tokens=int(data.get("completion_tokens", 0)),
                seconds=float(data.get("seconds", 0.0)), model=str(data.get("model", "")),
                dropped={str(k): int(v) for k, v in (data.get("dropped") or {}).items()}, error=data.get("error"),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


class Journal:
    """Append-only JSONL of finished passages; each line is flushed and fsynced before the passage counts as done.

    A line cut short by a kill (no trailing newline, invalid JSON) is ignored on load and overwritten by the next
    append, so the file never accumulates garbage.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / JOURNAL
        self._lock = threading.Lock()
        self.records: dict[str, Record] = {}
        self.corrupt_lines = 0
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        good_end = 0
        position = 0
        for raw_line in data.splitlines(keepends=True):
            position += len(raw_line)
            if not raw_line.endswith(b"\n"):
                break  # torn last line from a kill: truncated away below
            record = Record.from_json(raw_line.decode("utf-8", errors="replace"))
            if record is None:
                self.corrupt_lines += 1
            elif record.error is None:
                self.records[record.key] = record
            good_end = position
        if good_end < len(data):
            with self.path.open("r+b") as handle:
                handle.truncate(good_end)
                handle.flush()
                os.fsync(handle.fileno())

    def get(self, key: str) -> Record | None:
        return self.records.get(key)

    def append(self, record: Record) -> None:
        line = (record.to_json() + "\n").encode("utf-8")
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            if record.error is None:
                self.records[record.key] = record
