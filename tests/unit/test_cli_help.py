"""Every option and argument of every `gear` command says what it is for in `--help`: a new user
reads the help before the README, and an option listed bare ("--max-iterations <int>") leaves them guessing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer

from gear.cli import app


def commands(command: Any, path: tuple[str, ...] = ("gear",)) -> Iterator[tuple[str, Any]]:
    """(the command as typed, the click command) for every command and command group of the typer app."""
    yield " ".join(path), command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


def test_every_option_and_argument_of_every_command_has_help_text() -> None:
    found = list(commands(typer.main.get_command(app)))
    assert len(found) > 10  # the walk reached the commands (gear, index build/add/remove, ask, eval, …)
    missing = [f"{where} {(param.opts or [param.name])[0]}" for where, command in found for param in command.params
               if param.name != "help" and not (getattr(param, "help", None) or "").strip()]
    assert missing == [], "without help text: " + ", ".join(missing)


def test_every_command_has_help_text() -> None:
    missing = [where for where, command in commands(typer.main.get_command(app))
               if not (command.help or command.short_help or "").strip()]
    assert missing == []


def test_the_index_group_help_names_its_commands_not_an_old_usage() -> None:
    group = typer.main.get_command(app).commands["index"]  # type: ignore[attr-defined]
    assert set(group.commands) == {"build", "add", "remove"}
    assert "--out" not in (group.help or "")  # the old one-line usage: `gear index CORPUS --out DIR`
