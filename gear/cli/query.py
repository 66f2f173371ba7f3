"""`gear retrieve` and `gear ask`: one question, single-step retrieval or the LLM methods with every step narrated."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from gear import methods
from gear.cli.app import (
    LLMCacheOpt,
    LLMOpt,
    MaxIterationsOpt,
    MethodOpt,
    NoDiversityOpt,
    PromptsOpt,
    RetrieverOpt,
    app,
    console,
    friendly_errors,
    out,
    settings_from,
)
from gear.cli.terminal import esc_term, json_text

if TYPE_CHECKING:
    from gear.events import Event


@app.command()
def retrieve(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    question: Annotated[str, typer.Argument(help="the question")],
    retriever: RetrieverOpt = "hybrid",
    method: MethodOpt = "none",
    k: Annotated[int, typer.Option("-k", help="passages to retrieve (base k in single-step runs)")] = methods.DEPTH,
    no_diversity: NoDiversityOpt = False,
    score_mode: Annotated[str, typer.Option("--score-mode", help="exact (paper) or fast")] = "exact",
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Retrieve passages for one question (base retriever, optionally with graph expansion)."""
    with friendly_errors():
        from gear.agent.engine import Engine

        settings = settings_from(retriever=retriever, method=method, diversity=not no_diversity, score_mode=score_mode)
        engine = Engine.open(index_dir, settings)
        run = engine.retrieve(question, k=k)
        top = engine.backend.passages(run.ids[:k])
        if as_json:
            typer.echo(json_text({"question": question, "retriever": retriever, "method": method, "k": k,
                                  "passages": [{"id": p.id, "title": p.title, "score": s.score, "text": p.text}
                                               for p, s in zip(top, run.ranked, strict=False)],
                                  "timings_ms": run.timings_ms}, indent=2))
            return
        table = Table(title=f"{retriever}{'+' + method if method != 'none' else ''}: {esc_term(question)}")
        for col in ("rank", "id", "title", "score"):
            table.add_column(col)
        for n, (p, s) in enumerate(zip(top, run.ranked, strict=False), 1):
            table.add_row(str(n), str(p.id), esc_term(p.title), f"{s.score:.4f}")
        out.print(table)
        out.print(" ".join(f"{k}: {v:.0f} ms" for k, v in run.timings_ms.items()))


@app.command()
def ask(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    question: Annotated[str, typer.Argument(help="the question")],
    method: MethodOpt = "gear",
    retriever: RetrieverOpt = "hybrid",
    llm: LLMOpt = None,
    llm_cache: LLMCacheOpt = None,
    prompts: PromptsOpt = None,
    max_iterations: MaxIterationsOpt = None,
    trace_out: Annotated[Path | None, typer.Option("--trace", help="save the run's trace as JSON")] = None,
    k: Annotated[int, typer.Option("-k", help=f"passages a single-step method (SyncGE) retrieves: {methods.DEPTH} "
                                              "by default, as on the app's pages, so a question's R@k is the "
                                              "same there")] = methods.DEPTH,
    quiet_llm: Annotated[bool, typer.Option("--no-stream", help="do not show the model's text as it writes")]
    = False,
    gold: Annotated[str | None, typer.Option("--gold", "-g", help="ids of the passages that answer it, ID[,ID]: the "
                                                                  "run is diagnosed against them")] = None,
    answer: Annotated[list[str] | None, typer.Option("--answer", "-a", help="the right answer (with --gold; repeat "
                                                                            "for aliases)")] = None,
    live: Annotated[bool, typer.Option("--live", help="ask the model afresh, past the recorded answers, and say "
                                                      "whether and where the run differs from the recorded one")]
    = False,
) -> None:
    """Run SyncGE or the GeAR agent on one question and print every step (the model's text streams to stderr);
    with --gold, where each of those passages was lost and the proposed error category (gear diagnose).

    Recorded answers replay: the same question on the same index with the same settings gives the same run here, in
    the app and from Python (one answer store, in the data folder). --live asks the model again."""
    with friendly_errors():
        from gear.agent.engine import Engine
        from gear.diagnosis.gold_marks import parse_ids, passages_of
        from gear.trace import Trace

        settings = settings_from(retriever=retriever, method=method, llm=llm, llm_cache_dir=llm_cache,
                                 prompts=prompts, max_iterations=max_iterations)
        engine = Engine.open(index_dir, settings)
        gold_ids = parse_ids(gold) if gold is not None else []
        texts = passages_of(engine.backend, gold_ids)  # a bad id stops here, before any LLM call
        again = None
        if live:
            from gear.agent.recorded import ask_again

            again = ask_again(engine, question, settings, k=k, gold=gold_ids, answers=answer or [])
            console.print("asking the model afresh (the recorded run: "
                          f"{esc_term(again.why) if again.why else 'replayed'})", highlight=False)
        trace = Trace()
        trace.subscribe(narrator(stream=not quiet_llm))
        run = engine.retrieve(question, k=k, trace=trace, gold=gold_ids, answers=answer or [],
                              llm=again.llm if again is not None else None)
        cost = run.trace.cost()
        if cost.requests:  # what its answers cost the model, "when recorded" for a replay (gear.trace.cost)
            out.print(f"LLM cost: {cost.words()}", highlight=False)
        differs = again.difference(run.trace) if again is not None else None
        if differs is not None:
            for line in differs.lines():
                out.print(esc_term(line), highlight=False)
        if trace_out:
            run.trace.save(trace_out)
            console.print(f"trace saved to {esc_term(trace_out)}")
        if gold_ids:
            from gear.cli.diagnose import print_diagnosis
            from gear.diagnosis.gold_marks import diagnose_marked

            print_diagnosis(diagnose_marked(run.trace, gold_ids, answer or None, passages=texts))
            keep = f"gear qa add {index_dir} {json.dumps(question)} --gold {','.join(map(str, gold_ids))}" + \
                "".join(f" --answer {json.dumps(a)}" for a in answer or [])
            console.print(f"keep it as a test question: {esc_term(keep)}", highlight=False)


def narrator(*, stream: bool) -> Callable[[Event], None]:
    """A trace listener printing each event's narration to stdout and, with `stream`, the model's text to stderr
    while it is written (dim, so it reads as work in progress). A wait for the model's turn (another process or
    thread holds it) is one stderr line each time the number ahead changes, so a wait never looks like a hang."""
    from gear.events import LLMText, LLMWaiting
    from gear.trace.narrate import narrate

    shown: dict[str, Any] = {"step": "", "chars": 0, "ahead": 0}

    def listen(event: Event) -> None:
        if isinstance(event, LLMWaiting):  # every poll of the queue: print changes only, nothing once it is our turn
            if event.ahead != shown["ahead"] and event.ahead > 0:
                console.print(f"    [dim]{esc_term(event.step)}: waiting for the model: {event.ahead} ahead[/dim]",
                              highlight=False)
            shown["ahead"] = event.ahead
            return
        if isinstance(event, LLMText):
            if stream:
                if event.step != shown["step"] or len(event.text) < shown["chars"]:
                    shown.update(step=event.step, chars=0)
                    console.print(f"    [dim]{esc_term(event.step)} ▸[/dim] ", end="", highlight=False)
                console.print(esc_term(event.text[shown["chars"]:]), end="", style="dim", highlight=False,
                              soft_wrap=True)
                shown["chars"] = len(event.text)
            return
        if shown["chars"]:
            console.print()
            shown.update(step="", chars=0)
        for line in narrate(event):
            out.print(line, highlight=False)

    return listen
