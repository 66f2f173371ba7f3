"""Plain .txt/.md files, a folder of them, or uploads of either kind beside JSON corpora, as passages: a file's title
is its name as words (`title_of_file`), its text chunked into passages by gear.data.chunking (`load_text_documents`,
`load_corpus_files`, `load_any_corpus`); `source_files` says which passages came from which file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from gear.data.corpus import Document, LoadReport, load_corpus
from gear.data.reading import (
    CORPUS_FORMATS,
    EmptyFile,
    InputError,
    file_label,
    read_text,
)


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
