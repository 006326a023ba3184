#!/bin/sh
# Load and isolation at 10,000 sites (issue 40): the real Worker under wrangler dev, a
# scripted upstream, the Vectorize double; counted storage calls per turn, added TTFT from
# the scheduled send time, the isolation delta, the breadth ratio, RSS, bytes on disk, and
# the correctness gates. See tests/src/bin/bench_load/ and the README's "Load benchmark".
# BENCH_LOAD_QUICK=1: the short mode `make test` runs (budget and gates only).
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
cargo build --quiet --release -p concierge-e2e --bin bench_load
exec ./target/release/bench_load
