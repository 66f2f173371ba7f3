"""Tolerant parsers for LLM output: they never raise, they report what they had to drop.

Small local models and API models alike answer in many shapes (the paper's tuple lists, JSON lists, JSON objects,
markdown, prose around code fences, broken JSON). The agent must keep going whatever comes back, so every parser
returns its best reading plus warnings, which the trace shows so a person can see why an iteration went wrong.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

import json_repair

from gear.types import SPO

MAX_CHARS = 100_000  # LLM outputs are a few thousand characters; bound the work on pathological input

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)```", re.DOTALL)
# A parenthesised run of quoted items on one line: ("s", "p", "o") or ('s', 'p', 'o'), trailing comma allowed.
# Found by pairing openings with the next closing (bisect) instead of one lazy regex, which is quadratic on input
# such as '("' repeated.
_TUPLE_OPEN = re.compile(r"""\(\s*["']""")
_TUPLE_CLOSE = re.compile(r"""["']\s*,?\s*\)""")
_MAX_TUPLE = 1500
_ITEM_SPLIT = re.compile(r"""(?<=["'])\s*,\s*(?=["'])""")
_KEYS = (("subject", "predicate", "object"), ("s", "p", "o"), ("head", "relation", "tail"), ("h", "r", "t"))
_MARKDOWN = re.compile(r"(\*\*|__|`)")


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Triples read from an LLM answer, and what could not be read."""

    triples: list[SPO] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The termination reasoner's reply (paper §4.2): answerable, its answer, or why not."""

    answerable: bool
    answer: str | None
    reason: str
    warnings: list[str] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)  # numbers of the memory facts the answer rests on (small profile)


def _as_text(text: object) -> tuple[str, list[str]]:
    warnings: list[str] = []
    if text is None:
        return "", warnings
    if not isinstance(text, str):
        text = str(text)
    if len(text) > MAX_CHARS:
        warnings.append(f"output truncated from {len(text)} to {MAX_CHARS} characters before parsing")
        text = text[:MAX_CHARS]
    return text, warnings


