#!/bin/sh
# Issue 15's benchmark: the wall time of a three-task `knowledge` stage under a real
# `wrangler dev` with a scripted upstream of fixed latency (2500 ms per task), printed as a
# ratio to the slowest task (target ≤ 1.30×: the tasks overlap). Needs a built Worker
# (`sh scripts/build.sh`).
set -eu
cd "$(dirname "$0")/.."
. scripts/env.sh
nice -n 10 cargo test -q -p concierge-e2e --test e2e knowledge::logs::bench_a_three_task_stage_overlaps -- --nocapture 2>&1 |
    grep -E "knowledge stage bench|test result|panicked"
