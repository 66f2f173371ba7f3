"""The `gear` command line: index, retrieve, ask, eval, info, app. Errors are one line, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

app = typer.Typer(add_completion=False, no_args_is_help=True, help="GeAR: graph-enhanced retrieval agent.")
console = Console(stderr=True)
out = Console()


def _user_errors() -> tuple[type[BaseException], ...]:
    from gear.corpus import InputError
    from gear.embed import EmbedderError
    from gear.store.base import IndexError_
    from gear.trace import TraceError

    errors: list[type[BaseException]] = [InputError, IndexError_, EmbedderError, TraceError]
    try:
        from gear.llm import LLMError

        errors.append(LLMError)
    except ImportError:  # the LLM layer is optional for retrieval-only use
        pass
    return tuple(errors)


@contextmanager
def friendly_errors() -> Iterator[None]:
    try:
        yield
    except ValidationError as exc:
        first = exc.errors()[0]
        where = escape(".".join(str(x) for x in first["loc"]))
        console.print(f"[red]error:[/red] setting {where}: {escape(first['msg'])}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except _user_errors() as exc:
        # escaped: paths like "data/[v2]/x.json" are text, not markup; soft_wrap: one line, even when piped
        console.print(f"[red]error:[/red] {escape(str(exc))}", markup=True, highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


@contextmanager
def progress_bar() -> Iterator[Callable[[str, int, int], None]]:
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console, transient=False) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def _settings(**overrides: Any) -> Any:
    from gear.config import Settings

    return Settings().with_(**overrides)


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise typer.BadParameter(f"--k expects comma-separated integers, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise typer.BadParameter("--k needs positive cut-offs")
    return ks


RetrieverOpt = Annotated[str, typer.Option("--retriever", "-r", help="bm25, dense or hybrid")]
ExpandOpt = Annotated[str, typer.Option("--expand", "-e", help="none, naive, sync or gear")]


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
        from gear.engine import Engine

        settings = _settings(retriever=retriever, expand=expand, diversity=not no_diversity, score_mode=score_mode)
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
        from gear.engine import Engine
        from gear.narrate import narrate

        settings = _settings(retriever=retriever, expand=expand, llm=llm, llm_cache_dir=llm_cache,
                             max_iterations=max_iterations)
        engine = Engine.open(index_dir, settings)
        from gear.trace import Trace

        trace = Trace()
        trace.subscribe(lambda event: [out.print(line, highlight=False) for line in narrate(event)])
        run = engine.retrieve(question, k=k, trace=trace)
        if trace_out:
            run.trace.save(trace_out)
            console.print(f"trace saved to {trace_out}")


@app.command(name="eval")
def eval_(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    qa: Annotated[Path, typer.Argument(help="QA set (MuSiQue, HippoRAG, HotpotQA or 2Wiki schema)")],
    retriever: RetrieverOpt = "hybrid",
    expand: ExpandOpt = "none",
    no_diversity: Annotated[bool, typer.Option("--no-diversity")] = False,
    ks: Annotated[str, typer.Option("--k", help="recall cut-offs")] = "5,10,15",
    json_out: Annotated[Path | None, typer.Option("--json", help="write the report as JSON")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="only the first N questions")] = None,
    score_mode: Annotated[str, typer.Option("--score-mode", help="exact (paper) or fast")] = "exact",
    llm: Annotated[str | None, typer.Option("--llm", help="local, openai, replay or record")] = None,
    llm_cache: Annotated[Path | None, typer.Option("--llm-cache")] = None,
    max_iterations: Annotated[int | None, typer.Option("--max-iterations")] = None,
    traces: Annotated[Path | None, typer.Option("--traces", help="save each question's trace here")] = None,
) -> None:
    """Recall@k (and EM/F1, tokens for LLM methods) over a QA set."""
    with friendly_errors():
        from gear.corpus import load_qa
        from gear.engine import Engine
        from gear.eval import evaluate

        cutoffs = _ks(ks)
        settings = _settings(retriever=retriever, expand=expand, diversity=not no_diversity, score_mode=score_mode,
                             llm=llm, llm_cache_dir=llm_cache, max_iterations=max_iterations)
        questions, report_in = load_qa(qa)
        for line in report_in.summary():
            console.print(f"[yellow]warning:[/yellow] {line}", highlight=False)
        questions = questions[:limit] if limit else questions
        engine = Engine.open(index_dir, settings)
        with progress_bar() as update:
            report = evaluate(engine, questions, settings, cutoffs,
                              progress=lambda done, total, _id: update("questions", done, total), trace_dir=traces)
        data = report.to_dict()
        _print_report(data, cutoffs)
        if json_out:
            report.save(json_out)
            console.print(f"report saved to {json_out}")


def _print_report(data: dict[str, Any], ks: list[int]) -> None:
    name = data["retriever"] + ("" if data["method"] == "none" else f" + {data['method']}")
    table = Table(title=f"{name}: {data['n_questions']} questions")
    table.add_column("group")
    table.add_column("n")
    for k in ks:
        table.add_column(f"R@{k}")
    table.add_row("all", str(data["n_questions"]), *(f"{data['recall'][str(k)]:.1f}" for k in ks))
    for hop, row in data["by_hop"].items():
        table.add_row(hop, str(row["n"]), *(f"{row['recall'][str(k)]:.1f}" for k in ks))
    out.print(table)
    if "em" in data:
        out.print(f"EM {data['em']:.1f}  F1 {data['f1']:.1f}")
    if "tokens_per_question" in data:
        t = data["tokens_per_question_detail"]
        out.print(f"tokens/question: {data['tokens_per_question']:.0f} ({t['prompt']:.0f} prompt + "
                  f"{t['completion']:.0f} completion)")
    if "recall_per_iteration" in data:
        for n, row in data["recall_per_iteration"].items():
            out.print(f"after iteration {n}: " + "  ".join(f"R@{k} {v:.1f}" for k, v in row.items()))
    if data.get("skipped"):
        out.print(f"{len(data['skipped'])} questions skipped (gold passages not in the index)")
    wall = data["latency_ms"].get("wall")
    if wall:
        out.print(f"latency per run: mean {wall['mean']:.0f} ms, p50 {wall['p50']:.0f} ms, p95 {wall['p95']:.0f} ms")


@app.command(name="app")
def run_app(
    port: Annotated[int, typer.Option("--port")] = 8501,
    address: Annotated[str, typer.Option("--address")] = "127.0.0.1",
) -> None:
    """Start the Streamlit app."""
    root = Path(__file__).resolve().parent.parent
    cmd = [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), "--server.port", str(port),
           "--server.address", address, "--browser.gatherUsageStats", "false"]
    raise typer.Exit(subprocess.call(cmd, cwd=root, env={**os.environ}))


def main() -> None:
    from gear import cli_elastic, cli_index  # noqa: F401 - they register their commands on `app`

    app()


if __name__ == "__main__":
    main()
