"""`gear sweep`: a grid of `gear eval` runs over any settings, one table of R@k, EM/F1, tokens and seconds per cell,
each cell paired question by question with a baseline cell (gear.eval.sweep)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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
    parse_ks,
)
from gear.cli.evaluate import (
    EveryOpt,
    KsOpt,
    LimitOpt,
    ProtocolOpt,
    QAArg,
    ScoreModeOpt,
    StartOpt,
    check_protocol,
    eval_questions,
    eval_settings,
)
from gear.cli.terminal import esc_term


@app.command(name="sweep")
def sweep(
    index_dir: Annotated[Path, typer.Argument(help="index directory")],
    qa: QAArg = None,
    grid_: Annotated[list[str], typer.Option(
        "--set", metavar="NAME=V1,V2", help="a setting and the values it takes (any field of gear's settings, e.g. "
                                            "beam_length=1,2,3 or max_iterations=1,2,3,4); repeat for more: every "
                                            "combination is one cell")] = [],  # noqa: B006 - typer
    json_out: Annotated[Path, typer.Option("--json", help="the sweep's table; each cell's report goes into the folder "
                                                          "of the same name beside it (sweep.json → sweep/)")]
    = Path("sweep.json"),
    baseline: Annotated[list[str], typer.Option(
        "--baseline", metavar="NAME=V", help="the cell every other is paired with, one --baseline per swept setting "
                                             "(default: the cell with the settings' own values, else the "
                                             "first)")] = [],  # noqa: B006 - typer
    dry_run: Annotated[bool, typer.Option("--dry-run", help="only say what each cell would ask of the model (how "
                                                            "much replays from recordings, how much is live, the "
                                                            "expected model time)")] = False,
    retriever: RetrieverOpt = "hybrid",
    method: MethodOpt = "none",
    no_diversity: NoDiversityOpt = False,
    ks: KsOpt = "5,10,15",
    limit: LimitOpt = None,
    score_mode: ScoreModeOpt = "exact",
    llm: LLMOpt = None,
    llm_cache: LLMCacheOpt = None,
    prompts: PromptsOpt = None,
    start: StartOpt = 0,
    every: EveryOpt = 1,
    max_iterations: MaxIterationsOpt = None,
    traces: Annotated[bool, typer.Option("--traces", help="keep each question's trace beside its cell's "
                                                          "report")] = False,
    protocol: ProtocolOpt = "one-run",
) -> None:
    """Every combination of the --set values, each cell one `gear eval` with those settings (resumable cell by cell),
    in one table with paired tests against a baseline cell."""
    with friendly_errors():
        from gear.agent.engine import Engine
        from gear.agent.recorded import probe_cell
        from gear.eval.sweep import CellEvent, SweepError, duration, parse_axis, unread_axes
        from gear.eval.sweep import run_sweep as run
        from gear.llm import llm_from_settings

        check_protocol(protocol)
        cutoffs = parse_ks(ks)
        settings = eval_settings(retriever=retriever, method=method, no_diversity=no_diversity, score_mode=score_mode,
                                 llm=llm, llm_cache=llm_cache, prompts=prompts, max_iterations=max_iterations)
        try:
            axes = [parse_axis(text, settings) for text in grid_]
            wanted = dict(_pair(text) for text in baseline)
        except SweepError as exc:
            raise typer.BadParameter(str(exc)) from None
        if not axes:
            raise typer.BadParameter("name at least one setting to sweep: --set NAME=V1,V2,…", param_hint="--set")
        for name in unread_axes(settings.method, axes):
            console.print(f"[yellow]warning:[/yellow] {esc_term(name)} is not a setting {esc_term(settings.method)} "
                          "runs read: its cells will be alike", highlight=False)
        questions = eval_questions(index_dir, qa, start=start, every=every, limit=limit)
        engine = Engine.open(index_dir, settings)
        bars = _Bars()

        def fresh(cell: Any) -> None:  # each cell's LLM starts with an empty memo, as a `gear eval` process does
            if methods.get(cell.method).uses_llm(cell):
                engine.set_llm(cell, llm_from_settings(cell))

        def on_cell(event: CellEvent) -> None:
            head = f"[{event.number}/{event.total}] {event.name}"
            if event.record is None:
                probe = event.probe.sentence() if event.probe is not None else ""
                console.print(esc_term(f"{head}: {probe}"), highlight=False, soft_wrap=True)
                return
            bars.close()
            r = event.record
            done = "read from its saved report" if r.resumed else (
                f"done in {duration(r.seconds)}" + (f" (the model: {duration(r.model_seconds)})" if r.model_seconds
                                                    else ""))
            calls = ", ".join(f"{n} {source}" for source, n in sorted(r.llm_calls.items()))
            console.print(esc_term(f"{head}: {done}; " + "  ".join(f"R@{k} {v:.1f}" for k, v in r.recall.items())
                                   + (f"; LLM answers: {calls}" if calls else "")), highlight=False, soft_wrap=True)

        try:
            result = run(engine, questions, settings, axes, cutoffs, json_out, protocol=protocol,
                         index=index_dir.name, qa=str(qa) if qa is not None else "", baseline=wanted or None,
                         probe=lambda s: probe_cell(engine, questions, s, cutoffs, protocol), on_cell=on_cell,
                         progress=bars.progress, fresh=fresh, traces=traces, dry_run=dry_run)
        except SweepError as exc:
            raise typer.BadParameter(str(exc)) from None
        finally:
            bars.close()
        if dry_run:
            return
        _print_sweep(result.model_dump(mode="json"))
        console.print(f"sweep saved to {esc_term(json_out)} (each cell's report in {esc_term(json_out.with_suffix(''))}"
                      "/)", highlight=False)


def _pair(text: str) -> tuple[str, str]:
    from gear.eval.sweep import SweepError

    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise SweepError(f"--baseline {text!r}: write NAME=V (one per swept setting)")
    return name.strip().replace("-", "_"), value.strip()


class _Bars:
    """One progress bar per cell that runs, with its time remaining."""

    def __init__(self) -> None:
        self._bar: Any = None

    def progress(self, event: Any) -> Any:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.close()
        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                             TimeRemainingColumn(), console=console, transient=True)
        self._bar.start()
        task = self._bar.add_task("questions", total=None)

        def update(done: int, total: int, _qid: str) -> None:
            self._bar.update(task, completed=done, total=total)

        return update

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _print_sweep(data: dict[str, Any]) -> None:
    """The sweep as one table: the swept values, R@k, EM/F1, tokens and seconds per question, and each cell against
    the baseline (difference in points, sign test p)."""
    ks = [str(k) for k in data["ks"]]
    axes = [a["name"] for a in data["axes"]]
    table = Table(title=esc_term(f"{data['retriever']} · {data['method']}: {len(data['questions'])} questions, "
                                 f"{len(data['cells'])} cells (baseline {data['baseline']})"))
    for heading in [*axes, *(f"R@{k}" for k in ks), "EM", "F1", "tokens/q", "s/q", *(f"ΔR@{k} (p)" for k in ks)]:
        table.add_column(esc_term(heading), justify="left" if heading in axes else "right")
    for cell in data["cells"]:
        paired = {m["name"]: m for m in cell["paired"]}
        table.add_row(*(esc_term(str(cell["values"].get(a))) for a in axes),
                      *(f"{cell['recall'].get(k, 0):.1f}" for k in ks),
                      *(f"{cell[key]:.1f}" if cell[key] is not None else "—" for key in ("em", "f1")),
                      f"{cell['tokens_per_question']:.0f}", f"{cell['seconds_per_question']:.1f}",
                      *(esc_term(_difference(paired.get(f"R@{k}"))) if cell["name"] != data["baseline"]
                        else "baseline" for k in ks))
    out.print(table)


def _difference(m: dict[str, Any] | None) -> str:
    if m is None:
        return "—"
    p = "" if m["p_sign"] is None else f" ({m['p_sign']:.2g})"
    return f"{m['difference']:+.1f}{p}"
