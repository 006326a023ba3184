#!/bin/sh
# Cold-start benchmark: a fresh wrangler dev per run, timing a new isolate's first /health
# and first streamed turn, for the Concierge Worker and the bare relay (medians). See
# tests/src/bin/bench_cold_start.rs; BENCH_COLD_RUNS sets the runs (default 5).
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
cargo run --quiet --release -p concierge-e2e --bin bench_cold_start
