#!/bin/sh
# Builds the SQL validator Worker (sqlcheck/, Worker `concierge-sql`) into sqlcheck/build/:
# the crate for wasm32 (built for size: the workspace's release profile), wasm-bindgen's JS
# glue (`--target web`: sqlcheck/worker.js instantiates the module wrangler compiles), then
# wasm-opt as for the main Worker (scripts/build-edge.sh): identical functions merged,
# functions ordered by name, the name section kept in target/worker-size/ for profiles and
# stripped from what is uploaded. Used by `make build` and as sqlcheck/wrangler.toml's
# [build] command; CONCIERGE_SKIP_BUILD=1 skips it when the caller has just built.
set -eu
. "$(dirname "$0")/env.sh"
[ "${CONCIERGE_SKIP_BUILD:-0}" = 1 ] && exit 0
# `make dev` builds before it starts wrangler dev: wrangler's first build of this Worker is
# skipped while the file CONCIERGE_SKIP_NEXT_SQLCHECK_BUILD names exists (it is removed),
# as scripts/build-edge.sh does for the main Worker.
if [ -n "${CONCIERGE_SKIP_NEXT_SQLCHECK_BUILD:-}" ] && rm "$CONCIERGE_SKIP_NEXT_SQLCHECK_BUILD" 2>/dev/null; then
    exit 0
fi
cd "$ROOT"
target="${CARGO_TARGET_DIR:-$ROOT/target}"
out="$ROOT/sqlcheck/build"
named_dir="$ROOT/target/worker-size"
cargo build --quiet --release --target wasm32-unknown-unknown -p concierge-sqlcheck ||
    { echo "build-sqlcheck: cargo build failed" >&2; exit 1; }
mkdir -p "$out" "$named_dir"
"$WASM_BINDGEN_BIN" --target web --no-typescript --out-dir "$out" --out-name sqlcheck \
    "$target/wasm32-unknown-unknown/release/concierge_sqlcheck.wasm" ||
    { echo "build-sqlcheck: wasm-bindgen failed" >&2; exit 1; }
cp "$out/sqlcheck_bg.wasm" "$named_dir/sqlcheck_bg.named.wasm"
"$WASM_OPT_BIN" "$named_dir/sqlcheck_bg.named.wasm" -o "$out/sqlcheck_bg.wasm" \
    --duplicate-function-elimination --reorder-functions-by-name --strip-debug --strip-producers \
    --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int \
    --enable-bulk-memory --enable-multivalue --enable-reference-types --enable-exception-handling \
    || { echo "build-sqlcheck: wasm-opt failed" >&2; exit 1; }