def _clean_part(value: object) -> str | None:
    """A triple element as a stripped non-empty string, or None (numbers become strings; containers are refused)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        value = str(value)
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None


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
    parts = [_clean_part(part) for part in item]
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
        consumed = _TUPLE_CLOSE.match(text, close).end()  # type: ignore[union-attr]
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


def _load_json(candidate: str) -> Any:
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


def _json_candidates(text: str) -> list[str]:
    """Fenced blocks first, then the span from the first bracket to the last."""
    candidates = [block for block in _FENCE.findall(text) if block.strip()]
    starts = [i for i in (text.find("["), text.find("{")) if i >= 0]
    if starts:
        start = min(starts)
        end = max(text.rfind("]"), text.rfind("}"))
        candidates.append(text[start : end + 1] if end > start else text[start:])
    return candidates


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
                found, dropped = _collect(value, depth + 1)
                if found:
                    return found, dropped
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
        raw, warnings = _as_text(text)
        if not raw.strip():
            return ParseResult([], [*warnings, "empty output: no triples"])
        triples, dropped = _strict_json_triples(raw)  # a schema-constrained answer: read exactly as JSON
        if not triples and not dropped:
            triples, dropped = _tuples_in(raw)
        if not triples:
            for candidate in _json_candidates(raw):
                found, found_dropped = _collect(_load_json(candidate))
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
    cleaned = [_clean_part(v) for v in values]
    return list(dict.fromkeys(v for v in cleaned if v is not None))


_ENTITIES = re.compile(r"""["']?named_entities["']?\s*:\s*(\[[^\]]*\]?)""", re.IGNORECASE)


def parse_entities(text: object) -> list[str]:
    """The "named_entities" list of the extraction output (empty when absent)."""
    try:
        raw, _ = _as_text(text)
        match = _ENTITIES.search(raw)
        if match:
            return _strings(_load_json(match.group(1)))
        for candidate in _json_candidates(raw):
            data = _load_json(candidate)
            if isinstance(data, dict):
                lowered = {str(k).lower(): v for k, v in data.items()}
                if "named_entities" in lowered:
                    return _strings(lowered["named_entities"])
        return []
    except Exception:
        return []


def _plain(text: str) -> str:
    """Markdown emphasis and code ticks removed."""
    return _MARKDOWN.sub("", text)


_VERDICT = re.compile(r"answerable\s*[:=\-]?\s*[\"']?\s*(yes|no|true|false)\b", re.IGNORECASE)
_ANSWER = re.compile(r"^[\s>*#-]*(?:final\s+)?answer\s*[:：]\s*(.*)$", re.IGNORECASE | re.MULTILINE)
_WHY = re.compile(r"^[\s>*#-]*(?:why|reason)\s*[:：]\s*(.*)", re.IGNORECASE | re.MULTILINE | re.DOTALL)
_LABEL_LINE = re.compile(r"^[\s>*#-]*(answerable|answer|why|reason)\s*[:：]", re.IGNORECASE)


def _label_value(match: re.Match[str] | None, text: str) -> str:
    """The value after a label: the rest of its line, or the next non-empty line if the rest is empty."""
    if match is None:
        return ""
    value = match.group(1).strip()
    if value:
        return value.splitlines()[0].strip() if "\n" in value else value
    following = text[match.end() :].splitlines()
    for line in following:
        if line.strip() and not _LABEL_LINE.match(line):
            return line.strip()
    return ""


def _json_object(raw: str) -> dict[str, Any] | None:
    """The answer as a JSON object (whole, fenced, or the outermost braces), keys lower-cased; None if it is not one."""
    for candidate in (raw, *_json_candidates(raw)):
        data = _load_json(candidate) if candidate is not raw else _strict_json(raw)
        if isinstance(data, dict):
            return {str(k).lower(): v for k, v in data.items()}
    return None


def _strict_json(raw: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _truthy(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("yes", "true", "no", "false"):
        return value.strip().lower() in ("yes", "true")
    return None


def _numbers(value: object) -> list[int]:
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


def _json_verdict(data: dict[str, Any], warnings: list[str]) -> Verdict | None:
    """The small profile's {"answerable", "answer", "facts", "why"} reply, if that is what `data` is."""
    answerable = _truthy(data.get("answerable"))
    if answerable is None:
        return None
    answer = _clean_part(data.get("answer")) if answerable else None
    reason = _clean_part(data.get("why")) or _clean_part(data.get("reason")) or ""
    if answerable and answer is None:
        warnings.append("answerable but no 'answer' given")
    if not answerable and not reason:
        warnings.append("not answerable but no 'why' given")
    cited = _numbers(data.get("facts", [])) if answerable else []
    return Verdict(answerable, answer, reason, warnings, cited)


def parse_reasoning(text: object) -> Verdict:
    """Read the reasoner's reply: the paper's "Answerable: Yes/No", "Answer: …", "Why: …" lines, or the small
    profile's JSON object; anything unclear counts as not answerable, with a warning."""
    try:
        raw, warnings = _as_text(text)
        plain = _plain(raw).strip()
        if not plain:
            return Verdict(False, None, "", [*warnings, "empty reasoning output: treated as not answerable"])
        data = _json_object(raw.strip()) if "{" in raw else None
        verdict_json = _json_verdict(data, warnings) if data is not None else None
        if verdict_json is not None:
            return verdict_json
        verdict = _VERDICT.search(plain)
        if verdict is not None:
            answerable = verdict.group(1).lower() in ("yes", "true")
        else:
            first = re.match(r"\W*(yes|no|true|false)\b", plain, re.IGNORECASE)
            if first is None:
                warnings.append("no 'Answerable: Yes/No' in the reasoning output: treated as not answerable")
                answerable = False
            else:
                warnings.append("no 'Answerable:' label; read the leading yes/no")
                answerable = first.group(1).lower() in ("yes", "true")
        answer = _label_value(_ANSWER.search(plain), plain) or None
        if answer in ("...", "…"):
            answer = None
        why_match = _WHY.search(plain)
        reason = ""
        if why_match is not None:
            lines = []
            for line in why_match.group(1).splitlines():
                if lines and _LABEL_LINE.match(line):
                    break
                lines.append(line.strip())
            reason = " ".join(part for part in lines if part).strip()
        if answerable and answer is None:
            warnings.append("answerable but no 'Answer:' given")
        if not answerable and not reason:
            kept = [line.strip() for line in plain.splitlines() if line.strip() and not _LABEL_LINE.match(line)]
            reason = " ".join(kept)
            if verdict is not None:
                warnings.append("not answerable but no 'Why:' given")
        return Verdict(answerable, answer, reason, warnings)
    except Exception as exc:
        return Verdict(
            False, None, "", [f"could not parse reasoning ({type(exc).__name__}): treated as not answerable"]
        )


_NEXT_LABEL = re.compile(r"(?:next\s+)?question\s*[:：]\s*", re.IGNORECASE)


def _strip_wrapping(text: str) -> str:
    text = _plain(text).strip()
    text = re.sub(r"^[\s>*#-]+", "", text)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def parse_next_question(text: object) -> tuple[str, list[str]]:
    """The rewritten query: the small profile's {"next_question": …}, else after a "Next Question:" label if any,
    the first line (up to its '?' when it has one)."""
    try:
        raw, warnings = _as_text(text)
        data = _json_object(raw.strip()) if "{" in raw else None
        if data is not None:
            value = next((data[k] for k in ("next_question", "next question", "question") if k in data), None)
            cleaned = _clean_part(value)
            if cleaned:
                return cleaned, warnings
        plain = _plain(raw)
        label = re.search(r"next\s+question\s*[:：]\s*", plain, re.IGNORECASE)
        if label is not None:
            plain = plain[label.end() :]
        else:
            plain = _NEXT_LABEL.sub("", plain.lstrip(), count=1) if _NEXT_LABEL.match(plain.lstrip()) else plain
        lines = [_strip_wrapping(line) for line in plain.splitlines()]
        lines = [line for line in lines if line]
        if not lines:
            return "", [*warnings, "empty query rewrite"]
        for line in lines:
            if "?" in line:
                return line[: line.index("?") + 1].strip(), warnings
        warnings.append("rewritten query has no question mark; used its first line")
        return lines[0], warnings
    except Exception as exc:
        return "", [f"could not parse the rewritten query ({type(exc).__name__})"]


def parse_answer(text: object) -> str:
    """The QA answer: after an "Answer:" label if any, first non-empty line, markdown and wrapping quotes removed."""
    try:
        raw, _ = _as_text(text)
        plain = _plain(raw)
        label = re.search(r"answer\s*[:：]\s*", plain, re.IGNORECASE)
        if label is not None:
            plain = plain[label.end() :]
        for line in plain.splitlines():
            cleaned = _strip_wrapping(line)
            if cleaned:
                return cleaned
        return ""
    except Exception:
        return ""


@dataclass(frozen=True, slots=True)
class Thought:
    """One IRCoT reasoning step: the sentence kept (the next query), whether it gives the answer, and the answer."""

    text: str
    final: bool = False
    answer: str = ""
    warnings: list[str] = field(default_factory=list)


_ANSWER_IS = re.compile(r"\banswer\s+is\s*[:：]?\s*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'“(]?[A-Z0-9])")
_THOUGHT_LABEL = re.compile(r"^(?:a|thought|next sentence|answer)\s*[:：]\s*", re.IGNORECASE)


def parse_thought(text: object, earlier: list[str] | tuple[str, ...] = ()) -> Thought:
    """IRCoT keeps one sentence per step: the first sentence not already written (a model that restates the chain
    is read past its repeats). It is final when it says "answer is:"; the answer is the rest of that line (so
    "St. Petersburg" does not stop at "St."), shown in the trace; the run's answer comes from the QA prompt."""
    try:
        raw, warnings = _as_text(text)
        lines = [_THOUGHT_LABEL.sub("", line.strip()) for line in _plain(raw).splitlines() if line.strip()]
        sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(lines)) if s.strip()]
        seen = {_ws(e) for e in earlier}
        fresh = [s for s in sentences if _ws(s) not in seen]
        if not fresh:
            return Thought("", warnings=[*warnings, "no new reasoning sentence"])
        sentence = fresh[0]
        marker = _ANSWER_IS.search(sentence)
        if marker is None:
            return Thought(sentence, warnings=warnings)
        line = next((ln for ln in lines if _ANSWER_IS.search(ln)), sentence)
        answer = _strip_wrapping(_ANSWER_IS.split(line, maxsplit=1)[-1].strip().rstrip(".").strip())
        return Thought(f"{sentence[: marker.end()]}{answer}.", True, answer, warnings)
    except Exception as exc:
        return Thought("", warnings=[f"could not parse the reasoning step ({type(exc).__name__})"])


def _ws(text: str) -> str:
    return " ".join(text.casefold().split())


def parse_kept_facts(text: object, n: int) -> tuple[list[int], list[str]]:
    """The recognition filter's answer: the 1-based numbers of the facts to keep ({"keep": [...]}, or the numbers
    in the text), in the order given, repeats and numbers outside 1…n dropped with a warning."""
    try:
        raw, warnings = _as_text(text)
        data = _json_object(raw.strip()) if "{" in raw else None
        if data is not None and "keep" in data:
            numbers = _numbers(data["keep"])
        else:
            numbers = _numbers(re.findall(r"\d+", raw)[:50])
            if numbers:
                warnings.append("filter answer was not JSON; read the numbers in its text")
        kept = [x for x in dict.fromkeys(numbers) if 1 <= x <= n]
        if len(kept) < len(numbers):
            warnings.append(f"filter named facts outside 1…{n}: dropped")
        return kept, warnings
    except Exception as exc:
        return [], [f"could not parse the filter's answer ({type(exc).__name__})"]
