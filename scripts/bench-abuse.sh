#!/bin/sh
# Abuse benchmark (issue 39): a /64 flood, a visitor flood beside the merchant's calls and a
# 1,000-request handoff flood against a `wrangler dev` of its own (debug routes off). See
# tests/src/bin/bench_abuse.rs; BENCH_ABUSE_RUNS sets the runs (default 3, medians printed).
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
BENCH_ABUSE_RUNS="${BENCH_ABUSE_RUNS:-3}" cargo run --quiet --release -p concierge-e2e --bin bench_abuse
