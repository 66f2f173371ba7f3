"""`gear replay-beams`: a recorded run's beam search searched again with other knobs (Engine.replay_beams) — what a
student tries in the lesson ("diversity off"), from a terminal: no model asked, the run unchanged."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from gear.cli.app import app, console, friendly_errors, out
from gear.cli.terminal import esc_term, json_text


@app.command("replay-beams")
def replay_beams(
    trace_file: Annotated[Path, typer.Argument(metavar="TRACE", help="a trace file (.json), e.g. "
                                                                        "assets/traces/walkthrough.json")],
    iteration: Annotated[int, typer.Option("--iteration", "-i", min=1, help="the iteration whose search to redo")] = 1,
    width: Annotated[int | None, typer.Option("--width", "-b", min=1, max=100, help="beam width b")] = None,
    length: Annotated[int | None, typer.Option("--length", "-l", min=1, max=6, help="beam length l (triples)")] = None,
    gamma: Annotated[float | None, typer.Option("--gamma", min=0.0, help="γ of the diversity penalty (0: 2b)")] = None,
    neighbours: Annotated[int | None, typer.Option("--neighbours", min=1, max=1000,
                                                   help="at most this many neighbours per beam")] = None,
    diversity: Annotated[bool | None, typer.Option("--diversity/--no-diversity",
                                                   help="the diversity penalty on or off")] = None,
    index_dir: Annotated[Path | None, typer.Option("--index", help="the index the run was made on (default: the "
                                                   "data folder's index whose QA set holds the run's question, as "
                                                   "the app finds it)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Search a recorded run's beams again with other knobs (any not given: as recorded) and say what changed: the
    beams that entered and left, the passages gained and lost, the gold passages reached now. Knobs left out keep the
    run's; a width given without γ gets the paper's γ = 2b."""
    from gear.agent.beam_replay import BeamReplayError
    from gear.agent.engine import Engine
    from gear.cli.app import settings_from
    from gear.events import PassagesExpanded, RunStarted
    from gear.index.home import home_index
    from gear.trace import Trace
    from gear.viz.beam_knobs import beam_rows, change_lines, knob_line

    with friendly_errors():
        trace = Trace.load(trace_file)
        start = trace.first(RunStarted)
        index = index_dir or home_index(start.question_id if start else "")
        if index is None:
            console.print(f"[red]error:[/red] no index in the data folder holds this run's question "
                          f"({esc_term(start.question_id if start else 'no question id')}); name it with --index",
                          highlight=False, soft_wrap=True)
            raise typer.Exit(2)
        engine = Engine.open(index, settings_from())
        engine.encoder.encode_cached([trace.question])  # the embedder loaded: the time below is the search's
        started = time.perf_counter()
        try:
            replay = engine.replay_beams(trace, iteration, width=width, length=length, gamma=gamma,
                                         max_neighbours=neighbours, diversity=diversity)
        except BeamReplayError as exc:
            console.print(f"[red]error:[/red] {esc_term(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        seconds = time.perf_counter() - started
    new = replay.beams
    titles = {p.id: p.title for e in [*trace.of(PassagesExpanded), *(x for x in replay.events
                                                                     if isinstance(x, PassagesExpanded))]
              for p in e.passages}
    lines = change_lines(replay.recorded, new, replay.entered, replay.left, replay.passages_gained,
                         replay.passages_lost, replay.gold_reached, replay.gold_unreached, titles)
    if as_json:
        typer.echo(json_text({"trace": str(trace_file), "index": str(index), "iteration": iteration,
                              "recorded": knob_line(replay.recorded), "now": knob_line(new), "seconds": seconds,
                              "entered": [list(b) for b in replay.entered], "left": [list(b) for b in replay.left],
                              "passages_gained": replay.passages_gained, "passages_lost": replay.passages_lost,
                              "gold_reached": replay.gold_reached, "gold_unreached": replay.gold_unreached,
                              "recorded_beams": beam_rows(replay.recorded, new, "left"),
                              "beams": beam_rows(new, replay.recorded, "entered"), "changes": lines}, indent=2))
        return
    for title, rows in ((f"recorded beams, iteration {iteration}", beam_rows(replay.recorded, new, "left")),
                        ("searched again", beam_rows(new, replay.recorded, "entered"))):
        table = Table(title=title)
        for col in ("beam", "score", "triples", "change", "gold"):
            table.add_column(col)
        for r in rows:
            table.add_row(f"{r['beam']:d}", f"{r['score']:.2f}", esc_term(r["triples"]), esc_term(r["change"]),
                          esc_term(r["gold"]))
        out.print(table)
    for line in lines:
        out.print(esc_term(line), highlight=False, soft_wrap=True)
    out.print(f"searched again in {seconds:.3f} s over {esc_term(str(index))}: no model asked, the run unchanged",
              highlight=False, soft_wrap=True)
