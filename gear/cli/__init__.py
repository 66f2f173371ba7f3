"""The `gear` command line. Each command group is one module that registers on the shared typer app
(gear.cli.app); importing this package imports them all, so `gear.cli.app` is the complete command line.

Its modules: app (the typer app and shared helpers), terminal (what reaches the terminal, escaped), query
(retrieve, ask), evaluate, index, elastic, diagnose (with run_folders, a folder of saved runs as diagnose reads it),
compare, export, qa, replay, sweep, serve_llm (the embedded model's server in the foreground), studio (`gear app`)
and __main__ (`python -m gear.cli`)."""

from __future__ import annotations

from gear.cli import (  # noqa: F401 - importing registers the commands
    compare,
    diagnose,
    elastic,
    evaluate,
    export,
    index,
    qa,
    query,
    replay,
    serve_llm,
    studio,
    sweep,
)
from gear.cli.app import app

__all__ = ["app", "main"]


def main() -> None:
    app()


if __name__ == "__main__":
    main()
