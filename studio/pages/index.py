"""Indexes are what every other page works on: looking inside one (statistics, an entity's neighbourhood) and
building a new one from uploaded files live here, apart from the page's layout."""

from __future__ import annotations

import re
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from gear import viz
from gear.config import Settings
from gear.data.reading import CORPUS_FORMATS, OPENIE_FORMATS, QA_FORMATS, Format, InputError
from gear.data.text_files import TEXT_SUFFIXES
from gear.extract.progress import EMBEDDED_CPU_SECONDS_PER_PASSAGE, Pace, Progress, duration
from gear.files import atomic_write_bytes
from gear.llm.queue import listening
from studio.core import demos, paths
from studio.core.keys import INDEX_SELECTED
from studio.core.resources import encoder_for, engine_for, ensure_index
from studio.core.safe import esc_md, one_line
from studio.core.sidebar import choose_index, llm_words
from studio.core.widgets import bring_into_view, iframe
from studio.pages.index_uploads import LIMITS, check_uploads, cut_files_note, refusal_label, show_formats, title_rule

# index names being built now by any session: data/indexes/ is shared, so two sessions choosing the same name at once
# would write one directory together (the second is told to wait instead)
_building: set[str] = set()
_building_lock = threading.Lock()


@contextmanager
def claim_name(name: str) -> Iterator[bool]:
    """Hold `name` for one build while inside the block; yields False (and holds nothing) when another session
    holds it."""
    with _building_lock:
        mine = name not in _building
        _building.add(name)
    try:
        yield mine
    finally:
        if mine:
            with _building_lock:
                _building.discard(name)


def explore_tab() -> None:
    index = choose_index(key="index_choice", container=st)
    if index is None:
        return
    index = ensure_index(index)
    if index is None:
        return
    from gear.index import Manifest

    m = Manifest.read(index)
    c = st.columns(4)
    c[0].metric("Passages", f"{m.n_passages:,}")
    c[1].metric("Triples", f"{m.n_triples:,}")
    c[2].metric("Entities", f"{m.n_entities:,}")
    c[3].metric("Triples / passage", f"{m.triples_per_passage.get('mean', 0):.2f}")
    st.caption(f"embedder {m.embedder} ({m.dims} dims) · backend {m.backend} · built {m.created}")
    counts_file = index / "triples_per_passage.npy"
    left, right = st.columns(2)
    if counts_file.is_file():
        left.plotly_chart(viz.density_figure(np.load(counts_file).tolist()), width="stretch", key="ix_density")
    engine = engine_for(index)
    top = viz.top_entities(engine.backend, 20)
    if top:
        right.plotly_chart(viz.degree_figure(top), width="stretch", key="ix_degree")
    st.subheader("Entity neighbourhood")
    query = st.text_input("Find an entity", value=top[0][0] if top else "", key="ix_entity_q")
    matches = viz.find_entities(engine.backend, query) if query else []
    if not matches:
        st.caption("No matching entity." if query else "Type part of an entity name.")
        return
    entity = st.selectbox("Entity", matches, key="ix_entity")
    h, lim = st.columns(2)
    hops = h.slider("Hops", 1, 3, 1, key="ix_hops")
    limit = lim.slider("At most this many triples", 10, 200, 60, key="ix_limit")
    g = viz.neighbourhood(engine.backend, entity, hops, limit)
    st.caption(f"{g.number_of_nodes()} entities, {g.number_of_edges()} triples")
    iframe(viz.graph_html(g, height=560, legend=viz.neighbourhood_legend(hops)), 620)


