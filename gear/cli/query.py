"""`gear retrieve` and `gear ask`: one question, single-step retrieval or the LLM methods with every step narrated."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from gear.cli.app import ExpandOpt, RetrieverOpt, app, console, friendly_errors, out, settings_from


@app.command()
def retrieve(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    question: Annotated[str, typer.Argument(help="the question")],
    retriever: RetrieverOpt = "hybrid",
    expand: ExpandOpt = "none",
    k: Annotated[int, typer.Option("-k", help="passages to retrieve (base k in single-step runs)")] = 15,
    no_diversity: Annotated[bool, typer.Option("--no-diversity", help="turn the diversity penalty off")] = False,
    score_mode: Annotated[str, typer.Option("--score-mode", help="exact (paper) or fast")] = "exact",
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Retrieve passages for one question (base retriever, optionally with graph expansion)."""
    with friendly_errors():
        from gear.agent.engine import Engine

        settings = settings_from(retriever=retriever, expand=expand, diversity=not no_diversity, score_mode=score_mode)
        engine = Engine.open(index_dir, settings)
        run = engine.retrieve(question, k=k)
        top = engine.backend.passages(run.ids[:k])
        if as_json:
            out.print_json(json.dumps({"question": question, "retriever": retriever, "expand": expand, "k": k,
                                       "passages": [{"id": p.id, "title": p.title, "score": s.score, "text": p.text}
                                                    for p, s in zip(top, run.ranked, strict=False)],
                                       "timings_ms": run.timings_ms}, ensure_ascii=False))
            return
        table = Table(title=f"{retriever}{'+' + expand if expand != 'none' else ''}: {question}")
        for col in ("rank", "id", "title", "score"):
            table.add_column(col)
        for n, (p, s) in enumerate(zip(top, run.ranked, strict=False), 1):
            table.add_row(str(n), str(p.id), p.title, f"{s.score:.4f}")
        out.print(table)
        out.print(" ".join(f"{k}: {v:.0f} ms" for k, v in run.timings_ms.items()))


@app.command()
def ask(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    question: Annotated[str, typer.Argument(help="the question")],
    expand: ExpandOpt = "gear",
    retriever: RetrieverOpt = "hybrid",
    llm: Annotated[str | None, typer.Option("--llm", help="local, openai, replay or record")] = None,
    llm_cache: Annotated[Path | None, typer.Option("--llm-cache", help="record/replay cache directory")] = None,
    max_iterations: Annotated[int | None, typer.Option("--max-iterations")] = None,
    trace_out: Annotated[Path | None, typer.Option("--trace", help="save the run's trace as JSON")] = None,
    k: Annotated[int, typer.Option("-k", help="passages to show")] = 10,
) -> None:
    """Run SyncGE or the GeAR agent on one question and print every step."""
    with friendly_errors():
        from gear.agent.engine import Engine
        from gear.trace.narrate import narrate

        settings = settings_from(retriever=retriever, expand=expand, llm=llm, llm_cache_dir=llm_cache,
                             max_iterations=max_iterations)
        engine = Engine.open(index_dir, settings)
        from gear.trace import Trace

        trace = Trace()
        trace.subscribe(lambda event: [out.print(line, highlight=False) for line in narrate(event)])
        run = engine.retrieve(question, k=k, trace=trace)
        if trace_out:
            run.trace.save(trace_out)
            console.print(f"trace saved to {trace_out}")
