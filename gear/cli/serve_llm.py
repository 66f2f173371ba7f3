"""`gear serve-llm`: the embedded model as one OpenAI-compatible server that several app sessions, evaluations and
extraction runs share (see gear/llm/server.py for how it is made to answer exactly as the in-process model)."""

from __future__ import annotations

from typing import Annotated

import typer

from gear.cli.app import app, friendly_errors, out


@app.command(name="serve-llm")
def serve_llm(
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port")] = 8080,
    host: Annotated[str, typer.Option("--host", help="address to listen on (0.0.0.0: every interface)")] = "127.0.0.1",
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="CPU threads (default: GEAR_LLM_THREADS, "
                                                                         "else the physical cores)")] = None,
    n_ctx: Annotated[int, typer.Option("--n-ctx", min=256, max=131072, help="context size in tokens")] = 8192,
) -> None:
    """Serve the embedded model (Qwen2.5-Coder-1.5B) over an OpenAI-compatible API, so several app sessions,
    evaluations or extraction runs share one model process; point GEAR at it with the line it prints."""
    with friendly_errors():
        from gear.llm.local import default_threads
        from gear.llm.model_files import DEFAULT_MODEL, ensure_model
        from gear.llm.server import build_app, check_port_free, require_server

        require_server()
        import uvicorn

        check_port_free(host, port)
        n_threads = threads or default_threads()
        application = build_app(ensure_model(), n_ctx=n_ctx, n_threads=n_threads)
        reach = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        url = f"http://{f'[{reach}]' if ':' in reach else reach}:{port}/v1"
        out.print(f"serving {DEFAULT_MODEL.name} (context {n_ctx}, {n_threads} threads) at {url}; point GEAR at it: "
                  f"GEAR_LLM=openai GEAR_LLM_BASE_URL={url} GEAR_LLM_MODEL={DEFAULT_MODEL.name} "
                  "GEAR_LLM_MAX_CONCURRENT=1", highlight=False, soft_wrap=True)
        uvicorn.run(application, host=host, port=port, log_level="warning")
