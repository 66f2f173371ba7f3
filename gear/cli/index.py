"""`gear index`, `gear info` and `gear export-openie`: building, updating, describing and exporting an index."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from gear.cli.app import app, console, friendly_errors, out, progress_bar, settings_from
from gear.cli.terminal import esc_term, json_text


class IndexGroup(TyperGroup):
    """`gear index`: `build` (the default: `gear index CORPUS --out DIR` needs no command name), `add`, `remove`."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]  # typer's own Context, a subclass of the one it declares
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = ["build", *args]  # the old form: a corpus (or, with --add/--remove, an index) and options
        return super().parse_args(ctx, args)


index_app = typer.Typer(cls=IndexGroup, no_args_is_help=True, add_completion=False,
                        help="Build an index from a corpus, add passages to one, or remove passages from one.")
app.add_typer(index_app, name="index")

# options the commands that read passages share (build and add)
OpenieOpt = Annotated[Path | None, typer.Option("--openie", help="HippoRAG OpenIE JSON with the triples; without it "
                                                "triples are extracted with the configured LLM")]
ChunkWordsOpt = Annotated[int | None, typer.Option("--chunk-words", min=10, help="passage length in words for "
                                                   ".txt/.md (default 120); also splits longer JSON passages")]
WorkDirOpt = Annotated[Path | None, typer.Option("--work-dir", help="extraction journal (default OUT.extract/)")]
ConcurrencyOpt = Annotated[int | None, typer.Option("--concurrency", min=1, help="parallel LLM calls (default: 4 for "
                                                    "remote endpoints; for the embedded model, as many as its "
                                                    "server has slots: GEAR_LLM_PARALLEL)")]
PriceInOpt = Annotated[float | None, typer.Option("--price-in", help="USD per 1M prompt tokens (cost estimate)")]
PriceOutOpt = Annotated[float | None, typer.Option("--price-out", help="USD per 1M completion tokens")]
StyleOpt = Annotated[str, typer.Option("--prompt-style", help="one-shot (paper prompt + worked JSON example) or "
                                                              "paper (the prompt alone)")]
NoSchemaOpt = Annotated[bool, typer.Option("--no-schema", help="do not constrain the answer by a JSON schema")]
GroundedOpt = Annotated[bool, typer.Option("--grounded", help="drop triples whose subject and object both do not "
                                                              "occur in the passage")]
BackendOpt = Annotated[str | None, typer.Option("--backend", help="memory (default) or elasticsearch: also copy the "
                                                                  "index into Elasticsearch")]


def _extract_options(work_dir: Path | None, concurrency: int | None, price_in: float | None,
                     price_out: float | None, style: str, no_schema: bool, grounded: bool, backend: str | None) -> Any:
    from gear.data.reading import InputError
    from gear.extract.bridge import ExtractOptions

    if style not in ("one-shot", "paper"):
        raise InputError(f"--prompt-style must be one-shot or paper, not {style!r}")
    _check_backend(backend)
    return ExtractOptions(work_dir=work_dir, concurrency=concurrency, price_in=price_in, price_out=price_out,
                          style="paper" if style == "paper" else "one-shot", use_schema=not no_schema,
                          require_grounded=grounded)


def _check_backend(backend: str | None) -> None:
    from gear.data.reading import InputError

    if backend not in (None, "memory", "elasticsearch"):
        raise InputError(f"--backend must be memory or elasticsearch, not {backend!r}")


def _load_docs(path: Path, chunk_words: int | None) -> tuple[list, Any]:
    from gear.data.corpus import unique_documents
    from gear.data.text_files import load_any_corpus

    docs, report = load_any_corpus(path, chunk_words)
    return unique_documents(docs, report), report


def _triples_for(docs: list, report: Any, openie: Path | None, settings: Any, out_dir: Path, options: Any
                 ) -> tuple[list, dict]:
    from gear.data.openie import align_openie, load_openie

    if openie is None:
        from gear.extract.bridge import extract_for_index

        return extract_for_index(docs, settings, out_dir, console, options)
    oie, oie_report = load_openie(openie)
    report.warnings += oie_report.warnings
    return align_openie(docs, oie, report), {"source": str(openie)}


