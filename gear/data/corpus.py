"""Loaders for the corpus, QA and OpenIE formats the paper's datasets come in, with errors that name file and record.

Formats: HippoRAG corpus (list of {title, text}); HotpotQA corpus ({title: [sentences]}); QA sets in the MuSiQue
schema (paragraphs with is_supporting), the HippoRAG schema, and the raw HotpotQA / 2Wiki schema (supporting_facts
titles); HippoRAG OpenIE output (docs[].extracted_triples); plain .txt/.md files or a folder of them (title = the file
name as words, `title_of_file`; chunked into passages by gear.data.chunking). Gold passages are matched by (title,
text) when the QA file gives the text (surrounding whitespace aside), else by title alone — which finds a passage
only when exactly one passage has that title (a .txt file cut into chunks shares its title): docs/usage.md, "Gold
passages".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gear.data.reading import (
    CORPUS_FORMATS,
    OPENIE_FORMATS,
    QA_FORMATS,
    EmptyFile,
    InputError,
    file_label,
    read_json,
    read_text,
    shape,
)


@dataclass
class LoadReport:
    """Counted, non-fatal problems found while loading (shown to the user, never silently dropped)."""

    path: str
    warnings: list[str] = field(default_factory=list)

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.path}: {message}")

    def summary(self, limit: int = 5) -> list[str]:
        lines = self.warnings[:limit]
        if len(self.warnings) > limit:
            lines.append(f"{self.path}: … and {len(self.warnings) - limit} more warnings")
        return lines


@dataclass(frozen=True, slots=True)
class Document:
    """A corpus record before indexing; `source`: the file it was read from, when its title was made from the file's
    name (a .txt/.md file): the index's manifest keeps it (`source_files`)."""

    title: str
    text: str
    source: str = ""


def title_of_file(name: str) -> str:
    """A text file's title: its name without the suffix, as words — underscores read as spaces, as in Wikipedia's
    addresses ("The_Red_House.txt" → "The Red House"); hyphens and capitals are kept. One rule for every file, said
    in the app and docs/usage.md; the file's own name stays in the index's manifest."""
    stem = Path(name).stem
    return " ".join(stem.replace("_", " ").split()) or stem


def source_files(docs: Iterable[Document]) -> dict[str, list[str]]:
    """title → the files its passages were read from, for the passages whose title came from a file's name: where
    the index keeps a passage's source ("The Red House" → ["The_Red_House.txt"])."""
    found: dict[str, list[str]] = {}
    for d in docs:
        if d.source and d.source not in found.setdefault(d.title, []):
            found[d.title].append(d.source)
    return {title: files for title, files in found.items() if files}


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


@dataclass(frozen=True, slots=True)
class OpenIEDoc:
    title: str
    text: str
    triples: tuple[tuple[str, str, str], ...]
    entities: tuple[str, ...] = ()


def _wrapped(data: dict[str, Any]) -> str:
    """The key under which an object holds records (a list of objects, or an object), as an export that wraps its
    corpus does ({"data": [...], "version": "1.0"}); "" when none does."""
    return next((str(k) for k, v in data.items()
                 if isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, dict) for x in v))), "")


def _looks_like(data: Any) -> str:
    """Which other input a JSON value looks like, when it is not a corpus (a common mix-up between the uploads)."""
    records = data if isinstance(data, list) else []
    first = next((r for r in records if isinstance(r, dict)), None)
    if first is not None and "question" in first:
        return " It looks like a QA set (its records have a 'question'): upload it as the QA set."
    if isinstance(data, dict) and "docs" in data:
        return " It looks like an OpenIE file (it has a 'docs' list): upload it as the OpenIE triples."
    if isinstance(data, dict) and _wrapped(data):
        key = _wrapped(data)
        return f" Its {key!r} holds {shape(data[key])}: if those are the passages, upload that list alone."
    return ""


def _text_field(record: dict[str, Any], *names: str) -> str | None:
    for name in names:
        value = record.get(name)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(s, str) for s in value):
            return "".join(value)
    return None