def build_tab(settings: Settings) -> None:
    st.markdown("Upload a corpus (HippoRAG `[{title, text}]` JSON, HotpotQA-style JSON, or .txt/.md files; several "
                "files are read as one corpus) and, if you have them, its OpenIE triples (HippoRAG OpenIE JSON); "
                "without them the LLM chosen in the sidebar extracts the triples from the text. The index is written "
                f"to `{paths.shown(paths.indexes_dir())}/<name>`.")
    with st.expander("The formats, with an example of each"):
        for title, formats in (("Corpus", CORPUS_FORMATS), ("OpenIE triples", OPENIE_FORMATS),
                               ("QA set", QA_FORMATS)):
            st.markdown(f"**{title}**")
            show_formats(formats, heading=False)
        st.caption("At most " + ", ".join(f"{limit.mb} MB of {limit.what}" for limit in LIMITS.values())
                   + "; a larger corpus is built with `gear index` and then listed here.")
    name = st.text_input("Index name", value="my-index", key="ix_name")
    # each uploader's own caption ("25MB per file") says the app's limit (max_upload_size), as its label does; a
    # larger corpus is built on the command line (the help says how)
    larger = (f"A larger one: `gear index build CORPUS --out {paths.shown(paths.indexes_dir() / 'NAME')}` on the "
              "command line, then pick it here.")
    corpus_files = st.file_uploader(f"Corpus (at most {LIMITS['corpus'].mb} MB in all)", type=["json", "txt", "md"],
                                    accept_multiple_files=True, key="ix_corpus", max_upload_size=LIMITS["corpus"].mb,
                                    help=larger)
    openie = st.file_uploader(f"OpenIE triples (optional, JSON, at most {LIMITS['openie'].mb} MB)", type=["json"],
                              key="ix_openie", max_upload_size=LIMITS["openie"].mb, help=larger)
    qa = st.file_uploader(f"QA set (optional, JSON, at most {LIMITS['qa'].mb} MB) — gives Ask/Evaluate their example "
                          "questions", type=["json"], key="ix_qa", max_upload_size=LIMITS["qa"].mb)
    if corpus_files:  # before Build: which text files become several passages, and why; how they are titled
        note = cut_files_note(corpus_files)
        if note:
            st.info(note, icon=":material/content_cut:")
        if any(Path(f.name).suffix.lower() in TEXT_SUFFIXES for f in corpus_files):
            st.caption(title_rule())
    if not openie:
        st.caption(raw_text_note())
    kept = st.session_state.pop(KEPT, None)
    if st.session_state.pop(CANCELLED, False):
        if kept and not kept[0]:
            st.warning("Extraction cancelled before its first passage was finished: build again to start it.")
        else:
            what = (f"{kept[0]:,} of {kept[1]:,} passages {'is' if kept[0] == 1 else 'are'}" if kept
                    else "the passages finished are")
            st.warning(f"Extraction cancelled: {what} kept in the journal beside the index; build again to go on "
                       "from there.")
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")
    replace = True
    if safe and (paths.indexes_dir() / safe / "manifest.json").is_file():  # a build replaces the whole folder
        replace = st.checkbox(f"Replace the index “{safe}” that exists (its passages and triples; its own test "
                              "questions are kept)", key="ix_replace", value=False)
    if st.button("Build index", type="primary", key="ix_build", disabled=not corpus_files or not safe or not replace):
        if safe in demos.DEMOS:
            st.error(f"“{safe}” is reserved for a demo; choose another name.")
            return
        with claim_name(safe) as mine:
            if not mine:
                st.error(f"Another session is building “{safe}” right now: choose another name, or wait for it.")
                return
            build(safe, corpus_files, openie, qa, settings)


PROGRESS = "ix_progress"  # the build's status box, scrolled into view when Build is pressed
CANCELLED = "ix_cancelled"  # session state: the Cancel button of a running extraction was pressed
KEPT = "ix_kept"  # session state: (passages in the journal, passages in all) of the extraction running or stopped


def _cancelled() -> None:
    st.session_state[CANCELLED] = True


def raw_text_note() -> str:
    if extraction_available():
        pace = EMBEDDED_CPU_SECONDS_PER_PASSAGE
        return ("Without an OpenIE file, triples are extracted from the text by the LLM chosen in the sidebar "
                f"(the embedded model: ≈ {pace:.0f} s a passage on a 2-core CPU, ≈ {60 / pace:.0f} a minute; far "
                "faster on a GPU).")
    return "Raw-text upload needs an OpenIE file for now: LLM triple extraction is not available in this build."


