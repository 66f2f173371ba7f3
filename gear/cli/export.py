"""`gear export-html`: a recorded run as a lesson handout — one self-contained HTML file (gear.viz.handout)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gear.cli.app import app, console, friendly_errors
from gear.cli.terminal import esc_term


@app.command("export-html")
def export_html(
    trace_file: Annotated[Path, typer.Argument(metavar="TRACE", help="a trace file (.json), e.g. "
                                                                        "assets/traces/walkthrough.json")],
    out_file: Annotated[Path | None, typer.Option("--out", "-o", help="the HTML file to write (default: "
                                                                       "lesson_<question>.html here)")] = None,
    steps: Annotated[str | None, typer.Option("--steps", help="only these steps, e.g. 5-9 (numbered as in the whole "
                                                              "lesson; default: every step)")] = None,
) -> None:
    """Write the lesson on a recorded run as one HTML file: a contents page, every step (or --steps) with its
    explanation, notation, tables and pictures, one a page on A4 or Letter, and the run's teaching point last; no
    request to anywhere."""
    from gear.files import atomic_write_text
    from gear.trace import Trace
    from gear.viz.handout import file_name, lesson_html, step_range
    from gear.viz.lesson import lesson_steps

    with friendly_errors():
        trace = Trace.load(trace_file)
        target = out_file or Path(file_name(trace))
        chosen = None
        if steps is not None:
            try:
                chosen = step_range(steps, len(lesson_steps(trace)))
            except ValueError as exc:
                console.print(f"[red]error:[/red] --steps: {esc_term(str(exc))}", highlight=False, soft_wrap=True)
                raise typer.Exit(2) from None
        try:
            atomic_write_text(target, lesson_html(trace, steps=chosen))
        except OSError as exc:
            why = esc_term(exc.strerror or str(exc))
            console.print(f"[red]error:[/red] cannot write {esc_term(str(target))}: {why}", highlight=False,
                          soft_wrap=True)
            raise typer.Exit(2) from None
    console.print(f"wrote {esc_term(str(target))}", highlight=False, soft_wrap=True)