def load_corpus(path: str | Path, name: str | None = None) -> tuple[list[Document], LoadReport]:
    """Read a HippoRAG-style list of {title, text} or a HotpotQA-style {title: [sentences]} dict. `name` is what
    messages call the file (default: its path)."""
    label = file_label(path, name)
    data = read_json(path, name, CORPUS_FORMATS)
    report = LoadReport(label)
    docs: list[Document] = []
    if data in ([], {}):
        raise InputError(f"{label}: no passage with text, so nothing to index — it holds no records",
                         CORPUS_FORMATS)
    if isinstance(data, dict) and any(_sentences(v) is not None for v in data.values()) and not _wrapped(data):
        for n, (title, sentences) in enumerate(data.items()):
            text = _sentences(sentences)
            if text is None:
                report.warn(f"record {n} ({title!r}): expected a list of sentences, got {shape(sentences)}; "
                            "skipped")
                continue
            if not text.strip():
                report.warn(f"record {n} ({title!r}): no text, skipped")
                continue
            docs.append(Document(str(title), text))
    elif isinstance(data, list) and any(isinstance(r, dict) for r in data) and not _looks_like(data):
        for n, record in enumerate(data):
            if not isinstance(record, dict):
                report.warn(f"record {n}: expected an object with 'title' and 'text', got {shape(record)}")
                continue
            text = _text_field(record, "text", "paragraph_text", "contents")
            title = record.get("title", "")
            if not isinstance(title, str):
                report.warn(f"record {n}: field 'title' is not a string, skipped")
                continue
            if text is None or not text.strip():
                what = "missing" if not any(k in record for k in ("text", "paragraph_text", "contents")) else \
                    "empty" if text is not None else f"not a string ({shape(record.get('text'))})"
                report.warn(f"record {n} ({title!r}): field 'text' {what}, skipped")
                continue
            docs.append(Document(title, text))
    else:
        raise InputError(f"{label}: JSON of another shape ({shape(data)}); a corpus is a list of {{title, text}} "
                         f"records or a {{title: [sentences]}} object.{_looks_like(data)}", CORPUS_FORMATS)
    if not docs:
        why = "; ".join(w.removeprefix(f"{label}: ") for w in report.warnings[:3]) or "it holds no records"
        more = f" (and {len(report.warnings) - 3:,} more)" if len(report.warnings) > 3 else ""
        raise InputError(f"{label}: no passage with text, so nothing to index — {why}{more}", CORPUS_FORMATS)
    _warn_shared_titles(docs, report)
    return docs, report


def _sentences(value: Any) -> str | None:
    """A HotpotQA corpus value as text: a string, or a list of sentence strings joined; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return "".join(value)
    return None


def _warn_shared_titles(docs: Sequence[Document], report: LoadReport) -> None:
    """One warning when different passages share a title: a QA set that names its gold passages by title alone
    (HotpotQA, 2Wiki) cannot tell them apart (an exact duplicate is dropped by unique_documents instead)."""
    texts: dict[str, set[str]] = {}
    for d in docs:
        texts.setdefault(d.title, set()).add(d.text)
    shared = sorted(((len(v), t) for t, v in texts.items() if len(v) > 1), reverse=True)
    if shared:
        n, title = shared[0]
        report.warn(f"{len(shared):,} title{'s are' if len(shared) > 1 else ' is'} shared by different passages "
                    f"(e.g. {title!r} ×{n}): gold passages named by title alone (HotpotQA, 2Wiki QA sets) cannot be "
                    "told apart; QA sets that give the text (MuSiQue, HippoRAG) can")


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
            text = _text_field(p, "paragraph_text", "text")
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


def unique_documents(docs: Iterable[Document], report: LoadReport) -> list[Document]:
    """Drop exact duplicate (title, text) records, which would otherwise split gold matches."""
    seen: set[tuple[str, str]] = set()
    out: list[Document] = []
    for d in docs:
        if (d.title, d.text) in seen:
            report.warn(f"duplicate passage {d.title!r} skipped")
            continue
        seen.add((d.title, d.text))
        out.append(d)
    return out


TEXT_SUFFIXES = (".txt", ".md", ".markdown")
CORPUS_SUFFIXES = (*TEXT_SUFFIXES, ".json")


def _text_passages(path: Path, name: str | None, chunk_words: int | None, report: LoadReport) -> list[Document]:
    """One .txt/.md file as passages: title = the file's name as words (title_of_file), the text chunked."""
    from gear.data.chunking import DEFAULT_CHUNK_WORDS, chunk_text

    label = file_label(path, name)
    try:
        text = read_text(path, name, CORPUS_FORMATS)
    except EmptyFile:  # one empty text among others is skipped; a corpus of only empty ones is refused by the caller
        text = ""
    chunks = chunk_text(text, chunk_words or DEFAULT_CHUNK_WORDS)
    if not chunks:
        report.warnings.append(f"{label}: empty, skipped")  # named by the file itself (the report may be a folder's)
        return []
    file = Path(name or path).name
    return [Document(title_of_file(file), chunk, file) for chunk in chunks]