def _warn(report: Any) -> None:
    for line in report.summary():
        console.print(f"[yellow]warning:[/yellow] {esc_term(line)}", highlight=False)


def _migrate(out_dir: Path, settings: Any) -> None:
    from gear.index.migrate import migrate_to_elastic

    with progress_bar() as update:
        record = migrate_to_elastic(out_dir, settings, update)
    out.print(f"copied into Elasticsearch: {esc_term(json_text(record, indent=None))}")


@index_app.command()
def build(
    corpus: Annotated[Path, typer.Argument(help="corpus (JSON list/dict, .txt/.md file or folder)")],
    out_dir: Annotated[Path | None, typer.Option("--out", "-o", help="index directory to write")] = None,
    openie: OpenieOpt = None,
    embedder: Annotated[str | None, typer.Option("--embedder", help="all-MiniLM-L6-v2 or all-mpnet-base-v2")] = None,
    chunk_words: ChunkWordsOpt = None,
    add: Annotated[Path | None, typer.Option("--add", hidden=True, help="old form of `gear index add CORPUS MORE`: "
                                             "CORPUS is then the index")] = None,
    remove: Annotated[str | None, typer.Option("--remove", hidden=True, help="old form of `gear index remove "
                                               "CORPUS IDS`: CORPUS is then the index")] = None,
    work_dir: WorkDirOpt = None,
    concurrency: ConcurrencyOpt = None,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    style: StyleOpt = "one-shot",
    no_schema: NoSchemaOpt = False,
    grounded: GroundedOpt = False,
    backend: BackendOpt = None,
) -> None:
    """Build an index from a corpus: triples from an OpenIE file or extracted by the LLM (resumable).

    `gear index CORPUS …` (the command's name left out) builds too."""
    import time

    with friendly_errors():
        from gear.data.reading import InputError
        from gear.embed import Encoder
        from gear.index import build_index

        options = _extract_options(work_dir, concurrency, price_in, price_out, style, no_schema, grounded, backend)
        settings = settings_from(embedder=embedder)
        if add is not None and remove is not None:
            raise InputError("use either --add or --remove, not both")
        if add is not None:  # the old form, where the positional argument is the index
            _add_passages(corpus, add, openie, chunk_words, settings, options, backend)
            return
        if remove is not None:
            _remove_passages(corpus, remove, settings, backend)
            return
        if out_dir is None:
            raise InputError("--out INDEX_DIR is required to build an index")
        started = time.perf_counter()
        docs, report = _load_docs(corpus, chunk_words)
        triples, extraction = _triples_for(docs, report, openie, settings, out_dir, options)
        _warn(report)
        encoder = Encoder(settings.embedder, bf16=settings.embed_bf16, device=settings.device)
        with progress_bar() as update:
            manifest = build_index(docs, triples, out_dir, encoder, progress=update, extraction=extraction,
                                   source={"corpus": str(corpus), "openie": str(openie) if openie else None,
                                           "chunk_words": chunk_words})
        seconds = time.perf_counter() - started
        out.print(f"indexed {manifest.n_passages} passages, {manifest.n_triples} triples, {manifest.n_entities} "
                  f"entities with {manifest.embedder} into {out_dir} in {seconds:.1f} s")
        if backend == "elasticsearch":
            _migrate(out_dir, settings)


@index_app.command("add")
def add_command(
    index_dir: Annotated[Path, typer.Argument(help="the index to add to")],
    corpus: Annotated[Path, typer.Argument(help="passages to add (any corpus `gear index` reads); those already in "
                                                "the index are skipped")],
    openie: OpenieOpt = None,
    chunk_words: ChunkWordsOpt = None,
    work_dir: WorkDirOpt = None,
    concurrency: ConcurrencyOpt = None,
    price_in: PriceInOpt = None,
    price_out: PriceOutOpt = None,
    style: StyleOpt = "one-shot",
    no_schema: NoSchemaOpt = False,
    grounded: GroundedOpt = False,
    backend: BackendOpt = None,
) -> None:
    """Add passages to an index without re-encoding the existing ones (their ids stay; new ones come after)."""
    with friendly_errors():
        options = _extract_options(work_dir, concurrency, price_in, price_out, style, no_schema, grounded, backend)
        _add_passages(index_dir, corpus, openie, chunk_words, settings_from(), options, backend)


