"""What the model writes for one passage: the shapes of the extraction answer, each a named object, registered once.

Extraction on a local model is bound by writing (≈280 tokens of JSON a passage at ≈20–30 tokens/s on 2 cores; the
prompt's one-shot head is read once and kept in the server's cache). The paper's answer is a JSON dict with a named
entity list and a triple list ("joint"). Nothing in the index reads the entity list — the graph's entities are the
triples' heads and tails — so the other shapes write only the triples, and the entity list is derived from them (heads
and tails in order of first appearance) for HippoRAG's OpenIE export:

- "joint": the paper's {"named_entities": [...], "triples": [[s, p, o], ...]};
- "triples": {"triples": [[s, p, o], ...]} written without spaces between items;
- "grouped": the triples grouped by subject, {"s": [[p, o], ...], ...}, written without spaces: a subject that has
  several facts is written once.

Each shape names its own prompt version (part of the extraction journal's key), so switching shapes re-extracts
exactly the passages it must, and "joint" keeps the key journals written before the shapes existed. The user turns are
the paper's "Triple Extraction" prompt, verbatim, in every shape; a shape changes only the one-shot assistant turn
(the paper's Demonstration #1 answered in that shape) and the JSON schema the server holds the answer to. What each
costs and buys is measured by bench/extraction_outputs.py (docs/results.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from gear.parsing import parse_entities, parse_triples
from gear.parsing.text import as_text, clean_part, json_candidates, load_json
from gear.types import SPO

OutputName = Literal["joint", "triples", "grouped"]

# The paper's Demonstration #1 (Magic Johnson), written as valid JSON; the one-shot assistant turn of every shape.
DEMO_TITLE = "Magic Johnson"
DEMO_PASSAGE = (
    'After winning a national championship with Michigan State in 1979, Johnson was selected first overall in the 1979 '
    'NBA draft by the Lakers, leading the team to five NBA championships during their "Showtime" era.'
)
DEMO_ENTITIES = [
    "Michigan State", "national championship", "1979", "Magic Johnson", "National Basketball Association",
    "Los Angeles Lakers", "NBA Championship",
]
DEMO_TRIPLES: list[SPO] = [
    ("Magic Johnson", "member of sports team", "Michigan State"),
    ("Michigan State", "award", "national championship"),
    ("Michigan State", "award date", "1979"),
    ("Magic Johnson", "draft pick number", "1"),
    ("Magic Johnson", "drafted in", "1979"),
    ("Magic Johnson", "drafted by", "Los Angeles Lakers"),
    ("Magic Johnson", "member of sports team", "Los Angeles Lakers"),
    ("Magic Johnson", "league", "National Basketball Association"),
    ("Los Angeles Lakers", "league", "National Basketball Association"),
    ("Los Angeles Lakers", "award received", "NBA Championship"),
]
COMPACT = (",", ":")  # JSON separators without spaces: ≈17 % fewer tokens for the same triples


def entities_of(triples: list[SPO]) -> list[str]:
    """The graph's entities, as the index sees them: heads and tails in order of first appearance."""
    return list(dict.fromkeys(part for s, _, o in triples for part in (s, o)))


def _triple_list_schema(max_triples: int, width: int) -> dict[str, Any]:
    return {"type": "array", "maxItems": max_triples,
            "items": {"type": "array", "items": {"type": "string"}, "minItems": width, "maxItems": width}}


