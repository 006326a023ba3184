#!/bin/sh
# End-to-end benchmark: one streamed turn through the Worker under wrangler dev against a
# scripted upstream (first token 200 ms, then 50 tokens 10 ms apart). See tests/src/bin/bench_e2e/.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
cargo run --quiet --release -p concierge-e2e --bin bench_e2e
