"""The peers' replies: IRCoT's next reasoning sentence and the PPR recognition filter's kept facts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gear.parsing.text import as_text, collapse_ws, json_object, numbers, strip_wrapping, without_markdown


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
        raw, warnings = as_text(text)
        lines = [_THOUGHT_LABEL.sub("", line.strip()) for line in without_markdown(raw).splitlines() if line.strip()]
        sentences = [s.strip() for s in _SENTENCE_END.split(" ".join(lines)) if s.strip()]
        seen = {collapse_ws(e) for e in earlier}
        fresh = [s for s in sentences if collapse_ws(s) not in seen]
        if not fresh:
            return Thought("", warnings=[*warnings, "no new reasoning sentence"])
        sentence = fresh[0]
        marker = _ANSWER_IS.search(sentence)
        if marker is None:
            return Thought(sentence, warnings=warnings)
        line = next((ln for ln in lines if _ANSWER_IS.search(ln)), sentence)
        answer = strip_wrapping(_ANSWER_IS.split(line, maxsplit=1)[-1].strip().rstrip(".").strip())
        return Thought(f"{sentence[: marker.end()]}{answer}.", True, answer, warnings)
    except Exception as exc:
        return Thought("", warnings=[f"could not parse the reasoning step ({type(exc).__name__})"])


def parse_kept_facts(text: object, n: int) -> tuple[list[int], list[str]]:
    """The recognition filter's answer: the 1-based numbers of the facts to keep ({"keep": [...]}, or the numbers
    in the text), in the order given, repeats and numbers outside 1…n dropped with a warning."""
    try:
        raw, warnings = as_text(text)
        data = json_object(raw.strip()) if "{" in raw else None
        if data is not None and "keep" in data:
            named = numbers(data["keep"])
        else:
            named = numbers(re.findall(r"\d+", raw)[:50])
            if named:
                warnings.append("filter answer was not JSON; read the numbers in its text")
        kept = [x for x in dict.fromkeys(named) if 1 <= x <= n]
        if len(kept) < len(named):
            warnings.append(f"filter named facts outside 1…{n}: dropped")
        return kept, warnings
    except Exception as exc:
        return [], [f"could not parse the filter's answer ({type(exc).__name__})"]