@index_app.command("remove")
def remove_command(
    index_dir: Annotated[Path, typer.Argument(help="the index to remove from")],
    ids: Annotated[str, typer.Argument(help="passage ids: 3 or 3,7-9 (`gear retrieve` and the app show them)")],
    backend: BackendOpt = None,
) -> None:
    """Remove passages (and their triples) by id; the passages after each removed one are renumbered."""
    with friendly_errors():
        _check_backend(backend)
        _remove_passages(index_dir, ids, settings_from(), backend)


def _add_passages(index_dir: Path, corpus: Path, openie: Path | None, chunk_words: int | None, settings: Any,
                  options: Any, backend: str | None) -> None:
    from gear.embed import Encoder
    from gear.index import Manifest
    from gear.index.update import add_passages, saved_passages

    manifest = Manifest.read(index_dir)  # fails early, with a clear message, on a missing index
    encoder = Encoder(manifest.embedder, bf16=settings.embed_bf16, device=settings.device)
    docs, report = _load_docs(corpus, chunk_words)
    titles, texts, _, _ = saved_passages(index_dir)
    known = set(zip(titles, texts, strict=True))
    fresh = [d for d in docs if (d.title, d.text) not in known]
    if len(fresh) < len(docs):
        console.print(f"{len(docs) - len(fresh)} passages are already in the index: skipped", highlight=False)
    triples, extraction = _triples_for(fresh, report, openie, settings, index_dir, options) if fresh else ([], {})
    _warn(report)
    with progress_bar() as update:
        new, added = add_passages(index_dir, fresh, triples, encoder, progress=update, source=str(corpus),
                                  extraction=extraction)
    out.print(f"added {added} passages ({new.n_triples - manifest.n_triples} triples) to {index_dir}: "
              f"{new.n_passages} passages, {new.n_triples} triples, {new.n_entities} entities; existing ids "
              f"unchanged, new ones are {manifest.n_passages}..{new.n_passages - 1}")
    _copy_to_elastic_if_kept_there(index_dir, manifest, settings, backend)


def _remove_passages(index_dir: Path, ids_text: str, settings: Any, backend: str | None) -> None:
    from gear.data.reading import InputError
    from gear.embed import Encoder
    from gear.index import Manifest
    from gear.index.update import parse_ids, remove_passages

    manifest = Manifest.read(index_dir)
    try:
        ids = parse_ids(ids_text)
    except ValueError as exc:
        raise InputError(f"passage ids look like 3,5,10-12 ({exc})") from None
    encoder = Encoder(manifest.embedder, bf16=settings.embed_bf16, device=settings.device)
    with progress_bar() as update:
        new, mapping = remove_passages(index_dir, ids, encoder, progress=update)
    shifted = sum(1 for old, new_id in mapping.items() if old != new_id)
    out.print(f"removed {len(ids)} passages ({manifest.n_triples - new.n_triples} triples) from {index_dir}: "
              f"{new.n_passages} passages, {new.n_triples} triples remain; passage ids are row numbers, so "
              f"{shifted} remaining passages were renumbered (ids above each removed id shift down)")
    _copy_to_elastic_if_kept_there(index_dir, manifest, settings, backend)


def _copy_to_elastic_if_kept_there(index_dir: Path, manifest: Any, settings: Any, backend: str | None) -> None:
    """An index also kept in Elasticsearch (or asked to be) is copied there again after a change."""
    if backend == "elasticsearch" or manifest.backend == "elasticsearch" or manifest.elasticsearch:
        _migrate(index_dir, settings)


