"""What every parser of LLM output shares: bounding the input, finding JSON in prose or code fences and repairing
it, plain text without markdown, numbers and yes/no read loosely. Nothing here raises on bad input."""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

MAX_CHARS = 100_000  # LLM outputs are a few thousand characters; bound the work on pathological input
FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)
MARKDOWN = re.compile(r"(\*\*|__|`)")


def as_text(text: object) -> tuple[str, list[str]]:
    warnings: list[str] = []
    if text is None:
        return "", warnings
    if not isinstance(text, str):
        text = str(text)
    if len(text) > MAX_CHARS:
        warnings.append(f"output truncated from {len(text)} to {MAX_CHARS} characters before parsing")
        text = text[:MAX_CHARS]
    return text, warnings


def load_json(candidate: str) -> Any:
    candidate = candidate.strip()
    if not candidate:
        return None
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):
        pass
    try:
        return json_repair.loads(candidate)
    except Exception:  # json_repair is best-effort; any failure means "no JSON here"
        return None


def json_candidates(text: str) -> list[str]:
    """Fenced blocks first, then the span from the first bracket to the last."""
    candidates = [block for block in FENCE.findall(text) if block.strip()]
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(text.rfind("]"), text.rfind("}"))
        candidates.append(text[start : end + 1] if end > start else text[start:])
    return candidates


def without_markdown(text: str) -> str:
    """Markdown emphasis and code ticks removed."""
    return MARKDOWN.sub("", text)


def json_object(raw: str) -> dict[str, Any] | None:
    """The answer as a JSON object (whole, fenced, or the outermost braces), keys lower-cased; None if it is not one."""
    for candidate in (raw, *json_candidates(raw)):
        data = load_json(candidate) if candidate is not raw else strict_json(raw)
        if isinstance(data, dict):
            return {str(k).lower(): v for k, v in data.items()}
    return None


def strict_json(raw: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def truthy(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "true", "no", "false"):
        return value.strip().lower() in ("yes", "true")
    return None


def numbers(value: object) -> list[int]:
    items = value if isinstance(value, list) else [value]
    found: list[int] = []
    for item in items:
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            found.append(item)
        elif isinstance(item, float) and item.is_integer():
            found.append(int(item))
        elif isinstance(item, str):
            found.extend(int(x) for x in re.findall(r"\d+", item)[:20])
    return list(dict.fromkeys(found))


def strip_wrapping(text: str) -> str:
    text = without_markdown(text).strip()
    text = re.sub(r"^[\s>*#-]+", "", text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def collapse_ws(text: str) -> str:
    return " ".join(text.casefold().split())


def clean_part(value: object) -> str | None:
    """A triple element as a stripped non-empty string, or None (numbers become strings; containers are refused)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None
