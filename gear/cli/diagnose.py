"""`gear diagnose`: where each gold passage of saved runs was lost, and the proposed error category, from the traces
alone (no index, no LLM, nothing re-run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from gear.cli.app import app, console, friendly_errors, out

if TYPE_CHECKING:
    from gear.eval.diagnosis import Diagnosis, Summary

SIDECARS = (".tags.json", ".report.json")  # the Traces page's tags, evaluation reports: not traces


def trace_files(folder: Path) -> list[Path]:
    """Every JSON file under the folder (sub-folders too, e.g. one per method), sidecar files left out."""
    return sorted(p for p in folder.rglob("*.json") if p.is_file() and not p.name.endswith(SIDECARS))


@app.command(name="diagnose")
def diagnose_(
    path: Annotated[Path, typer.Argument(help="a saved trace (JSON), or a folder of them (searched recursively)")],
    json_out: Annotated[bool, typer.Option("--json", help="print the diagnosis as JSON instead of tables")] = False,
    k: Annotated[int, typer.Option("--k", min=1, help="a gold passage is found when within the top k")] = 5,
    qa: Annotated[Path | None, typer.Option("--qa", help="the QA set the runs answered: gives the text of gold "
                                                         "passages no stage reached (no index needed)")] = None,
) -> None:
    """Where each gold passage was lost (stage by stage), the answer checks and the proposed error category."""
    with friendly_errors():
        from gear.data.corpus import load_qa
        from gear.eval.diagnosis import diagnose, summarise
        from gear.eval.diagnosis.gold_texts import QATexts
        from gear.trace import Trace, TraceError

        texts = QATexts(load_qa(qa)[0] if qa is not None else [])

        def run(file: Path) -> Diagnosis:
            trace = Trace.load(file)
            return diagnose(trace, k, texts.for_trace(trace))

        if not path.exists():
            raise TraceError(f"{path}: file not found")
        if path.is_file():
            d = run(path)
            if json_out:
                typer.echo(json.dumps(d.to_dict(), ensure_ascii=False, indent=1))
            else:
                print_diagnosis(d)
            return
        rows: list[tuple[Path, Diagnosis]] = []
        skipped: list[str] = []
        for file in trace_files(path):
            try:
                rows.append((file, run(file)))
            except TraceError as exc:
                skipped.append(str(exc))
                console.print(f"[yellow]skipped:[/yellow] {escape(str(exc))}", highlight=False, soft_wrap=True)
        if not rows:
            raise TraceError(f"{path}: no trace found in this folder")
        summary = summarise(d for _, d in rows)
        if json_out:
            data: dict[str, Any] = {"diagnoses": [{"file": str(f), **d.to_dict()} for f, d in rows],
                                    "summary": summary.to_dict(), "skipped": skipped}
            typer.echo(json.dumps(data, ensure_ascii=False, indent=1))
        else:
            print_folder(path, rows, summary)


# -- tables -----------------------------------------------------------------------------------------------------------
def print_diagnosis(d: Diagnosis) -> None:
    from gear.eval.diagnosis import CATEGORY_LABELS, cell, stage_label

    table = Table(title=escape(f"{d.question_id or 'question'} · {d.run} ({d.family})"),
                  caption=escape(d.question), caption_justify="left")
    table.add_column("stage")
    for p in d.passages:  # a column per gold passage: a question has 2-4, a method up to 10 stages
        table.add_column(escape(p.title), justify="center")
    for stage in d.stages:
        table.add_row(stage_label(stage, d.k), *(cell(p, stage) for p in d.passages))
    table.add_section()
    table.add_row("lost at", *(_stage(p.lost_at, d.k) if p.status != "found" else "found" for p in d.passages))
    table.add_row("dropped at", *(_stage(p.dropped_at, d.k) if p.status != "found" else "" for p in d.passages))
    out.print(table)
    category = CATEGORY_LABELS.get(d.category or "", "undetermined")
    second = f" (second: {CATEGORY_LABELS.get(d.second, d.second)})" if d.second else ""
    out.print(f"category: [bold]{escape(d.category or 'undetermined')}[/bold] — {escape(category)}{escape(second)}",
              highlight=False)
    for line in d.evidence:
        out.print(f"  • {escape(line)}", highlight=False)
    for p in d.passages:
        if p.status != "found":
            missed = next((e for e in p.evidence if e.startswith(stage_label(p.dropped_at or p.lost_at or "", d.k)
                                                                  + ":")), "")
            out.print(f"  {escape(p.title)}: {escape(missed)}", highlight=False)
    a = d.answer
    if a is not None:
        em = "—" if a.em is None else f"{a.em:.0f}"
        f1 = "—" if a.f1 is None else f"{a.f1:.2f}"
        parts = [f"answer {a.answer!r} (gold {' / '.join(map(repr, a.gold)) or '—'}): EM {em}, F1 {f1}",
                 f"gold answer in the QA passages: {_yes(a.in_qa_passages)}",
                 f"in a gold passage: {_yes(a.in_gold_passages)}"]
        if a.answerable_wrong:
            parts.append(f"'answerable' but wrong at iteration {', '.join(map(str, a.answerable_wrong))}")
        if a.rejected:
            parts.append(f"verdict rejected as ungrounded at iteration {', '.join(map(str, a.rejected))}")
        out.print(escape("; ".join(parts + a.notes)), highlight=False)
    for note in d.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)


def print_folder(folder: Path, rows: list[tuple[Path, Diagnosis]], summary: Summary) -> None:
    from gear.eval.diagnosis import stage_label

    table = Table(title=escape(f"{folder}: {len(rows)} traces"))
    for name in ("trace", "run", "hop", "found", "lost at", "category", "second"):
        table.add_column(name)
    for file, d in rows:
        lost = ", ".join(_stage(p.lost_at, d.k) for p in d.passages if p.status != "found" and p.lost_at)
        table.add_row(escape(str(file.relative_to(folder))), escape(d.run), d.hop, f"{d.found}/{len(d.passages)}",
                      lost or "—", d.category or "undetermined", d.second or "")
    out.print(table)
    for run in summary.runs.values():
        out.print(escape(f"{run.run}: {run.questions} questions, {run.gold} gold passages, {run.found} found "
                         f"within {run.k}"), highlight=False)
        stages = Table()
        for name in ("stage", "reached", "lost at", "dropped at"):
            stages.add_column(name, justify="right" if name != "stage" else "left")
        for stage in run.stages:
            stages.add_row(stage_label(stage, run.k), str(run.funnel.get(stage, 0)), str(run.lost_at.get(stage, 0)),
                           str(run.dropped_at.get(stage, 0)))
        out.print(stages)
        out.print("categories: " + ", ".join(f"{c} {n}" for c, n in run.categories.items()) +
                  ("; second: " + ", ".join(f"{c} {n}" for c, n in run.second.items()) if run.second else ""),
                  highlight=False)
        for hop, counts in run.by_hop.items():
            out.print(f"  {hop}: {counts.questions} questions, {counts.found}/{counts.gold} found; lost at "
                      + (", ".join(f"{stage_label(s, run.k)} {n}" for s, n in counts.lost_at.items()) or "—")
                      + "; " + ", ".join(f"{c} {n}" for c, n in counts.categories.items()), highlight=False)
        if run.answers:
            out.print("answers: " + ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in run.answers.items()),
                      highlight=False)
        if run.cut_short:
            out.print(f"[yellow]{run.cut_short} run(s) cut short[/yellow]: diagnosed as far as they went")


def _stage(stage: str | None, k: int) -> str:
    from gear.eval.diagnosis import stage_label

    return stage_label(stage, k) if stage else "—"


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"