def extraction_available() -> bool:
    """Whether gear.extract.bridge.extract_for_index does real extraction (it takes a progress callback)."""
    try:
        import inspect

        from gear.extract import bridge

        return "progress" in inspect.signature(bridge.extract_for_index).parameters
    except (ImportError, AttributeError, TypeError, ValueError):
        return False


class BuildStopped(Exception):
    """A build step could not go on: `label` heads the status box, `message` says why, `formats` (of a refused
    upload) what it could have been."""

    def __init__(self, label: str, message: str, formats: Sequence[Format] = ()) -> None:
        super().__init__(message)
        self.label, self.message, self.formats = label, message, formats


def build(name: str, corpus_files: list[Any], openie: Any, qa: Any, settings: Settings) -> None:
    """Read the uploads, get their triples (from the OpenIE file, or extracted by the LLM), encode and save."""
    out = paths.indexes_dir() / name
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp, st.container(key=PROGRESS), \
            st.status(f"Building {name}…", expanded=True) as box:
        bring_into_view(PROGRESS)  # below the uploaders and the note: the page scrolls to it at once
        try:
            try:  # every upload read and checked before anything is built or asked (studio/pages/index_uploads.py)
                upload = check_uploads(Path(tmp), corpus_files, openie, qa)
            except InputError as exc:
                raise BuildStopped(refusal_label(name, exc), str(exc), exc.formats) from exc
            docs, report = upload.docs, upload.report
            st.write(esc_md(upload.summary(corpus_files, openie, qa)))
            if upload.triples is not None:
                triples, extraction = upload.triples, {"source": openie.name}
            else:
                triples, extraction = extract_triples(docs, settings, out, box)
            for line in report.summary():
                st.caption(esc_md(line))
            manifest = encode_and_save(docs, triples, out, settings, extraction,
                                       {"corpus": ", ".join(f.name for f in corpus_files),
                                        "openie": openie.name if openie else None})
        except BuildStopped as stop:
            box.update(label=esc_md(stop.label), state="error", expanded=True)  # the reason stays in view
            st.error(esc_md(stop.message))
            show_formats(stop.formats)
            return
        if qa is not None:
            atomic_write_bytes(out / "qa.json", qa.getvalue())
        warned = f" · {len(report.warnings):,} warning{'s' if len(report.warnings) != 1 else ''} (below)" \
            if report.warnings else ""
        box.update(label=f"Built {name}: {manifest.n_passages:,} passages, {manifest.n_triples:,} triples{warned}",
                   state="complete", expanded=bool(warned))  # what the files' checks found stays in view
    st.dataframe(pd.DataFrame([{"passages": manifest.n_passages, "triples": manifest.n_triples,
                                "entities": manifest.n_entities}]), hide_index=True)
    st.session_state[INDEX_SELECTED] = name  # every page's index picker opens on it (studio.core.sidebar.choose_index)
    st.success(f"Index {name} is ready (built in {duration(time.monotonic() - started)}) and selected: Ask, Compare "
               "and Evaluate now use it (the Index list in their sidebar changes it; Explore an index shows it here).")


NO_BREAK = "\u00a0"  # between the words of each part of the progress line: a narrow page wraps it between parts


