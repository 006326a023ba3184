#!/bin/sh
# Builds the Worker (edge/) with worker-build into edge/build/. Used by `make build`
# and as wrangler's [build] command; CONCIERGE_SKIP_BUILD=1 skips it when the caller
# has just built (test harnesses, `make dev`).
set -eu
. "$(dirname "$0")/env.sh"
[ "${CONCIERGE_SKIP_BUILD:-0}" = 1 ] && exit 0
cd "$ROOT/edge"
worker-build --release 2>&1 | grep -v '^\s*$' | grep -vE '^\[INFO\]|Compiling|Downloaded|Downloading' || true
[ -f "$ROOT/edge/build/index.js" ] || { echo "build-edge: worker-build produced no shim" >&2; exit 1; }