@dataclass(frozen=True, slots=True)
class Output:
    """One shape of the extraction answer: its name, its prompt version (journal key) and how it is written, held
    and read."""

    name: OutputName
    prompt_version: str
    label: str  # what the model writes, in words ("triples only"), for the Index page and `gear index`

    def demo_answer(self) -> str:
        """Demonstration #1's answer in this shape: the one-shot assistant turn."""
        if self.name == "joint":
            return json.dumps({"named_entities": DEMO_ENTITIES, "triples": [list(t) for t in DEMO_TRIPLES]},
                              ensure_ascii=False)
        if self.name == "triples":
            return json.dumps({"triples": [list(t) for t in DEMO_TRIPLES]}, ensure_ascii=False, separators=COMPACT)
        return json.dumps(group(DEMO_TRIPLES), ensure_ascii=False, separators=COMPACT)

    def schema(self, max_triples: int, max_entities: int) -> dict[str, Any]:
        """The JSON schema the server holds the answer to; the caps stop a small model's repetition loops."""
        if self.name == "joint":
            return {"type": "object",
                    "properties": {"named_entities": {"type": "array", "items": {"type": "string"},
                                                      "maxItems": max_entities},
                                   "triples": _triple_list_schema(max_triples, 3)},
                    "required": ["named_entities", "triples"]}
        if self.name == "triples":
            return {"type": "object", "properties": {"triples": _triple_list_schema(max_triples, 3)},
                    "required": ["triples"]}
        # grouped: a subject's facts are capped; the number of subjects is bounded by the answer's max_tokens
        return {"type": "object", "additionalProperties": _triple_list_schema(max_triples, 2)}

    def read(self, text: object) -> tuple[list[SPO], list[str], list[str]]:
        """(triples, entities, warnings) from an answer; never raises. Entities are the answer's own list in the
        joint shape, else derived from the triples."""
        if self.name == "grouped":
            triples, warnings = read_grouped(text)
            if not triples:  # a model that answered in a triple list after all
                parsed = parse_triples(text)
                if parsed.triples:
                    triples, warnings = parsed.triples, list(parsed.warnings)
            return triples, entities_of(triples), warnings
        parsed = parse_triples(text)
        entities = parse_entities(text) if self.name == "joint" else entities_of(parsed.triples)
        return parsed.triples, entities, list(parsed.warnings)


def group(triples: list[SPO]) -> dict[str, list[list[str]]]:
    """{subject: [[predicate, object], ...]} in order of first appearance."""
    grouped: dict[str, list[list[str]]] = {}
    for s, p, o in triples:
        grouped.setdefault(s, []).append([p, o])
    return grouped


def read_grouped(text: object) -> tuple[list[SPO], list[str]]:
    """Triples from a grouped answer ({s: [[p, o], ...]}); malformed pairs are dropped and counted."""
    try:
        raw, warnings = as_text(text)
        data: Any = None
        try:
            data = json.loads(raw, object_pairs_hook=list)  # a subject written twice keeps both groups
        except (ValueError, RecursionError):
            for candidate in json_candidates(raw):
                loaded = load_json(candidate)
                if isinstance(loaded, dict):
                    data = list(loaded.items())
                    break
        if not isinstance(data, list):
            return [], [*warnings, "no subject groups found in the output"]
        triples: list[SPO] = []
        dropped = 0
        for item in data:
            subject, facts = item if isinstance(item, tuple) and len(item) == 2 else (None, None)
            s = clean_part(subject)
            if s is None or not isinstance(facts, list):
                dropped += len(facts) if isinstance(facts, list) else 1
                continue
            for fact in facts:
                parts = [clean_part(x) for x in fact] if isinstance(fact, list) and len(fact) == 2 else [None]
                if any(part is None for part in parts):
                    dropped += 1
                    continue
                triples.append((str(s), str(parts[0]), str(parts[1])))
        unique = list(dict.fromkeys(triples))
        if dropped:
            warnings.append(f"dropped {dropped} item(s) that were not 3 non-empty strings")
        if len(unique) < len(triples):
            warnings.append(f"removed {len(triples) - len(unique)} duplicate triple(s)")
        return unique, warnings
    except Exception as exc:  # contract: never raise on model output
        return [], [f"could not parse grouped triples ({type(exc).__name__})"]


JOINT = Output("joint", "gear-triple-extraction/1", "entities and triples, as in the paper")
TRIPLES = Output("triples", "gear-triple-extraction/triples-1", "triples only")
GROUPED = Output("grouped", "gear-triple-extraction/grouped-1", "triples grouped by subject")
OUTPUTS: dict[str, Output] = {o.name: o for o in (JOINT, TRIPLES, GROUPED)}


def get(name: str) -> Output:
    """The registered shape called `name` (an unknown name is an error that lists them)."""
    try:
        return OUTPUTS[name]
    except KeyError:
        raise ValueError(f"unknown extraction output {name!r}; choose one of {sorted(OUTPUTS)}") from None
