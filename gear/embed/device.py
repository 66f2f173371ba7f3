"""Where the encoder runs: the setting `GEAR_DEVICE` (auto, cpu, cuda, mps) turned into a torch device name.

`auto` takes a CUDA GPU, else Apple's MPS, else the CPU: a GPU encodes a large corpus in minutes instead of hours.
The device is not recorded in an index's manifest: it changes the vectors by float rounding only (the same model,
the same weights), so an index built on a GPU is searched on a CPU with the same results up to ties.
"""

from __future__ import annotations

from typing import Literal

from gear.embed.weights import EmbedderError

Device = Literal["auto", "cpu", "cuda", "mps"]
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda", "mps")


def choose_device(requested: str) -> str:
    """The torch device for a requested one; an explicit GPU that torch cannot see is an error, not a silent CPU."""
    if requested not in DEVICES:
        raise EmbedderError(f"unknown device {requested!r} (GEAR_DEVICE); choose one of {', '.join(DEVICES)}")
    if requested == "cpu":
        return "cpu"
    import torch

    cuda = bool(torch.cuda.is_available())
    mps_backend = getattr(torch.backends, "mps", None)
    mps = bool(mps_backend is not None and mps_backend.is_available())
    if requested == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if (requested == "cuda" and not cuda) or (requested == "mps" and not mps):
        build = f"torch {torch.__version__}"
        raise EmbedderError(f"GEAR_DEVICE={requested}, but {build} sees no {requested.upper()} device; "
                            "use GEAR_DEVICE=auto or cpu, or install a torch build for that device")
    return requested
