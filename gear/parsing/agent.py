"""The agent's replies: the termination reasoner's verdict (the paper's labelled lines or the small profile's JSON),
the rewritten query, and the final answer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gear.parsing.text import as_text, clean_part, json_object, numbers, strip_wrapping, truthy, without_markdown


@dataclass(frozen=True, slots=True)
class Verdict:
    """The termination reasoner's reply (paper §4.2): answerable, its answer, or why not."""

    answerable: bool
    answer: str | None
    reason: str
    warnings: list[str] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)  # numbers of the memory facts the answer rests on (small profile)


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


def _json_verdict(data: dict[str, Any], warnings: list[str]) -> Verdict | None:
    """The small profile's {"answerable", "answer", "facts", "why"} reply, if that is what `data` is."""
    answerable = truthy(data.get("answerable"))
    if answerable is None:
        return None
    answer = clean_part(data.get("answer")) if answerable else None
    reason = clean_part(data.get("why")) or clean_part(data.get("reason")) or ""
    if answerable and answer is None:
        warnings.append("answerable but no 'answer' given")
    if not answerable and not reason:
        warnings.append("not answerable but no 'why' given")
    cited = numbers(data.get("facts", [])) if answerable else []
    return Verdict(answerable, answer, reason, warnings, cited)


def parse_reasoning(text: object) -> Verdict:
    """Read the reasoner's reply: the paper's "Answerable: Yes/No", "Answer: …", "Why: …" lines, or the small
    profile's JSON object; anything unclear counts as not answerable, with a warning."""
    try:
        raw, warnings = as_text(text)
        plain = without_markdown(raw).strip()
        if not plain:
            return Verdict(False, None, "", [*warnings, "empty reasoning output: treated as not answerable"])
        data = json_object(raw.strip()) if "{" in raw else None
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
            lines: list[str] = []
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


def parse_next_question(text: object) -> tuple[str, list[str]]:
    """The rewritten query: the small profile's {"next_question": …}, else after a "Next Question:" label if any,
    the first line (up to its '?' when it has one)."""
    try:
        raw, warnings = as_text(text)
        data = json_object(raw.strip()) if "{" in raw else None
        if data is not None:
            value = next((data[k] for k in ("next_question", "next question", "question") if k in data), None)
            cleaned = clean_part(value)
            if cleaned:
                return cleaned, warnings
        plain = without_markdown(raw)
        label = re.search(r"next\s+question\s*[:：]\s*", plain, re.IGNORECASE)
        if label is not None:
            plain = plain[label.end() :]
        else:
            plain = _NEXT_LABEL.sub("", plain.lstrip(), count=1) if _NEXT_LABEL.match(plain.lstrip()) else plain
        lines = [strip_wrapping(line) for line in plain.splitlines()]
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
        raw, _ = as_text(text)
        plain = without_markdown(raw)
        label = re.search(r"answer\s*[:：]\s*", plain, re.IGNORECASE)
        if label is not None:
            plain = plain[label.end() :]
        for line in plain.splitlines():
            cleaned = strip_wrapping(line)
            if cleaned:
                return cleaned
        return ""
    except Exception:
        return ""
