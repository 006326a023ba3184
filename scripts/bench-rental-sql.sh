#!/bin/sh
# Issue 24's benchmark: every rental statement the SQL validator accepts — the heavy
# corpus (shared/tests/rental/heavy.sql), the accepted lines of the validator corpus and
# 400 generated statements — run inside the site-scoped wrapper over the 5,000-listing
# demo data (scripts/seed-rental.mjs), median of 3 runs each; prints the slowest beside
# the 250 ms target and fails above it. The engine is SQLite as rusqlite bundles it
# (D1 local is SQLite inside workerd), built with the `bench` profile (optimised).
set -e
cd "$(dirname "$0")/.."
. scripts/env.sh
seed="${TMPDIR:-/tmp}/concierge-bench-rental-sql.$$.sql"
trap 'rm -f "$seed"' EXIT
node scripts/seed-rental.mjs site_rental_demo >"$seed"
RENTAL_SEED_SQL="$seed" cargo test -p concierge-core --all-features --profile "${BENCH_PROFILE:-bench}" \
  --test rental_sql_cost -- --ignored --nocapture bench_accepted_statements
