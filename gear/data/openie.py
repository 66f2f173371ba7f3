"""OpenIE triples as HippoRAG writes them (docs[].extracted_triples, `load_openie`), and their alignment to the
corpus's passages (`align_openie`): each triple belongs to exactly one passage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gear.data.corpus import Document, LoadReport
from gear.data.reading import (
    OPENIE_FORMATS,
    InputError,
    file_label,
    read_json,
    shape,
)


@dataclass(frozen=True, slots=True)
class OpenIEDoc:
    title: str
    text: str
    triples: tuple[tuple[str, str, str], ...]
    entities: tuple[str, ...] = ()


def _clean_triple(raw: Any) -> tuple[str, str, str] | None:
    if not isinstance(raw, (list, tuple)) or len(raw) != 3:
        return None
    parts = [str(x).strip() if isinstance(x, (str, int, float)) and not isinstance(x, bool) else None for x in raw]
    subject, predicate, obj = parts
    return (subject, predicate, obj) if subject and predicate and obj else None


def load_openie(path: str | Path, name: str | None = None) -> tuple[list[OpenIEDoc], LoadReport]:
    """Read HippoRAG's OpenIE output; triples that are not three non-empty strings are dropped and counted."""
    label = file_label(path, name)
    data = read_json(path, name, OPENIE_FORMATS)
    report = LoadReport(label)
    docs_raw = data.get("docs") if isinstance(data, dict) else data
    if not isinstance(docs_raw, list):
        raise InputError(f"{label}: expected an object with a 'docs' list (HippoRAG OpenIE format), got "
                         f"{shape(data)}", OPENIE_FORMATS)
    docs: list[OpenIEDoc] = []
    dropped = 0
    for n, record in enumerate(docs_raw):
        if not isinstance(record, dict):
            report.warn(f"docs[{n}]: not an object, skipped")
            continue
        title = record.get("title")
        text = record.get("text")
        if (not isinstance(title, str) or not isinstance(text, str)) and isinstance(record.get("passage"), str):
            title, _, text = record["passage"].partition("\n")
        if not isinstance(text, str) or not text.strip():
            report.warn(f"docs[{n}]: field 'text' missing or empty, skipped")
            continue
        raw_triples = record.get("extracted_triples", [])
        if not isinstance(raw_triples, list):
            report.warn(f"docs[{n}] ({title!r}): field 'extracted_triples' is not a list, skipped")
            continue
        triples: list[tuple[str, str, str]] = []
        for m, raw in enumerate(raw_triples):
            clean = _clean_triple(raw)
            if clean is None:
                dropped += 1
                if dropped <= 20:
                    report.warn(f"docs[{n}].extracted_triples[{m}]: not 3 non-empty strings: {str(raw)[:80]}")
                continue
            triples.append(clean)
        entities = tuple(e for e in record.get("extracted_entities", []) or [] if isinstance(e, str))
        docs.append(OpenIEDoc(str(title or ""), text, tuple(dict.fromkeys(triples)), entities))
    if dropped > 20:
        report.warn(f"{dropped} malformed triples dropped in all")
    return docs, report


def align_openie(
    docs: Sequence[Document], openie: Sequence[OpenIEDoc], report: LoadReport, source: str = "the OpenIE file"
) -> list[list[tuple[str, str, str]]]:
    """Triples for each document, matched by (title, text), then by text alone; unmatched docs get none. An OpenIE
    file that matches no passage at all was made for another corpus: an InputError naming `source`, rather than
    an index without a single triple."""
    by_key = {(d.title, d.text): d for d in openie}
    by_text = {d.text.strip(): d for d in openie}
    out: list[list[tuple[str, str, str]]] = []
    missing = 0
    for doc in docs:
        found = by_key.get((doc.title, doc.text)) or by_text.get(doc.text.strip())
        if found is None:
            missing += 1
            out.append([])
        else:
            out.append(list(found.triples))
    if docs and missing == len(docs):
        if not openie:
            raise InputError(f"{source}: holds no passage records, so it gives no triples", OPENIE_FORMATS)
        raise InputError(f"{source}: none of its {len(openie):,} records matches a passage of the corpus (by title "
                         f"and text; its first is {openie[0].title!r}): it was made for another corpus. Upload the "
                         "OpenIE file made from this corpus, or none (the LLM then extracts the triples)",
                         OPENIE_FORMATS)
    if missing:
        report.warn(f"{missing} of {len(docs)} passages have no OpenIE record and get no triples")
    return out
