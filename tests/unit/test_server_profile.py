"""The embedded server's choices from the build and the cores (gear/llm/server_profile.py): what a CPU, CUDA or Metal
build runs with, each choice overridden by its one setting, the build read from the set-up's stamp or asked of the
binary, the command line that results (the arguments chosen for a CUDA build, checked without a GPU), and the line
printed at start."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gear.config import Settings
from gear.llm.embedded import EmbeddedLLM, server_config, server_profile
from gear.llm.server_profile import build_of, choose, default_profile

STAMP = ("llama.cpp from llama-cpp-python 0.3.36 sha256:832db069 backend:{backend} -DCMAKE_BUILD_TYPE=Release "
         "-DGGML_NATIVE=ON glue:166622502")


def _binary(tmp_path: Path, backend: str | None, listing: str = "Available devices:\n  (none)") -> Path:
    """A stand-in llama-server: prints `listing` for --list-devices; the set-up's stamp beside it unless None."""
    binary = tmp_path / "bin" / "llama-server"
    binary.parent.mkdir(parents=True, exist_ok=True)
    script = tmp_path / "list.py"
    script.write_text(f"print({listing!r})\n", encoding="utf-8")
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}"\n', encoding="utf-8")
    binary.chmod(0o755)
    if backend is not None:
        binary.with_name("llama-server.build").write_text(STAMP.format(backend=backend), encoding="utf-8")
    return binary


def _pairs(args: list[str]) -> dict[str, str]:
    return {flag: args[i + 1] for i, flag in enumerate(args[:-1]) if flag.startswith("--")}


def test_defaults_per_build() -> None:
    cpu = default_profile("cpu", 2)
    assert (cpu.parallel, cpu.ubatch, cpu.batch, cpu.flash_attn) == (1, 256, 256, False)
    assert default_profile("cpu", 16).parallel == 4
    cuda = default_profile("cuda", 16)
    assert (cuda.parallel, cuda.ubatch, cuda.batch, cuda.flash_attn) == (16, 512, 2048, True)
    metal = default_profile("metal", 8)
    assert (metal.parallel, metal.ubatch, metal.flash_attn) == (4, 512, True)


def test_each_setting_overrides_its_choice_and_a_batch_holds_its_micro_batch() -> None:
    chosen = choose("cuda", 16, parallel=2, ubatch=256, flash_attn=False)
    assert (chosen.parallel, chosen.ubatch, chosen.batch, chosen.flash_attn) == (2, 256, 2048, False)
    assert choose("cpu", 2, ubatch=128).batch == 128  # on a CPU the batch follows the micro-batch (a quick Cancel)
    assert choose("cpu", 2, ubatch=512, batch=256).batch == 512


@pytest.mark.parametrize("backend", ["cpu", "cuda", "metal"])
def test_the_build_is_read_from_the_setups_stamp(tmp_path: Path, backend: str) -> None:
    assert build_of(_binary(tmp_path, backend, listing="CUDA0: would be wrong")) == backend


def test_without_a_stamp_the_binary_is_asked(tmp_path: Path) -> None:
    listing = "Available devices:\n  CUDA0: NVIDIA H100 80GB HBM3 (81079 MiB, 80500 MiB free)"
    assert build_of(_binary(tmp_path / "a", None, listing)) == "cuda"
    assert build_of(_binary(tmp_path / "b", None)) == "cpu"
    assert build_of(tmp_path / "missing" / "llama-server") == "cpu"


def test_the_arguments_chosen_for_a_cuda_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = _binary(tmp_path, "cuda")
    monkeypatch.setenv("GEAR_LLAMA_SERVER", str(binary))
    monkeypatch.setattr("gear.llm.embedded.physical_cores", lambda: 16)
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    args = server_config(model_path=model, threads=16).args()
    pairs = _pairs(args)
    assert {k: pairs[k] for k in ("--parallel", "--ubatch-size", "--batch-size", "--flash-attn", "--ctx-size")} == {
        "--parallel": "16", "--ubatch-size": "512", "--batch-size": "2048", "--flash-attn": "on",
        "--ctx-size": str(16 * 8192)}
    cpu = _binary(tmp_path / "cpu", "cpu")
    monkeypatch.setenv("GEAR_LLAMA_SERVER", str(cpu))
    monkeypatch.setattr("gear.llm.embedded.physical_cores", lambda: 2)
    pairs = _pairs(server_config(model_path=model, threads=2).args())
    assert {k: pairs[k] for k in ("--parallel", "--ubatch-size", "--batch-size", "--flash-attn")} == {
        "--parallel": "1", "--ubatch-size": "256", "--batch-size": "256", "--flash-attn": "off"}


def test_settings_reach_the_server_and_its_queue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEAR_LLAMA_SERVER", str(_binary(tmp_path, "cuda")))
    for name, value in (("GEAR_LLM_PARALLEL", "3"), ("GEAR_LLM_UBATCH", "128"), ("GEAR_LLM_BATCH", "1024"),
                        ("GEAR_LLM_FLASH_ATTN", "false")):
        monkeypatch.setenv(name, value)
    s = Settings(_env_file=None)  # type: ignore[call-arg]  # pydantic-settings' own keyword
    llm = EmbeddedLLM(parallel=s.llm_parallel, ubatch=s.llm_ubatch, batch=s.llm_batch, flash_attn=s.llm_flash_attn)
    profile = llm.profile
    assert (profile.build, profile.parallel, profile.ubatch, profile.batch, profile.flash_attn) == (
        "cuda", 3, 128, 1024, False)
    assert llm.queue.slots == 3
    auto = EmbeddedLLM()  # nothing set: the queue has a place per slot the build calls for
    assert auto.queue.slots == 16


def test_the_line_printed_at_start_names_each_choice_and_its_setting() -> None:
    line = server_profile(parallel=None, binary=None).describe()
    for part in ("cpu build", "slot(s) (GEAR_LLM_PARALLEL)", "micro-batch 256 (GEAR_LLM_UBATCH)",
                 "batch 256 (GEAR_LLM_BATCH)", "flash attention off (GEAR_LLM_FLASH_ATTN)"):
        assert part in line


def test_exact_mode_runs_one_slot_unless_slots_are_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several slots batch requests together, and a batch changes the text (docs/results.md, "Reproducibility": 2 of 40
    read whole on 4 slots): exact mode takes one slot where a machine would choose more; a set count stays."""
    monkeypatch.setenv("GEAR_LLAMA_SERVER", str(_binary(tmp_path, "cuda")))
    monkeypatch.setattr("gear.llm.embedded.physical_cores", lambda: 16)
    assert EmbeddedLLM().profile.parallel == 16
    assert EmbeddedLLM(exact=True).profile.parallel == 1
    assert EmbeddedLLM(exact=True).queue.slots == 1
    assert EmbeddedLLM(exact=True, parallel=4).profile.parallel == 4
