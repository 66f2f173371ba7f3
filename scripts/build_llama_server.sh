#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` (the embedded model's engine) from pinned upstream source, idempotently:
#   1. the sdist of llama-cpp-python==0.3.36 from PyPI, checked against its sha256 (`pip download --require-hashes`,
#      never a binary). It vendors the llama.cpp tree the project was measured with (vendor/llama.cpp);
#   2. cmake configures and builds the one target `llama-server` (a static binary: no shared llama/ggml libraries):
#      CPU with -march=native; CUDA where the toolkit (nvcc) AND an NVIDIA GPU (nvidia-smi -L) are found; Metal is
#      llama.cpp's default on macOS. GEAR_LLAMA_BACKEND=cpu|cuda|auto (default auto) overrides the detection, e.g. cuda
#      in a Docker build that sees the toolkit but no GPU;
#   3. installs it next to the interpreter (VENV/bin/llama-server, where gear looks first) with a stamp saying what
#      was built. A second run with the same version and backend finds the stamp and costs well under a second; the
#      source, the archive and the cmake build folder stay in the user's cache, so a new virtualenv only re-links.
# Usage: scripts/build_llama_server.sh [path/to/venv/bin/python]      (default: .venv/bin/python)
# Env: GEAR_LLAMA_BACKEND, GEAR_CACHE_DIR (default ~/.cache/gear), GEAR_LLAMA_NATIVE=OFF (portable build, for an
#      image built on another machine than the one that runs it), CMAKE_BUILD_PARALLEL_LEVEL (default: all cores).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${1:-$ROOT/.venv/bin/python}"
VERSION="0.3.36"
SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"  # llama_cpp_python-0.3.36.tar.gz on PyPI
CACHE="${GEAR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gear}/llama.cpp"
NATIVE="${GEAR_LLAMA_NATIVE:-ON}"
JOBS="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)}"

if [[ ! -x "$PY" ]]; then
  echo "error: python interpreter '$PY' not found; create the virtualenv first" >&2
  exit 1
fi
BIN_DIR="$(dirname "$PY")"
TARGET="$BIN_DIR/llama-server"
STAMP="$TARGET.build"

nvidia_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }
nvcc_path() { command -v nvcc 2>/dev/null || { [[ -x /usr/local/cuda/bin/nvcc ]] && echo /usr/local/cuda/bin/nvcc; }; }
backend="${GEAR_LLAMA_BACKEND:-auto}"
case "$backend" in
  auto)
    if [[ "$(uname -s)" == Darwin ]]; then backend=metal
    elif [[ -n "$(nvcc_path)" ]] && nvidia_gpu; then backend=cuda
    else backend=cpu; fi ;;
  cpu|cuda|metal) ;;
  *) echo "error: GEAR_LLAMA_BACKEND must be auto, cpu, cuda or metal, not '$backend'" >&2; exit 1 ;;
esac
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE="$NATIVE"
            -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON
            -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF)
case "$backend" in
  cuda)
    nvcc="$(nvcc_path)"
    [[ -n "$nvcc" ]] || { echo "error: GEAR_LLAMA_BACKEND=cuda but no nvcc found (install the CUDA toolkit)" >&2; exit 1; }
    cmake_args+=(-DGGML_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc")
    # with no GPU to ask (a Docker build), build for the common architectures instead of the visible card's
    nvidia_gpu || cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="${GEAR_CUDA_ARCHITECTURES:-75;80;86;89;90}") ;;
  cpu) [[ "$(uname -s)" == Darwin ]] && cmake_args+=(-DGGML_METAL=OFF) ;;
esac
# the server's HTTP/JSON/CLI glue at -O1 (scripts/llama_glue_o1.cmake: a shorter build, the same speed)
GLUE="$ROOT/scripts/llama_glue_o1.cmake"
want="llama.cpp from llama-cpp-python $VERSION sha256:$SHA256 backend:$backend ${cmake_args[*]} glue:$(cksum < "$GLUE" | cut -d' ' -f1)"
cmake_args+=(-DCMAKE_PROJECT_INCLUDE="$GLUE")

if [[ -x "$TARGET" && -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
  echo "llama-server ($VERSION, $backend) already built: $TARGET"
  exit 0
fi

for tool in cmake c++; do
  command -v "$tool" >/dev/null || { echo "error: '$tool' is needed to build llama-server (install cmake and a C++ compiler)" >&2; exit 1; }
done
start=$(date +%s)
mkdir -p "$CACHE"
ARCHIVE="$CACHE/llama_cpp_python-$VERSION.tar.gz"
sha256_of() { if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1; }
if [[ ! -f "$ARCHIVE" || "$(sha256_of "$ARCHIVE")" != "$SHA256" ]]; then
  echo "downloading the llama-cpp-python $VERSION source archive (76.6 MB, sha256 checked)..."
  download="$(mktemp -d "$CACHE/download.XXXXXX")"
  trap 'rm -rf "$download"' EXIT
  echo "llama-cpp-python==$VERSION --hash=sha256:$SHA256" > "$download/requirements.txt"
  "$PY" -m pip --disable-pip-version-check download -q --no-deps --no-binary :all: --require-hashes \
    -r "$download/requirements.txt" -d "$download"
  mv "$download/llama_cpp_python-$VERSION.tar.gz" "$ARCHIVE"
fi

SRC="$CACHE/src-$VERSION"
if [[ ! -f "$SRC/CMakeLists.txt" ]]; then
  echo "unpacking vendor/llama.cpp..."
  rm -rf "$SRC" "$SRC.tmp" && mkdir -p "$SRC.tmp"
  tar -xzf "$ARCHIVE" -C "$SRC.tmp" --strip-components=3 "llama_cpp_python-$VERSION/vendor/llama.cpp"
  mv "$SRC.tmp" "$SRC"
fi

BUILD="$CACHE/build-$VERSION-$backend"
generator=()
if command -v ninja >/dev/null && [[ ! -f "$BUILD/Makefile" ]]; then generator=(-G Ninja); fi
echo "building llama-server ($backend, $JOBS jobs; a few minutes the first time)..."
cmake -S "$SRC" -B "$BUILD" "${generator[@]}" "${cmake_args[@]}" > "$CACHE/cmake-configure.log" 2>&1 || {
  tail -30 "$CACHE/cmake-configure.log" >&2; echo "error: cmake configure failed (log: $CACHE/cmake-configure.log)" >&2
  exit 1; }
cmake --build "$BUILD" -j "$JOBS" --target llama-server > "$CACHE/cmake-build.log" 2>&1 || {
  tail -30 "$CACHE/cmake-build.log" >&2; echo "error: building llama-server failed (log: $CACHE/cmake-build.log)" >&2
  exit 1; }

install -m 755 "$BUILD/bin/llama-server" "$TARGET.tmp"
mv "$TARGET.tmp" "$TARGET"
echo "$want" > "$STAMP"
echo "llama-server ($VERSION, $backend) built in $(( $(date +%s) - start )) s: $TARGET"