def _folder_files(folder: Path) -> list[Path]:
    """The corpus files under a folder (sorted, recursive, hidden files and folders skipped)."""
    return sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix.lower() in CORPUS_SUFFIXES
                  and not any(part.startswith(".") for part in f.relative_to(folder).parts))


def load_text_documents(path: str | Path, chunk_words: int | None = None, name: str | None = None
                        ) -> tuple[list[Document], LoadReport]:
    """Plain text: one .txt/.md file, or every such file under a folder (sorted, recursive, hidden files skipped).

    Title = the file name as words (title_of_file); the text is cut into passages of about `chunk_words` words
    (gear.data.chunking.DEFAULT_CHUNK_WORDS when None), every chunk keeping the file's title.
    """
    p = Path(path)
    label = file_label(p, name)
    report = LoadReport(label)
    if not p.exists():
        raise InputError(f"{label}: file or folder not found")
    if p.is_dir():
        files = [f for f in _folder_files(p) if f.suffix.lower() in TEXT_SUFFIXES]
        if not files:
            raise InputError(f"{label}: folder holds no {'/'.join(TEXT_SUFFIXES)} files", CORPUS_FORMATS)
        docs = [d for f in files for d in _text_passages(f, None, chunk_words, report)]
    else:
        docs = _text_passages(p, name, chunk_words, report)
    if not docs:
        raise InputError(f"{label}: no passage with text, so nothing to index — every file is empty",
                         CORPUS_FORMATS)
    return docs, report


def _split_long(docs: list[Document], chunk_words: int | None) -> list[Document]:
    """JSON passages longer than `chunk_words` words cut into chunks (kept whole when None)."""
    if not chunk_words:
        return docs
    from gear.data.chunking import chunk_text

    split: list[Document] = []
    for d in docs:
        if len(d.text.split()) <= chunk_words:
            split.append(d)
        else:
            split.extend(Document(d.title, chunk) for chunk in chunk_text(d.text, chunk_words))
    return split


def load_corpus_files(files: Sequence[tuple[Path, str]], chunk_words: int | None = None, label: str | None = None
                      ) -> tuple[list[Document], LoadReport]:
    """Several corpus files as one corpus, in the order given: each (path, name) read by its suffix — JSON as
    load_corpus (passages kept whole unless `chunk_words`), .txt/.md chunked — with every message naming the file
    by `name` (an upload's own name, not its temporary copy). Their warnings are kept, each naming its file."""
    if not files:
        raise InputError("no corpus file given", CORPUS_FORMATS)
    report = LoadReport(label or ", ".join(name for _, name in files))
    docs: list[Document] = []
    for path, name in files:
        suffix = Path(name).suffix.lower()
        if suffix in TEXT_SUFFIXES:
            sub = LoadReport(name)
            docs += _text_passages(path, name, chunk_words, sub)
        elif suffix == ".json":
            found, sub = load_corpus(path, name)
            docs += _split_long(found, chunk_words)
        else:
            kind = suffix or "a file without a suffix"
            raise InputError(f"{name}: a corpus file is .json, .txt or .md, not {kind}", CORPUS_FORMATS)
        report.warnings += sub.warnings
    if not docs:
        raise InputError(f"{report.path}: no passage with text, so nothing to index — every file is empty",
                         CORPUS_FORMATS)
    return docs, report


def load_any_corpus(path: str | Path, chunk_words: int | None = None) -> tuple[list[Document], LoadReport]:
    """A corpus in any supported form: a .txt/.md file (chunked), a JSON corpus (see load_corpus), or a folder of
    them read as one corpus (JSON files and text files alike, sorted by path).

    JSON passages are kept as they are unless `chunk_words` is given, in which case longer ones are split too.
    """
    p = Path(path)
    if p.is_dir():
        files = _folder_files(p)
        if not files:
            raise InputError(f"{p}: folder holds no {'/'.join(CORPUS_SUFFIXES)} files", CORPUS_FORMATS)
        return load_corpus_files([(f, str(f)) for f in files], chunk_words, label=str(p))
    if p.suffix.lower() in TEXT_SUFFIXES:
        return load_text_documents(p, chunk_words)
    docs, report = load_corpus(p)
    return _split_long(docs, chunk_words), report


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
