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
cd "$ROOT/edge"
log=$(mktemp "${TMPDIR:-/tmp}/concierge-build-edge.XXXXXX")
trap 'rm -f "$log"' EXIT
status=0
worker-build --release >"$log" 2>&1 || status=$?
# worker-build is chatty: show what matters (warnings, errors), all of it on failure.
if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    echo "build-edge: worker-build failed (exit $status)" >&2
    exit "$status"
fi
grep -v '^\s*$' "$log" | grep -vE '^\[INFO\]|Compiling|Downloaded|Downloading' || true
[ -f "$ROOT/edge/build/index.js" ] || { echo "build-edge: worker-build produced no shim" >&2; exit 1; }
