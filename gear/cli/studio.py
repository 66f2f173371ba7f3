"""`gear app`: start the Streamlit app (the app lives outside the engine; this only launches it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from gear.cli.app import app, console


@app.command(name="app")
def run_app(
    port: Annotated[int, typer.Option("--port", help="the port the app listens on")] = 8501,
    address: Annotated[str, typer.Option("--address", help="the address it listens on (127.0.0.1: this machine "
                                                           "only)")] = "127.0.0.1",
) -> None:
    """Start the Streamlit app (from a checkout: `pip install .` installs the engine and the CLI, not the app)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "app.py").is_file():
        console.print("[red]error:[/red] the app runs from a checkout of GeAR Studio (`make run` there); this `gear` "
                      f"was installed without it ({root})", highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    cmd = [sys.executable, "-m", "streamlit", "run", str(root / "app.py"), "--server.port", str(port),
           "--server.address", address, "--browser.gatherUsageStats", "false"]
    raise typer.Exit(subprocess.call(cmd, cwd=root, env={**os.environ}))
