#!/bin/sh
# Issue 24's pipeline benchmark: every pipeline of shared/tests/corpus/analyst_pipelines.json
# run as execute_aggregation runs it (validate, evaluate within the per-call work and byte
# budget, cap the result) over the demo data and over 50,000 orders; prints each one's
# median time of 3, work units, budget bytes and native heap peak, and the worst accepted
# pipeline beside the targets (≤ 1 s, ≤ 32 MB). Release profile: concierge-core is built
# size-optimised, as the Worker builds it.
set -e
cd "$(dirname "$0")/.."
. scripts/env.sh
exec cargo run --quiet --release -p concierge-core --features analyst-regex --example bench_pipelines
