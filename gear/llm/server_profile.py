"""How the embedded llama-server is run on this machine: slots, micro-batch, batch and flash attention, chosen from
what the build is (CPU, CUDA, Metal) and the cores, each one setting, and said in one line when the server starts.

Why these defaults (docs/results.md; shared/TESTING.md):
- CPU (measured on 2 cores): one slot — a second slot re-reads what the first has cached and batching buys little
  there (llama-batched-bench: 31 / 32 / 38 tok/s written at 1 / 2 / 4 sequences; 4 slots extracted slower than 1);
  micro-batch 256 (llama.cpp's 512 read 10–20 % slower); a batch of one micro-batch, so a cancelled request is let go
  after at most one micro-batch of reading (llama-server checks for cancelled tasks between batches: with its batch
  of 2,048 a 1,500-token prompt is read to its end first); flash attention off (on, the CPU arithmetic changes and
  recorded answers are not reproduced; it was also slower at 1,500 tokens). Machines with 8 or more physical cores
  get 4 slots (not measured here: more cores write more tokens at once, as a GPU does).
- CUDA (measured on an NVIDIA H100 with a model of the embedded model's exact shapes): 16 slots — 16 extraction-like
  requests at once took 3.38 s against 12.98 s on one slot (8 slots: 4.30 s); micro-batch 512 and flash attention
  on (1 slot: 10.72 s against 12.98 s; llama-bench pp1500 25.0 k against 18.5 k tok/s); llama.cpp's batch of 2,048
  (a GPU reads it in ≈0.1 s).
- Metal: as CUDA but 4 slots (not measured: no Apple machine was available to this work).

The build is read from the stamp the set-up writes beside the binary (scripts/build_llama_server.sh: "backend:cuda"),
else asked of the binary itself (`--list-devices`), else taken to be a CPU build.
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Build = Literal["cpu", "cuda", "metal"]
LLAMA_DEFAULT_BATCH = 2048  # llama.cpp's --batch-size


@dataclass(frozen=True, slots=True)
class ServerProfile:
    """The server's choices for this machine, each with the setting that overrides it."""

    build: Build
    cores: int
    parallel: int
    ubatch: int
    batch: int
    flash_attn: bool

    def describe(self) -> str:
        """One line saying what was chosen and how to change it (printed when the server starts)."""
        return (f"llama-server: {self.build} build, {self.cores} physical cores → {self.parallel} slot(s) "
                f"(GEAR_LLM_PARALLEL), micro-batch {self.ubatch} (GEAR_LLM_UBATCH), batch {self.batch} "
                f"(GEAR_LLM_BATCH), flash attention {'on' if self.flash_attn else 'off'} (GEAR_LLM_FLASH_ATTN)")


def default_profile(build: Build, cores: int) -> ServerProfile:
    """What a build of this kind on this many physical cores runs with unless a setting says otherwise."""
    if build == "cuda":
        return ServerProfile(build, cores, parallel=16, ubatch=512, batch=LLAMA_DEFAULT_BATCH, flash_attn=True)
    if build == "metal":
        return ServerProfile(build, cores, parallel=4, ubatch=512, batch=LLAMA_DEFAULT_BATCH, flash_attn=True)
    return ServerProfile(build, cores, parallel=1 if cores < 8 else 4, ubatch=256, batch=256, flash_attn=False)


def choose(build: Build, cores: int, *, parallel: int | None = None, ubatch: int | None = None,
           batch: int | None = None, flash_attn: bool | None = None) -> ServerProfile:
    """The default profile with each given setting in its place (a batch never smaller than its micro-batch)."""
    base = default_profile(build, cores)
    ub = ubatch or base.ubatch
    chosen_batch = batch or (ub if build == "cpu" else base.batch)
    return ServerProfile(build, cores, parallel=parallel or base.parallel, ubatch=ub, batch=max(chosen_batch, ub),
                         flash_attn=base.flash_attn if flash_attn is None else flash_attn)


_STAMP_BACKEND = re.compile(r"\bbackend:(cpu|cuda|metal)\b")


def build_of(binary: Path) -> Build:
    """Which kind of build `binary` is: the set-up's stamp beside it, else what the binary lists, else "cpu"."""
    stamp = binary.with_name(binary.name + ".build")
    try:
        found = _STAMP_BACKEND.search(stamp.read_text(encoding="utf-8"))
    except OSError:
        found = None
    if found:
        return found.group(1)  # type: ignore[return-value]  # the pattern admits only the three names
    try:
        return _listed_build(str(binary), binary.stat().st_mtime_ns)
    except OSError:
        return "cpu"


@functools.lru_cache(maxsize=8)
def _listed_build(binary: str, _mtime: int) -> Build:
    """A build without the set-up's stamp (GEAR_LLAMA_SERVER): its own `--list-devices` (cached per binary)."""
    try:
        listed = subprocess.run([binary, "--list-devices"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "cpu"
    if re.search(r"^\s*CUDA\d", listed, re.MULTILINE):
        return "cuda"
    if re.search(r"^\s*(Metal|MTL)\d?", listed, re.MULTILINE):
        return "metal"
    return "cpu"
