"""What a person uploads to build an index is checked as a whole before anything is built or any model is asked: the
corpus files (one or several, JSON and text alike, read as one corpus), the OpenIE file against that corpus, and the
QA set against it. A file that cannot be used is refused in the person's words — the file's own name (not the
temporary copy's), the full reason, and the formats accepted with an example of each — and nothing is written."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from gear.data.chunking import DEFAULT_CHUNK_WORDS, chunk_text
from gear.data.corpus import Document, LoadReport, unique_documents
from gear.data.openie import align_openie, load_openie
from gear.data.questions import gold_in_corpus, load_qa
from gear.data.reading import CORPUS_FORMATS, OPENIE_FORMATS, QA_FORMATS, Format, InputError
from gear.data.text_files import TEXT_SUFFIXES, load_corpus_files, title_of_file
from studio.core import paths
from studio.core.report_names import counted
from studio.core.safe import esc_md

MB = 1000 * 1000  # as the uploader shows a file's size


@dataclass(frozen=True)
class Limit:
    """The most the app reads of one kind of upload, and what that is in MuSiQue's terms (a passage is ≈0.5 kB of
    corpus and ≈1.8 kB of OpenIE triples): 25 MB of corpus is ≈50,000 passages, most of an hour of encoding on a
    2-core CPU. Larger inputs are for `gear index`, which resumes where it stopped."""

    mb: int
    what: str
    bytes_per_passage: int


LIMITS = {"corpus": Limit(25, "corpus", 512), "openie": Limit(100, "OpenIE triples", 1800),
          "qa": Limit(25, "QA set", 0)}


@dataclass
class Uploads:
    """The uploads, read and checked: the corpus's passages, the OpenIE file's triples per passage (None: the LLM
    extracts them), how many QA questions have a gold passage in the corpus, and every warning, each naming its
    file."""

    docs: list[Document]
    report: LoadReport
    triples: list[list[tuple[str, str, str]]] | None
    questions: int | None

    def summary(self, corpus: Sequence[Any], openie: Any, qa: Any) -> str:
        files = f"{len(corpus)} files" if len(corpus) > 1 else corpus[0].name
        parts = [f"{counted(len(self.docs), 'passage')} read from {files}"]
        if self.triples is not None:
            parts.append(f"{counted(sum(map(len, self.triples)), 'triple')} from {openie.name}")
        if self.questions is not None:
            parts.append(f"{counted(self.questions, 'question')} of {qa.name} with a gold passage in the corpus")
        return " · ".join(parts)


def check_uploads(tmp: Path, corpus: Sequence[Any], openie: Any | None, qa: Any | None) -> Uploads:
    """Read and check every upload (Streamlit's UploadedFile: name, size, getvalue); an InputError names the file
    that cannot be used and says why. `tmp`: a folder for the copies the loaders read."""
    if not corpus:
        raise InputError("no corpus file: upload one or more .json, .txt or .md files", CORPUS_FORMATS)
    _check_size(corpus, "corpus", CORPUS_FORMATS)
    docs, report = load_corpus_files([(_copy(tmp, n, f), f.name) for n, f in enumerate(corpus)])
    docs = unique_documents(docs, report)
    triples = None
    if openie is not None:
        _check_size([openie], "openie", OPENIE_FORMATS)
        oie, oie_report = load_openie(_copy(tmp, "openie", openie), openie.name)
        triples = align_openie(docs, oie, oie_report, source=openie.name)
        report.warnings += oie_report.warnings
    questions = None
    if qa is not None:
        _check_size([qa], "qa", QA_FORMATS)
        found, qa_report = load_qa(_copy(tmp, "qa", qa), qa.name)
        questions = gold_in_corpus(found, docs, qa_report)
        report.warnings += qa_report.warnings
    return Uploads(docs, report, triples, questions)


def _copy(tmp: Path, n: int | str, upload: Any) -> Path:
    """The upload written where a loader can read it (a name of our own: the person's file name may be anything)."""
    folder = tmp / str(n)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (re.sub(r"[^A-Za-z0-9_.-]", "_", Path(upload.name).suffix) or ".bin")
    path.write_bytes(upload.getvalue())
    return path


def _check_size(files: Sequence[Any], kind: str, formats: Sequence[Format]) -> None:
    """Refuse what is too large to build here, before reading a byte of it."""
    limit = LIMITS[kind]
    total = sum(int(getattr(f, "size", 0) or 0) for f in files)
    if total <= limit.mb * MB:
        return
    what = files[0].name if len(files) == 1 else f"these {len(files)} files"
    size = f" (about {round(limit.mb * MB / limit.bytes_per_passage, -3):,.0f} passages of MuSiQue's size)" \
        if limit.bytes_per_passage else ""
    command = f"gear index CORPUS --openie OPENIE.json --out {paths.shown(paths.indexes_dir() / 'NAME')}"
    raise InputError(f"{what}: {total / MB:.1f} MB; the app builds an index from at most {limit.mb} MB of "
                     f"{limit.what}{size}. Build a larger one on the command line, which resumes where it stopped "
                     f"(`{command}`): it then appears in every page's Index list.", formats)


def refusal_label(name: str, exc: InputError) -> str:
    """The status box's label for a refused upload: which file needs fixing (the message under it says why)."""
    file = str(exc).split(": ", 1)[0] if ": " in str(exc) else ""
    return f"Not built: {file} needs fixing" if file and len(file) < 80 else f"Not built: {name}'s files need fixing"


def show_formats(formats: Sequence[Format], heading: bool = True) -> None:
    """The formats a file may be in (a refused one: could have been in), each with its two-line example."""
    if not formats:
        return
    if heading:
        st.markdown("**Accepted formats**" if len(formats) > 1 else "**The format expected**")
    for f in formats:
        st.markdown(f"- {f.name}")
        st.code(f.example, language="json" if f.example.lstrip().startswith(("[", "{")) else "text")


def title_rule() -> str:
    """How a text file's passages are titled, in the words the Index page and docs/usage.md use (gear.data.corpus)."""
    return (f"A .txt/.md file's title is its file name as words: underscores read as spaces, the suffix dropped "
            f"(“The_Red_House.txt” → “{title_of_file('The_Red_House.txt')}”); the file's own name is kept in the "
            "index's manifest.")


def cut_files_note(corpus: Sequence[Any]) -> str:
    """Which uploaded text files become several passages, and why, said before Build ("" when none does): a .txt/.md
    file is cut every ≈DEFAULT_CHUNK_WORDS words so that one LLM call reads one passage (as the paper's Wikipedia
    paragraphs), each passage keeping the file's title. A file that cannot be read is left to the build's checks."""
    counts: list[tuple[str, int]] = []
    for f in corpus:
        if Path(f.name).suffix.lower() in TEXT_SUFFIXES:
            try:
                counts.append((f.name, len(chunk_text(f.getvalue().decode("utf-8")))))
            except UnicodeDecodeError:
                continue
    cut = [(name, n) for name, n in counts if n > 1]
    if not cut:
        return ""
    listed = ", ".join(f"{esc_md(name)} → {n} passages" for name, n in cut[:8]) + (", …" if len(cut) > 8 else "")
    passages, texts, whole = sum(n for _, n in counts), counts, sum(n == 1 for _, n in counts)
    return (f"{len(cut)} of {len(texts)} text files {'is' if len(cut) == 1 else 'are'} cut into several passages: "
            f"{listed}. A passage is at most ≈{DEFAULT_CHUNK_WORDS} words (cut between paragraphs and sentences), so "
            f"that the model reads one passage per extraction, as the paper's Wikipedia paragraphs; each keeps its "
            f"file's title. {passages:,} passages from these {len(texts)} files"
            + (f" ({whole} kept whole)." if whole else "."))