@app.command()
def info(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    verify: Annotated[bool, typer.Option("--verify", help="check every file's checksum")] = False,
) -> None:
    """Show an index's manifest: counts, embedder, triple density, the LLM and tokens used for extraction."""
    with friendly_errors():
        import numpy as np

        from gear.index import Manifest, verify_index

        m = Manifest.read(index_dir)
        out.print(f"{index_dir}: {m.n_passages} passages, {m.n_triples} triples, {m.n_entities} entities")
        out.print(f"embedder {m.embedder} ({m.dims} dims), backend {m.backend}, built {m.created}")
        ex = m.extraction or {}
        if ex.get("method") == "llm":
            out.print(f"triples extracted by {ex.get('llm')} model {ex.get('model')} ({ex.get('prompt')}, "
                      f"{ex.get('style')}{', JSON schema' if ex.get('json_schema') else ''}): "
                      f"{ex.get('prompt_tokens', 0):,} prompt + {ex.get('completion_tokens', 0):,} completion tokens, "
                      f"{ex.get('llm_seconds', 0):.0f} s of LLM time" + (f", ${ex['usd']}" if "usd" in ex else ""),
                      highlight=False)
            dropped = ex.get("dropped") or {}
            if any(dropped.values()):
                out.print("dropped triples: " + ", ".join(f"{v} {k}" for k, v in dropped.items() if v))
        elif ex:
            shown = {k: v for k, v in ex.items() if k != "updates"}
            out.print(f"triples from: {esc_term(json_text(shown, indent=None))}", highlight=False)
        for change in ex.get("updates", []):
            what = change.get("source") or ",".join(map(str, change.get("ids", [])[:10]))
            out.print(f"update {change.get('at')}: {change.get('op')} {change.get('passages')} passages, "
                      f"{change.get('triples')} triples ({what})", highlight=False)
        density_file = index_dir / "triples_per_passage.npy"
        if density_file.exists():
            counts = np.load(density_file)
            d = m.triples_per_passage
            out.print(f"triple density ρ_t: mean {d.get('mean', 0):.2f}, median {d.get('median', 0):.0f}, "
                      f"max {d.get('max', 0):.0f}, passages without triples {d.get('zero', 0):.0f}")
            edges = [0, 1, 3, 5, 10, 15, 20, 30, 50, 10**9]
            hist, _ = np.histogram(counts, bins=edges)
            peak = max(int(hist.max()), 1)
            for lo, hi, n in zip(edges[:-1], edges[1:], hist, strict=True):
                label = f"{lo}-{hi - 1}" if hi < 10**9 else f"{lo}+"
                out.print(f"  {label:>7} {'█' * round(40 * n / peak):<40} {n}")
        if verify:
            problems = verify_index(index_dir)
            out.print("checksums: all files intact" if not problems else "checksums: " + "; ".join(problems))
            if problems:
                raise typer.Exit(1)


def openie_documents(index_dir: Path) -> list[dict[str, Any]]:
    """The index's passages and triples in HippoRAG's OpenIE format; named entities come from the extraction journal
    when it is still there, else from the triples' subjects and objects."""
    from gear.extract.runner import Journal, openie_document
    from gear.index import Manifest
    from gear.index.update import saved_passages

    manifest = Manifest.read(index_dir)
    titles, texts, spo, owner = saved_passages(index_dir)
    by_passage: list[list[tuple[str, str, str]]] = [[] for _ in titles]
    for t, pid in zip(spo, owner, strict=True):
        by_passage[int(pid)].append(t)
    entities_by_text: dict[tuple[str, str], list[str]] = {}
    work_dir = (manifest.extraction or {}).get("work_dir")
    if work_dir and Path(work_dir).is_dir():
        for record in Journal(Path(work_dir)).records.values():
            entities_by_text[(record.title, record.text)] = record.entities
    docs = []
    for title, text, triples in zip(titles, texts, by_passage, strict=True):
        entities = entities_by_text.get((title, text))
        if entities is None:
            entities = list(dict.fromkeys(e for t in triples for e in (t[0], t[2])))
        docs.append(openie_document(title, text, entities, triples))
    return docs


@app.command("export-openie")
def export_openie(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    out_file: Annotated[Path, typer.Argument(help="OpenIE JSON file to write")],
) -> None:
    """Write the index's passages and triples as HippoRAG OpenIE JSON (readable by `gear index --openie`), with how
    the triples were extracted (model, prompt version, answer shape, tokens, time) under "extraction"."""
    with friendly_errors():
        from gear.extract.runner import write_openie
        from gear.index import Manifest

        docs = openie_documents(index_dir)
        extraction = {k: v for k, v in (Manifest.read(index_dir).extraction or {}).items() if k != "work_dir"}
        write_openie(out_file, docs, {"extraction": extraction} if extraction else None)
        out.print(f"wrote {len(docs)} passages, {sum(len(d['extracted_triples']) for d in docs)} triples to {out_file}")
