"""What every `gear` command shares: the typer app, the consoles, one-line errors, progress bars, settings from options.

Command modules import from here and register on `app`; `gear.cli` imports them all (the import is the registration).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from gear import methods
from gear.cli.terminal import TerminalConsole, esc_term

app = typer.Typer(add_completion=False, no_args_is_help=True, help="GeAR: graph-enhanced retrieval agent.")
console = TerminalConsole(stderr=True)  # every string printed shows its control characters, never sends them
out = TerminalConsole()


def _user_errors() -> tuple[type[BaseException], ...]:
    from gear.data.reading import InputError
    from gear.embed import EmbedderError
    from gear.saved import SavedFileError
    from gear.store.base import StoreError

    errors: list[type[BaseException]] = [InputError, StoreError, EmbedderError, SavedFileError]
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
        where = esc_term(".".join(str(x) for x in first["loc"]))
        console.print(f"[red]error:[/red] setting {where}: {esc_term(first['msg'])}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except _user_errors() as exc:
        # escaped: paths like "data/[v2]/x.json" are text, not markup; soft_wrap: one line, even when piped
        console.print(f"[red]error:[/red] {esc_term(str(exc))}", markup=True, highlight=False, soft_wrap=True)
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


def settings_from(**overrides: Any) -> Any:
    """Settings from GEAR_* variables and .env, with the command's options (None = not given) on top."""
    from gear.config import Settings

    return Settings().with_(**{name: value for name, value in overrides.items() if value is not None})


def parse_ks(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise typer.BadParameter(f"--k expects comma-separated integers, got {text!r}") from None
    if not ks or min(ks) < 1:
        raise typer.BadParameter("--k needs positive cut-offs")
    return ks


RetrieverOpt = Annotated[str, typer.Option("--retriever", "-r", help="bm25, dense or hybrid")]
MethodOpt = Annotated[str, typer.Option("--method", "-m", "--expand", "-e", help=methods.cli_help() + " (--expand, -e: "
                                        "its old name)")]
LLMOpt = Annotated[str | None, typer.Option("--llm", help="auto (recorded answers, else the live model; default), "
                                                          "local, openai, replay or record")]
LLMCacheOpt = Annotated[Path | None, typer.Option("--llm-cache", help="where recorded answers are read and new ones "
                                                  "written (default: GEAR_LLM_CACHE_DIR, else the data folder's "
                                                  "llm_cache, which the app uses too)")]
MaxIterationsOpt = Annotated[int | None, typer.Option("--max-iterations", min=1, help="GeAR's most iterations "
                                                      "(default 4: the paper's for MuSiQue; it uses 2 for HotpotQA "
                                                      "and 2Wiki)")]
NoDiversityOpt = Annotated[bool, typer.Option("--no-diversity", help="turn the beam search's diversity penalty off "
                                              "(the paper's ablation)")]
PromptsOpt = Annotated[str | None, typer.Option("--prompts", help="paper (the appendix prompts verbatim; default) or "
                                                                  "small (JSON, grounded verdicts, no repeated "
                                                                  "query)")]
