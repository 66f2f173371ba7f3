"""QA sets as the paper's datasets ship them (`load_qa`): the MuSiQue schema (paragraphs with is_supporting), the
HippoRAG schema, and the raw HotpotQA / 2Wiki schema (supporting_facts titles). Gold passages are matched by (title,
text) when the QA file gives the text (surrounding whitespace aside, `same_text`), else by title alone — which finds a
passage only when exactly one passage has that title (a .txt file cut into chunks shares its title): docs/usage.md,
"Gold passages"; `gold_in_corpus` counts how many a corpus holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gear.data.corpus import Document, LoadReport, text_field
from gear.data.reading import (
    QA_FORMATS,
    InputError,
    file_label,
    read_json,
    shape,
)


@dataclass(frozen=True, slots=True)
class Question:
    """A QA item; `gold` holds (title, text) keys, or (title, None) when the source only names titles."""

    id: str
    question: str
    answers: tuple[str, ...]
    gold: tuple[tuple[str, str | None], ...]
    kind: str = ""  # the set's own question type where it has one (2Wiki's and HotpotQA's `type`)

    @property
    def hop_type(self) -> str:
        """MuSiQue encodes the hop type in the id prefix (2hop, 3hop1, …); 2Wiki and HotpotQA name a type
        (comparison, bridge_comparison, compositional, inference; bridge, comparison); other sets have none."""
        prefix = self.id.split("__", 1)[0]
        return prefix if "hop" in prefix else (self.kind or "all")


def _answers(record: dict[str, Any]) -> tuple[str, ...]:
    answer = record.get("answer", [])
    answers = [answer] if isinstance(answer, str) else \
        [a for a in answer if isinstance(a, str)] if isinstance(answer, list) else []
    aliases = record.get("answer_aliases", []) or []
    answers += [a for a in aliases if isinstance(a, str)] if isinstance(aliases, list) else []
    return tuple(dict.fromkeys(a for a in answers if a))


def _gold_from_paragraphs(paragraphs: Any) -> list[tuple[str, str | None]]:
    gold: list[tuple[str, str | None]] = []
    for p in paragraphs if isinstance(paragraphs, list) else []:
        if isinstance(p, dict) and p.get("is_supporting", False):
            text = text_field(p, "paragraph_text", "text")
            gold.append((str(p.get("title", "")), text if text and text.strip() else None))  # no text: by title
    return gold


def _gold_from_supporting_facts(record: dict[str, Any]) -> list[tuple[str, str | None]]:
    facts = record.get("supporting_facts", [])
    titles = list(dict.fromkeys(str(f[0]) for f in facts if isinstance(f, list) and f)) \
        if isinstance(facts, list) else []
    context = {str(c[0]): "".join(c[1]) for c in record.get("context", []) or []
               if isinstance(c, list) and len(c) == 2 and isinstance(c[1], list)
               and all(isinstance(x, str) for x in c[1])}
    return [(t, context.get(t) or None) for t in titles]  # a title its context lacks is matched by title alone


def load_qa(path: str | Path, name: str | None = None) -> tuple[list[Question], LoadReport]:
    """Read a QA set in the MuSiQue, HippoRAG or raw HotpotQA / 2Wiki schema (`name`: what messages call it)."""
    label = file_label(path, name)
    data = read_json(path, name, QA_FORMATS)
    report = LoadReport(label)
    if not isinstance(data, list):
        hint = " It looks like an OpenIE file (it has a 'docs' list)." if isinstance(data, dict) and "docs" in data \
            else ""
        raise InputError(f"{label}: expected a list of questions, got {shape(data)}.{hint}", QA_FORMATS)
    questions: list[Question] = []
    for n, record in enumerate(data):
        if not isinstance(record, dict):
            report.warn(f"record {n}: not an object, skipped")
            continue
        qid = str(record.get("id", record.get("_id", n)))
        text = record.get("question")
        if not isinstance(text, str) or not text.strip():
            report.warn(f"record {n} (id {qid}): field 'question' missing or empty, skipped")
            continue
        if "paragraphs" in record:
            gold = _gold_from_paragraphs(record["paragraphs"])
        elif "supporting_facts" in record:
            gold = _gold_from_supporting_facts(record)
        else:
            report.warn(f"record {n} (id {qid}): no 'paragraphs' or 'supporting_facts'; no gold passages")
            gold = []
        if not gold:
            report.warn(f"record {n} (id {qid}): no gold passages")
        kind = record.get("type")
        questions.append(Question(qid, text.strip(), _answers(record), tuple(gold),
                                  kind.strip() if isinstance(kind, str) else ""))
    if not questions:
        first = next((r for r in data if isinstance(r, dict)), None)
        hint = " It looks like a corpus (its records have 'title' and 'text'): upload it as the corpus." \
            if first is not None and "text" in first and "question" not in first else ""
        why = f" — {report.warnings[0].removeprefix(f'{label}: ')}" if report.warnings else ""
        raise InputError(f"{label}: no questions found{why}.{hint}" if why or hint else
                         f"{label}: no questions found", QA_FORMATS)
    return questions, report


def same_text(a: str, b: str) -> bool:
    """Two renderings of one passage: equal but for whitespace (a raw-schema QA set joins its context's sentences
    with nothing, where a pooled corpus joined them with a space, as 2Wiki's does)."""
    return "".join(a.split()) == "".join(b.split())


def gold_in_corpus(questions: Sequence[Question], docs: Sequence[Document], report: LoadReport) -> int:
    """How many questions have at least one gold passage in the corpus, found as the index will find it: by title and
    text, or by title alone where the QA set names no text — and then only a title one passage has. None at all is
    an InputError (a QA set for another corpus: every recall would be empty); some missing is a warning."""
    keys = {(d.title, d.text.strip()) for d in docs}
    titles = Counter(d.title for d in docs)
    texts = {d.title: d.text for d in docs}

    def found(title: str, text: str | None) -> bool:  # as the index finds it (gear.agent.engine.Engine.gold_ids)
        if text is None:
            return titles[title] == 1
        return (title, text.strip()) in keys or (titles[title] == 1 and same_text(texts[title], text))

    with_gold = [q for q in questions if q.gold]
    hits = [q for q in with_gold if any(found(t, x) for t, x in q.gold)]
    if with_gold and not hits:
        title, _ = with_gold[0].gold[0]
        raise InputError(f"{report.path}: none of its {len(with_gold):,} questions has a gold passage in the corpus "
                         f"(question {with_gold[0].id}'s gold passage {title!r} is not among its passages, matched "
                         "by title and text): is it the QA set of another corpus?", QA_FORMATS)
    if len(hits) < len(with_gold):
        report.warn(f"{len(with_gold) - len(hits):,} of {len(with_gold):,} questions have no gold passage in the "
                    "corpus: their recall is not measured")
    return len(hits)