class ExtractionView:
    """What the page shows while the LLM extracts triples: the status box's label says how far it is (passages done /
    total, passages per minute, time left, triples so far: gear.extract.progress), visible without scrolling; inside
    it a progress bar, one line saying what the model does (its place in the queue, or how much of this passage it
    has written), and a Cancel button, which stops the model too (gear.llm.openai_client). Every callback draws, so
    Streamlit can stop a cancelled run there."""

    READING = ":material/menu_book: the model is reading the next passage (its first text can take a minute on a CPU)…"

    def __init__(self, box: Any = None, name: str = "") -> None:
        self.box, self.name = box, name
        self.bar = st.progress(0, text="extracting triples")
        self.place, self.cancel = st.empty(), st.empty()
        self.cancel.button("Cancel", key="ix_cancel", on_click=_cancelled,
                           help="Stop the extraction (the model stops too); finished passages stay in the journal.")
        self.written = 0  # characters of the passage being written
        self.pace = Pace()
        self.place.caption(self.READING)

    def on_extract(self, result: Any, done: int, total: int) -> None:
        st.session_state[KEPT] = (done, total)  # what a Cancel keeps, said on the page after it
        self.show(self.pace.update(done, total, result.n_triples))
        self.written = 0
        self.place.caption(self.READING if done < total else "")

    def show(self, progress: Progress) -> None:
        """The line in the box's label (the bar's text only counts: the label says the rest, once)."""
        self.bar.progress(min(100, int(100 * progress.done / max(progress.total, 1))),
                          text=f"extracting triples: {progress.done:,} / {progress.total:,} passages")
        if self.box is not None:
            # expanded=True: an update without it collapses the box in the browser, hiding Cancel and the bar
            self.box.update(label=f"Building {self.name}: extracting triples — {progress.line(NO_BREAK)}",
                            expanded=True)

    def measure_again(self) -> None:
        """While a passage is read or written: a passage that takes long slows the pace shown before it ends."""
        again = self.pace.again()
        if again is not None:
            self.show(again)

    def on_wait(self, ahead: int) -> None:
        self.place.caption(f":material/hourglass_top: waiting for the model: {ahead} ahead" if ahead else self.READING)
        self.measure_again()

    def on_text(self, piece: str) -> None:
        self.written += len(piece)
        self.place.caption(f":material/edit_note: the model is writing this passage's triples: {self.written:,} "
                           "characters")
        self.measure_again()

    def close(self) -> None:
        self.place.empty()
        self.cancel.empty()


def extract_triples(docs: list[Any], settings: Settings, out: Path, box: Any = None) -> tuple[list[Any], dict]:
    """Triples extracted from the passages by the sidebar's LLM, resumable from the journal beside `out`; `box` (the
    build's status box) shows the progress in its label."""
    if not extraction_available():
        raise BuildStopped("Needs an OpenIE file", raw_text_note())
    from gear.extract import outputs
    from gear.extract.bridge import (
        ExtractOptions,
        config_for,
        extract_for_index,
        local_profile,
    )

    config = config_for(settings, ExtractOptions())
    at_once = f"{config.concurrency} passage{'' if config.concurrency == 1 else 's'} at once"
    st.write(f"extracting triples with {llm_words(settings)} (it writes {outputs.get(config.output).label}; {at_once}; "
             "resumable: a journal beside the index keeps every passage finished)")
    if settings.live_llm == "local":
        st.caption(local_profile(settings).describe())
    view = ExtractionView(box, out.name)
    try:
        with listening(view.on_wait):
            return extract_for_index(docs, settings, out, None, progress=view.on_extract, on_text=view.on_text)
    except Exception as exc:
        raise BuildStopped("Extraction failed", one_line(exc)) from exc
    finally:
        view.close()


def encode_and_save(docs: list[Any], triples: list[Any], out: Path, settings: Settings, extraction: dict,
                    source: dict) -> Any:
    """Encode the passages and triples with the embedder and write the index (atomically) to `out`, with PPR's entity
    graph (so a first comparison with PPR does not wait for it)."""
    from gear.index import build_index

    bar = st.progress(0, text="encoding")

    def progress(stage: str, done: int, total: int) -> None:
        bar.progress(min(100, int(100 * done / max(total, 1))), text=f"{stage}: {done:,} / {total:,}")

    try:
        return build_index(docs, triples, out, encoder_for(settings.embedder), progress=progress,
                           extraction=extraction, source=source, ppr_threshold=settings.ppr_synonym_threshold)
    except Exception as exc:
        raise BuildStopped("Build failed", one_line(exc)) from exc
