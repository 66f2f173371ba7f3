"""Decoding a saved trace: the checked decoder (gear.trace.schema: size and nesting before the parse, then every
field's type and range) beside the unchecked one it replaced, on the very same files in the same run.

    .venv/bin/python bench/trace_decode.py [TRACE …] [--repeat 30]

Default files: the largest bundled traces (assets/traces/, docs/evals/*/traces/). Per file: the median time of
`Trace.load` (read, parse, decode) with each decoder, and their ratio. The reference is the decoder before the strict
schemas, kept here verbatim (`old_load`): it read any size, any nesting, and checked no scalar's type. Every app page
and every replay test decodes traces, so the ratio must stay small. One measurement per line, `name value unit`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
import types
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gear.events import Event  # noqa: E402
from gear.trace import EVENT_TYPES, Trace, TraceError  # noqa: E402


def _old_decode(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        if value is None:
            return None
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        return _old_decode(inner[0], value)
    if origin is list:
        (arg,) = typing.get_args(tp)
        return [_old_decode(arg, v) for v in value]
    if origin is dict:
        return dict(value)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        return tp(**{k: _old_decode(hints[k], v) for k, v in value.items() if k in names})
    if tp is float and isinstance(value, int):
        return float(value)
    return value


def old_load(path: Path) -> list[Event]:
    """Trace.load as it was: read, json.loads, and the reflective decoder above."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != "gear-trace":
        raise TraceError(f"{path}: not a GeAR trace")
    events: list[Event] = []
    for raw in data.get("events", []):
        etype = EVENT_TYPES[raw["kind"]]
        events.append(_old_decode(etype, {k: v for k, v in raw.items() if k != "kind"}))
    return events


def largest(n: int = 3) -> list[Path]:
    files = [*(ROOT / "assets" / "traces").glob("*.json"), *(ROOT / "docs" / "evals").glob("*/traces/*.json")]
    return sorted(files, key=lambda p: p.stat().st_size, reverse=True)[:n]


def median_ms(fn: Any, path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn(path)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    files = args.traces or largest()
    for path in files:  # the same events from both decoders, and each schema made once before timing
        assert Trace.load(path).events == old_load(path), path
    for path in files:
        new, old = median_ms(Trace.load, path, args.repeat), median_ms(old_load, path, args.repeat)
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{name}: {path.stat().st_size / 1e3:.0f} kB, {len(old_load(path))} events")
        print(f"decode_checked_ms {new:.2f} ms")
        print(f"decode_old_ms {old:.2f} ms")
        print(f"ratio checked/old {new / old:.2f} x")


if __name__ == "__main__":
    main()
