"""`gear index` and `gear info`: building, updating and describing an index directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from gear.cli import _settings, app, console, friendly_errors, out, progress_bar


@app.command()
def index(
    corpus: Annotated[Path, typer.Argument(help="corpus JSON (HippoRAG list or HotpotQA dict)")],
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="index directory to write")],
    openie: Annotated[Path | None, typer.Option("--openie", help="HippoRAG OpenIE JSON with the triples")] = None,
    embedder: Annotated[str | None, typer.Option("--embedder", help="all-MiniLM-L6-v2 or all-mpnet-base-v2")] = None,
) -> None:
    """Build an index from a corpus and its triples."""
    import time

    with friendly_errors():
        from gear.corpus import load_corpus, load_openie, unique_documents
        from gear.embed import Encoder
        from gear.index import align_openie, build_index

        settings = _settings(embedder=embedder)
        started = time.perf_counter()
        docs, report = load_corpus(corpus)
        docs = unique_documents(docs, report)
        if openie is None:
            from gear.extract_cli import extract_for_index

            triples, extraction = extract_for_index(docs, settings, out_dir, console)
        else:
            oie, oie_report = load_openie(openie)
            report.warnings += oie_report.warnings
            triples, extraction = align_openie(docs, oie, report), {"source": str(openie)}
        for line in report.summary():
            console.print(f"[yellow]warning:[/yellow] {line}", highlight=False)
        encoder = Encoder(settings.embedder, bf16=settings.embed_bf16)
        with progress_bar() as update:
            manifest = build_index(docs, triples, out_dir, encoder, progress=update, extraction=extraction,
                                   source={"corpus": str(corpus), "openie": str(openie) if openie else None})
        seconds = time.perf_counter() - started
        out.print(f"indexed {manifest.n_passages} passages, {manifest.n_triples} triples, {manifest.n_entities} "
                  f"entities with {manifest.embedder} into {out_dir} in {seconds:.1f} s")


@app.command()
def info(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    verify: Annotated[bool, typer.Option("--verify", help="check every file's checksum")] = False,
) -> None:
    """Show an index's manifest: counts, embedder, triple density."""
    with friendly_errors():
        import numpy as np

        from gear.index import Manifest, verify_index

        m = Manifest.read(index_dir)
        out.print(f"{index_dir}: {m.n_passages} passages, {m.n_triples} triples, {m.n_entities} entities")
        out.print(f"embedder {m.embedder} ({m.dims} dims), backend {m.backend}, built {m.created}")
        if m.extraction:
            out.print(f"triples from: {json.dumps(m.extraction, ensure_ascii=False)}")
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
