"""`gear eval`: Recall@k, EM/F1 and tokens over a QA set, printed as a table and saved as JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

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
    parse_ks,
    progress_bar,
    settings_from,
)
from gear.cli.terminal import esc_term

QAArg = Annotated[Path | None, typer.Argument(help="QA set (MuSiQue, HippoRAG, HotpotQA or 2Wiki schema); default: the "
                                                 "index's own (gear qa)")]
KsOpt = Annotated[str, typer.Option("--k", help="recall cut-offs")]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="only the first N questions")]
ScoreModeOpt = Annotated[str, typer.Option("--score-mode", help="exact (paper) or fast")]
StartOpt = Annotated[int, typer.Option("--start", help="skip the first N questions (with --limit: a subset)")]
EveryOpt = Annotated[int, typer.Option("--every", min=1, help="take every N-th question (a subset across hop types)")]
ProtocolOpt = Annotated[str, typer.Option(
    "--protocol", help="one-run: each question one run at the largest k, every R@k from it (R@k never falls as k "
                       "grows); paper: the paper's Table 1 protocol, a single-step method run once per k with k "
                       "passages")]


@app.command(name="eval")
def eval_(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    qa: QAArg = None,
    retriever: RetrieverOpt = "hybrid",
    method: MethodOpt = "none",
    no_diversity: NoDiversityOpt = False,
    ks: KsOpt = "5,10,15",
    json_out: Annotated[Path | None, typer.Option("--json", help="write the report as JSON")] = None,
    limit: LimitOpt = None,
    score_mode: ScoreModeOpt = "exact",
    llm: LLMOpt = None,
    llm_cache: LLMCacheOpt = None,
    prompts: PromptsOpt = None,
    start: StartOpt = 0,
    every: EveryOpt = 1,
    max_iterations: MaxIterationsOpt = None,
    traces: Annotated[Path | None, typer.Option("--traces", help="save each question's trace here")] = None,
    protocol: ProtocolOpt = "one-run",
) -> None:
    """Recall@k (and EM/F1, tokens for LLM methods) over a QA set."""
    with friendly_errors():
        from gear.agent.engine import Engine
        from gear.eval.report import evaluate

        check_protocol(protocol)
        cutoffs = parse_ks(ks)
        settings = eval_settings(retriever=retriever, method=method, no_diversity=no_diversity, score_mode=score_mode,
                                 llm=llm, llm_cache=llm_cache, prompts=prompts, max_iterations=max_iterations)
        questions = eval_questions(index_dir, qa, start=start, every=every, limit=limit)
        engine = Engine.open(index_dir, settings)
        with progress_bar() as update:
            report = evaluate(engine, questions, settings, cutoffs,
                              progress=lambda done, total, _id: update("questions", done, total), trace_dir=traces,
                              protocol=protocol)
        data = report.to_dict()
        _print_report(data, cutoffs)
        if json_out:
            report.save(json_out)
            console.print(f"report saved to {esc_term(json_out)}")


def check_protocol(protocol: str) -> None:
    from gear.eval.protocol import PROTOCOLS

    if protocol not in PROTOCOLS:
        raise typer.BadParameter(f"{protocol!r}: choose {' or '.join(PROTOCOLS)}", param_hint="--protocol")


def eval_settings(*, retriever: str, method: str, no_diversity: bool, score_mode: str, llm: str | None,
                  llm_cache: Path | None, prompts: str | None, max_iterations: int | None) -> Any:
    """The settings an evaluation runs with: GEAR_* variables and .env, with the evaluation's options on top (`gear
    eval` and every cell of `gear sweep`)."""
    return settings_from(retriever=retriever, method=method, diversity=not no_diversity, score_mode=score_mode,
                         llm=llm, llm_cache_dir=llm_cache, prompts=prompts, max_iterations=max_iterations)


def eval_questions(index_dir: Path, qa: Path | None, *, start: int, every: int, limit: int | None) -> list[Any]:
    """The questions an evaluation asks: the QA file (or the index's own), its warnings printed, then the subset
    --start, --every and --limit choose."""
    from gear.data.questions import load_qa

    questions, report_in = load_qa(qa if qa is not None else own_qa_file(index_dir))
    for line in report_in.summary():
        console.print(f"[yellow]warning:[/yellow] {esc_term(line)}", highlight=False)
    questions = questions[start::every]
    return questions[:limit] if limit else questions


def own_qa_file(index_dir: Path) -> Path:
    """The index's own QA set (gear.data.qa_set), when no QA file is named; one line when it has none yet."""
    from gear.data.qa_set import load_own_qa, qa_path, require_index

    if not load_own_qa(require_index(index_dir)):
        raise typer.BadParameter(f"{index_dir} has no questions of its own yet ({qa_path(index_dir).name}): name a "
                                 "QA file, or add questions with `gear qa add` or the Ask page", param_hint="QA")
    return qa_path(index_dir)


def _print_report(data: dict[str, Any], ks: list[int]) -> None:
    from gear.eval.protocol import per_cutoff, source_note, traced_k  # imported when used, as evaluate is
    from gear.eval.report import cost_words, gold_note

    name = data["retriever"] + ("" if data["method"] == "none" else f" + {data['method']}")
    separate = per_cutoff(data)
    table = Table(title=f"{name}: {data['n_questions']} questions")
    table.add_column("group")
    table.add_column("n")
    for k in ks:
        table.add_column(f"R@{k}")
    table.add_row("all", str(data["n_questions"]), *(f"{data['recall'][str(k)]:.1f}" for k in ks))
    groups = data["by_hop"]
    if set(groups) != {"all"}:  # one group of questions without a hop type would repeat the "all" row
        for hop, row in groups.items():
            # questions without a hop type (the group gear.data calls "all") beside MuSiQue's 2hop, 3hop1, …
            table.add_row("no hop type" if hop == "all" else esc_term(hop), str(row["n"]),
                          *(f"{row['recall'][str(k)]:.1f}" for k in ks))
    out.print(table)
    if "em" in data:
        out.print(f"EM {data['em']:.1f}  F1 {data['f1']:.1f}")
    if "tokens_per_question" in data:
        t = data["tokens_per_question_detail"]
        out.print(f"tokens/question: {data['tokens_per_question']:.0f} ({t['prompt']:.0f} prompt + "
                  f"{t['completion']:.0f} completion)")
    if cost := cost_words(data):
        out.print(f"cost/question: {cost}", highlight=False)
    if "iterations_mean" in data:
        sec = data["seconds_per_question"]
        out.print(f"iterations/question {data['iterations_mean']:.2f}, LLM calls/question "
                  f"{data['llm_calls_per_question']:.1f} ({data['memo_calls']} answered by the memo), seconds/question "
                  f"p50 {sec['p50']:.1f} (mean {sec['mean']:.1f}), verdicts rejected {data['verdicts_rejected']}, "
                  f"queries repeated {data['queries_repeated']}")
    if "recall_per_iteration" in data:
        for n, row in data["recall_per_iteration"].items():
            out.print(f"after iteration {n}: " + "  ".join(f"R@{k} {v:.1f}" for k, v in row.items()))
    for run, diag in data.get("diagnosis", {}).items():  # gear.diagnosis: `gear diagnose` has the details
        found_k = f"final@{diag['k']}"
        lost = ", ".join(f"{found_k if stage == 'final@k' else stage} {n}" for stage, n in diag["lost_at"].items())
        out.print(f"{run}{f' (the k={traced_k(ks)} run)' if separate else ''}: gold passages found "
                  f"{found_line(diag, [traced_k(ks)] if separate else ks)}; lost at {lost or '—'}; categories "
                  + ", ".join(f"{c} {n}" for c, n in diag["categories"].items()), highlight=False)
        hops = diag.get("by_hop") or {}
        if set(hops) != {"all"}:  # by question type (MuSiQue's hops, 2Wiki's comparison, inference, …)
            from gear.cli.diagnose import hop_line

            for hop, counts in hops.items():
                out.print(esc_term(hop_line(hop, counts, diag["k"])), highlight=False)
    if note := source_note(data):
        out.print(note, highlight=False, soft_wrap=True)
    if note := gold_note(data, name=repr):
        out.print(esc_term(note), highlight=False, soft_wrap=True)
    wall = data["latency_ms"].get("wall")
    if wall:
        out.print(f"latency per run: mean {wall['mean']:.0f} ms, p50 {wall['p50']:.0f} ms, p95 {wall['p95']:.0f} ms")


def found_line(diag: dict[str, Any], ks: list[int]) -> str:
    """"3/4 within 5, 4/4 within 10": the gold passages the diagnosis found within each cut-off, from the same runs
    as R@k (a summary saved before it counted them per cut-off: its own k only)."""
    within = diag.get("found_within") or {str(diag["k"]): diag["found"]}
    shown = [str(k) for k in ks if str(k) in within] or list(within)
    return ", ".join(f"{within[k]}/{diag['gold']} within {k}" for k in shown)
