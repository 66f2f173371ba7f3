"""`gear serve-llm`: the embedded model's llama-server in the foreground, for other processes or machines.

It is the very server gear starts on its own (gear/llm/llama_server.py: same binary, model, alias, sampling and
context), so answers recorded for the embedded model stay valid. Started with gear's defaults it also registers
itself in the user's cache folder: gear processes on this machine with the same configuration then use it instead of
starting their own.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from gear.cli.app import app, friendly_errors, out


@app.command(name="serve-llm")
def serve_llm(
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port")] = 8080,
    host: Annotated[str, typer.Option("--host", help="address to listen on (0.0.0.0: every interface)")] = "127.0.0.1",
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="CPU threads (default: GEAR_LLM_THREADS, "
                                                                         "else the physical cores)")] = None,
    n_ctx: Annotated[int | None, typer.Option("--n-ctx", min=512, max=131072,
                                              help="context of each slot in tokens (default: GEAR_LLM_CTX_PER_SLOT, "
                                                   "8192)")] = None,
    parallel: Annotated[int | None, typer.Option("--parallel", min=1, max=64,
                                                 help="slots answering at once (default: GEAR_LLM_PARALLEL, else "
                                                      "chosen from the build and the cores: 1 on a small CPU, 16 "
                                                      "on a CUDA GPU)")
                                                 ] = None,
    gpu_layers: Annotated[int | None, typer.Option("--gpu-layers", min=0,
                                                   help="layers offloaded to a GPU (default: GEAR_LLM_GPU_LAYERS, else "
                                                        "llama.cpp's: all that fit, on a CUDA or Metal build)")] = None,
) -> None:
    """Serve the embedded model (Qwen2.5-Coder-1.5B) with llama.cpp's llama-server over an OpenAI-compatible API;
    point other processes at it with the line it prints."""
    with friendly_errors():
        from gear.config import Settings
        from gear.llm.base import LLMError
        from gear.llm.embedded import server_config, server_profile
        from gear.llm.llama_server import register_foreground, server_env
        from gear.llm.model_files import DEFAULT_MODEL

        settings = Settings()
        config = server_config(threads=threads or settings.llm_threads,
                               ctx_per_slot=n_ctx or settings.llm_ctx_per_slot,
                               parallel=parallel or settings.llm_parallel, cache_reuse=settings.llm_cache_reuse,
                               gpu_layers=gpu_layers if gpu_layers is not None else settings.llm_gpu_layers,
                               ubatch=settings.llm_ubatch, batch=settings.llm_batch,
                               flash_attn=settings.llm_flash_attn)
        check_port_free(host, port)
        reach = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        url = f"http://{f'[{reach}]' if ':' in reach else reach}:{port}/v1"
        if reach in ("127.0.0.1", "localhost"):
            register_foreground(config, port)
        out.print(f"serving {DEFAULT_MODEL.name} with {config.binary} (context {config.ctx_per_slot} per slot, "
                  f"{config.parallel} slot(s), {config.threads} threads) at {url}; point GEAR at it: "
                  f"GEAR_LLM=openai GEAR_LLM_BASE_URL={url} GEAR_LLM_MODEL={DEFAULT_MODEL.name} "
                  f"GEAR_LLM_MAX_CONCURRENT={config.parallel}", highlight=False, soft_wrap=True)
        out.print(server_profile(parallel=config.parallel, ubatch=config.ubatch, batch=config.batch,
                                 flash_attn=config.flash_attn, binary=config.binary).describe(), highlight=False,
                  soft_wrap=True)
        sys.stdout.flush()
        command = config.command(host, port)
        try:
            os.execve(command[0], command, server_env())  # the foreground process becomes the server
        except OSError as exc:
            raise LLMError(f"cannot start {command[0]}: {exc.strerror or exc}") from None


def check_port_free(host: str, port: int) -> None:
    """LLMError when `host:port` cannot be bound (checked before the model is loaded)."""
    import socket

    from gear.llm.base import LLMError

    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except OSError as exc:
        raise LLMError(f"cannot serve on {host}:{port} ({exc.strerror or exc}): choose another --port or --host "
                       "(is a server already running there?)") from None
