#!/bin/sh
# Issue 13's benchmark: upload a 100,000-row data set and time `aggregate_data` (grouped sum,
# compiled to one D1 query) under `wrangler dev` (scripted upstream); prints the figures.
# Build first (make build).
set -e
cd "$(dirname "$0")/.."
. scripts/env.sh
exec cargo test -p concierge-e2e --test e2e analyst::bench -- --ignored --nocapture
