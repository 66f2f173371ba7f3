"""Triples from an LLM answer (the paper's tuple lists, JSON lists or objects, markdown, broken JSON) and the
named entities of OpenIE's first step."""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from gear.parsing.text import as_text, clean_part, json_candidates, load_json
from gear.types import SPO

# A parenthesised run of quoted items on one line: ("s", "p", "o") or ('s', 'p', 'o'), trailing comma allowed.
# Found by pairing openings with the next closing (bisect) instead of one lazy regex, which is quadratic on input
# such as '("' repeated.
_TUPLE_OPEN = re.compile(r"""\(\s*["']""")
_TUPLE_CLOSE = re.compile(r"""["']\s*,?\s*\)""")
_MAX_TUPLE = 1500
_ITEM_SPLIT = re.compile(r"""(?<=["'])\s*,\s*(?=["'])""")
_KEYS = (("subject", "predicate", "object"), ("s", "p", "o"), ("head", "relation", "tail"), ("h", "r", "t"))


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Triples read from an LLM answer, and what could not be read."""

    triples: list[SPO] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _to_triple(item: object) -> SPO | None:
    if isinstance(item, dict):
        lowered = {str(k).lower(): v for k, v in item.items()}
        for keys in _KEYS:
            if all(k in lowered for k in keys):
                item = [lowered[k] for k in keys]
                break
        else:
            return None
    if not isinstance(item, list | tuple) or len(item) != 3:
        return None
    parts = [clean_part(part) for part in item]
    if any(part is None for part in parts):
        return None
    return (str(parts[0]), str(parts[1]), str(parts[2]))


def _unquote(item: str) -> str:
    item = item.strip()
    if len(item) >= 2 and item[0] in "\"'" and item[-1] in "\"'":
        item = item[1:-1]
    return item.replace('\\"', '"').replace("\\'", "'")


def _tuple_bodies(text: str) -> list[str]:
    """The quoted runs inside ( ... ) on one line, left to right, not overlapping (same as a lazy regex would find)."""
    closes = [m.start() for m in _TUPLE_CLOSE.finditer(text)]
    bodies: list[str] = []
    consumed = 0
    for opening in _TUPLE_OPEN.finditer(text):
        if opening.start() < consumed:
            continue
        quote = opening.end() - 1
        index = bisect.bisect_right(closes, quote)
        if index == len(closes):
            break
        close = closes[index]
        if close - quote > _MAX_TUPLE or "\n" in text[quote:close]:
            continue
        bodies.append(text[quote : close + 1])
        closing = _TUPLE_CLOSE.match(text, close)  # closes[] are where this pattern matches
        consumed = closing.end() if closing is not None else close + 1
    return bodies


def _tuples_in(text: str) -> tuple[list[SPO], int]:
    """Tuples written in the paper's ("s", "p", "o") style anywhere in the text; also counts malformed ones."""
    found: list[SPO] = []
    dropped = 0
    for body in _tuple_bodies(text):
        items = [_unquote(part) for part in _ITEM_SPLIT.split(body)]
        if len(items) < 2:
            continue  # a parenthesised quotation in prose, not an attempted triple
        triple = _to_triple(items)
        if triple is None:
            dropped += 1
        else:
            found.append(triple)
    return found, dropped


def _collect(data: object, depth: int = 0) -> tuple[list[SPO], int]:
    """Walk a parsed JSON value for triples in any of the accepted shapes."""
    if depth > 6:
        return [], 0
    if isinstance(data, dict):
        lowered = {str(k).lower(): v for k, v in data.items()}
        if "triples" in lowered:
            return _collect(lowered["triples"], depth + 1)
        triple = _to_triple(data)
        if triple is not None:
            return [triple], 0
        for value in data.values():  # e.g. {"facts": [...]}
            if isinstance(value, list):
                inner, dropped = _collect(value, depth + 1)
                if inner:
                    return inner, dropped
        return [], 0
    if not isinstance(data, list):
        return [], 0
    if len(data) == 3 and all(not isinstance(x, list | dict) for x in data):
        triple = _to_triple(data)  # a bare single triple ["s", "p", "o"]
        return ([triple], 0) if triple is not None else ([], 1)
    found: list[SPO] = []
    dropped = 0
    for item in data:
        triple = _to_triple(item)
        if triple is not None:
            found.append(triple)
        elif isinstance(item, list) and item and all(isinstance(x, list | dict) for x in item):
            inner, inner_dropped = _collect(item, depth + 1)
            found.extend(inner)
            dropped += inner_dropped
        else:
            dropped += 1
    return found, dropped


def _dedupe(triples: list[SPO]) -> list[SPO]:
    return list(dict.fromkeys(triples))


def _strict_json_triples(raw: str) -> tuple[list[SPO], int]:
    """Triples when the whole answer is valid JSON: the tuple scan must not read brackets inside JSON strings."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return [], 0
    return _collect(data)


def parse_triples(text: object) -> ParseResult:
    """Triples from an LLM answer in any common shape; malformed items are dropped and counted in warnings."""
    try:
        raw, warnings = as_text(text)
        if not raw.strip():
            return ParseResult([], [*warnings, "empty output: no triples"])
        triples, dropped = _strict_json_triples(raw)  # a schema-constrained answer: read exactly as JSON
        if not triples and not dropped:
            triples, dropped = _tuples_in(raw)
        if not triples:
            for candidate in json_candidates(raw):
                found, found_dropped = _collect(load_json(candidate))
                if found:
                    triples, dropped = found, found_dropped
                    break
                dropped = max(dropped, found_dropped)
        unique = _dedupe(triples)
        if dropped:
            warnings.append(f"dropped {dropped} item(s) that were not 3 non-empty strings")
        if len(unique) < len(triples):
            warnings.append(f"removed {len(triples) - len(unique)} duplicate triple(s)")
        if not unique:
            warnings.append("no triples found in the output")
        return ParseResult(unique, warnings)
    except Exception as exc:  # the contract is "never raise": report instead
        return ParseResult([], [f"could not parse triples ({type(exc).__name__})"])


def _strings(values: object) -> list[str]:
    if not isinstance(values, list):
        return []
    cleaned = [clean_part(v) for v in values]
    return list(dict.fromkeys(v for v in cleaned if v is not None))


_ENTITIES = re.compile(r"""["']?named_entities["']?\s*:\s*(\[[^\]]*\]?)""", re.IGNORECASE)


def parse_entities(text: object) -> list[str]:
    """The "named_entities" list of the extraction output (empty when absent)."""
    try:
        raw, _ = as_text(text)
        match = _ENTITIES.search(raw)
        if match:
            return _strings(load_json(match.group(1)))
        for candidate in json_candidates(raw):
            data = load_json(candidate)
            if isinstance(data, dict):
                lowered = {str(k).lower(): v for k, v in data.items()}
                if "named_entities" in lowered:
                    return _strings(lowered["named_entities"])
        return []
    except Exception:
        return []
