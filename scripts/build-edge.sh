#!/bin/sh
# Builds the Worker (edge/) with worker-build into edge/build/. Used by `make build`
# and as wrangler's [build] command; CONCIERGE_SKIP_BUILD=1 skips it when the caller
# has just built (test harnesses). A failed build fails this script (and so
# `make build` and `make test`): the old edge/build/ is never served in its place.
set -eu
. "$(dirname "$0")/env.sh"
[ "${CONCIERGE_SKIP_BUILD:-0}" = 1 ] && exit 0
# `make dev` builds before it starts wrangler dev, so wrangler's first build (on start)
# would only repeat it: that one is skipped while the file CONCIERGE_SKIP_NEXT_BUILD names
# exists (it is removed); wrangler's rebuilds when sources change run.
if [ -n "${CONCIERGE_SKIP_NEXT_BUILD:-}" ] && rm "$CONCIERGE_SKIP_NEXT_BUILD" 2>/dev/null; then
    exit 0
fi
# Extra wasm-opt passes (none by default; e.g. WASM_OPT_PASSES=-O to compare, see below).
WASM_OPT_PASSES="${WASM_OPT_PASSES:-}"
cd "$ROOT/edge"
log=$(mktemp "${TMPDIR:-/tmp}/concierge-build-edge.XXXXXX")
trap 'rm -f "$log"' EXIT
status=0
# wasm-opt runs below with the project's own passes (worker-build's would be `-O` and keep
# the name section).
worker-build --release --no-opt >"$log" 2>&1 || status=$?
# worker-build is chatty: show what matters (warnings, errors), all of it on failure.
if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    echo "build-edge: worker-build failed (exit $status)" >&2
    exit "$status"
fi
grep -v '^\s*$' "$log" | grep -vE '^\[INFO\]|Compiling|Downloaded|Downloading' || true
[ -f "$ROOT/edge/build/index.js" ] || { echo "build-edge: worker-build produced no shim" >&2; exit 1; }
# Size (issue 29): the Worker's wasm is what every cold isolate downloads and compiles, and
# its gzip size is what `wrangler deploy` is limited by (scripts/worker-size.sh checks the
# budget). The code is built for size (Cargo.toml). worker-build's wasm-opt -O is skipped
# (--no-opt above): on this code it made the gzip larger, not smaller, and took minutes.
# The name section (function names: readable stack traces, size profiles) is kept in a copy
# for `sh scripts/worker-size.sh profile` and stripped from what is served and uploaded.
# Before it is stripped, wasm-opt merges identical functions and orders the functions by
# name: the code of one crate and of one generic's instances sits together, within gzip's
# 32 KB window, so the upload compresses better (1,412,290 -> 1,343,963 B gzip -9 on
# 2026-11-27; `-Oz` and `--merge-similar-functions` made the gzip larger). Order and
# merging only: no code changes.
wasm="$ROOT/edge/build/index_bg.wasm"
named_dir="$ROOT/target/worker-size"
mkdir -p "$named_dir"
cp "$wasm" "$named_dir/index_bg.named.wasm"
"$WASM_OPT_BIN" "$named_dir/index_bg.named.wasm" -o "$wasm" --duplicate-function-elimination \
    --reorder-functions-by-name $WASM_OPT_PASSES --strip-debug --strip-producers \
    --enable-mutable-globals --enable-sign-ext --enable-nontrapping-float-to-int \
    --enable-bulk-memory --enable-multivalue --enable-reference-types --enable-exception-handling \
    || { echo "build-edge: wasm-opt --strip-debug failed" >&2; exit 1; }
