"""`gear compare A.json B.json`: two evaluation reports lined up question by question (gear.eval.pairing) — the
table, the flow of gold passages and of proposed categories from A to B, and the paired numbers; nothing re-run."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from gear.cli.app import app, console, friendly_errors, out
from gear.cli.terminal import esc_term

if TYPE_CHECKING:
    from gear.eval.pairing import Pairing, QuestionPair

ONLY = {"fixes": "B fixes", "breaks": "B breaks", "both-miss": "both miss"}


@app.command(name="compare")
def compare(
    a: Annotated[Path, typer.Argument(help="report A (gear eval --json, or the app's data/evals/*.json)")],
    b: Annotated[Path, typer.Argument(help="report B, over the same QA set")],
    k: Annotated[int | None, typer.Option("--k", min=1, help="the cut-off: a gold passage within the top k is found "
                                                            "(default 5, or the smallest both reports have)")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="write the pairing (table, flows, numbers) as JSON")]
    = None,
    only: Annotated[str | None, typer.Option("--only", help="list only these questions: fixes (B finds a gold "
                                                            "passage A missed), breaks, both-miss")] = None,
    by_answer: Annotated[bool, typer.Option("--by-answer", help="with --only: judge by the answer's EM instead of the "
                                                                "gold passages")] = False,
) -> None:
    """Two evaluations question by question: gold passages gained and lost, where each was lost in A and in B, the
    answers, EM/F1, tokens and seconds of both, the flows, and R@k / EM / F1 differences with a sign test and a paired
    bootstrap interval."""
    with friendly_errors():
        from gear.eval.pairing import ANSWERS, PASSAGES, PairingError, diagnoses_from_traces, pair_reports

        if only is not None and only not in ONLY:
            raise typer.BadParameter(f"--only is one of {', '.join(ONLY)}, not {only!r}")
        from gear.eval.report_file import earlier_rules_note, read_report

        reports = [read_report(path) for path in (a, b)]
        (made_a, unused_a), (made_b, unused_b) = (diagnoses_from_traces(reports[0], a),
                                                  diagnoses_from_traces(reports[1], b))
        for name, unused, report in (("A", unused_a, reports[0]), ("B", unused_b, reports[1])):
            for line in unused:  # a trace a report points at outside its folder is not opened: said, one line each
                console.print(f"[yellow]note:[/yellow] {name}: {esc_term(line)}", highlight=False, soft_wrap=True)
            if note := earlier_rules_note(report):
                console.print(f"[yellow]note:[/yellow] {name}: {esc_term(note)}", highlight=False, soft_wrap=True)
        try:
            pairing = pair_reports(reports[0], reports[1], k, names=("A", "B"), diagnoses=(made_a, made_b))
        except PairingError as exc:
            console.print(f"[red]error:[/red] {esc_term(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        by = ANSWERS if by_answer else PASSAGES
        print_pairing(pairing, (a, b), ONLY.get(only or ""), by)
        if json_out is not None:
            from gear.files import atomic_write_json

            atomic_write_json(json_out, {"a": str(a), "b": str(b), **pairing.to_dict()}, indent=1)
            console.print(f"pairing saved to {esc_term(json_out)}")


def _em(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f}"


def _short(text: str | None, n: int = 24) -> str:
    if text is None:
        return "—"
    flat = " ".join(str(text).split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _passages(q: QuestionPair) -> str:
    """One line per gold passage: "+ Title: lost at base → found"."""
    from gear.viz.pairing import end_words

    lines = []
    for p in q.passages:
        sign = "+ " if p.gained else "− " if p.lost else ""
        lines.append(f"{sign}{_short(p.title, 28)}: {end_words(p.end_a)} → {end_words(p.end_b)}")
    return "\n".join(lines) or "—"


def print_pairing(p: Pairing, paths: tuple[Path, Path], only: str | None = None, by: str = "passages") -> None:
    from gear.eval.pairing import BOTH_MISS, BREAKS, FIXES
    from gear.viz.pairing import band_words

    for side, path in ((p.a, paths[0]), (p.b, paths[1])):
        out.print(esc_term(f"{side.name}: {path} — {side.label}, {side.questions} questions, protocol {side.protocol}"),
                  highlight=False)
        for line in side.sources:
            out.print(esc_term(f"    {line}"), highlight=False)
    left = f"{len(p.only_a)} question(s) only in A" if p.only_a else ""
    right = f"{len(p.only_b)} only in B" if p.only_b else ""
    out.print(f"{len(p.questions)} questions in both" + (f"; left out: {', '.join(x for x in (left, right) if x)} "
              f"(e.g. {esc_term((p.only_a or p.only_b)[0])})" if left or right else ""), highlight=False)
    for line in p.differences:
        out.print(esc_term(f"differs: {line}"), highlight=False)
    rows = p.questions if only is None else [q for q in p.questions if only in q.kind(by)]
    table = Table(title=f"question by question at k = {p.k}" + (f" — {only} ({by})" if only else ""),
                  caption="gold passages: where each ended in A → in B (+ gained by B, − lost by B); tokens and "
                          "seconds: what the answers cost the model when it wrote them, (recorded N): the model's "
                          "seconds then, for a run replayed from its recordings",
                  caption_justify="left")
    for name, ratio in (("question", 2), (f"R@{p.k}", 1), ("EM", 1), ("gold passages: A → B", 5),
                        ("answers: A | B", 3), ("tokens", 2), ("seconds", 2)):
        table.add_column(name, overflow="fold", ratio=ratio)
    for q in rows:
        table.add_row(esc_term(q.id) + f"\n{esc_term(q.hop)}", f"{q.found_a}/{q.n_gold} → {q.found_b}/{q.n_gold}",
                      f"{_em(q.em_a)} → {_em(q.em_b)}", esc_term(_passages(q)),
                      esc_term(f"{_short(q.answer_a)} | {_short(q.answer_b)}"), f"{q.tokens_a} → {q.tokens_b}",
                      f"{q.time_words('a')} → {q.time_words('b')}")
    out.print(table)
    counts = p.counts(by)
    out.print(f"by {by}: {FIXES} {counts[FIXES]}, {BREAKS} {counts[BREAKS]}, {BOTH_MISS} {counts[BOTH_MISS]} "
              "(a question can be in more than one)", highlight=False)
    for q in rows:
        for note in q.notes:
            out.print(esc_term(f"  note {q.id}: {note}"), highlight=False)
    out.print(f"[bold]gold passages, where they ended at k = {p.k}: A → B[/bold]")
    if not p.passage_flow:
        out.print("  — (neither report carries a diagnosis or kept traces: R@k only)")
    for band in p.passage_flow:
        out.print(esc_term(f"  {band_words(band, 'gold passage')}"), highlight=False)
    out.print("[bold]proposed category per question: A → B[/bold]")
    for band in p.category_flow:
        out.print(esc_term(f"  {band_words(band, 'question', categories=True)}"), highlight=False)
    out.print("[bold]paired numbers (B − A)[/bold]")
    for m in p.measures:
        out.print(esc_term(f"  {m.sentence()}"), highlight=False)
    for note in p.notes:
        out.print(f"[yellow]note:[/yellow] {esc_term(note)}", highlight=False, soft_wrap=True)
