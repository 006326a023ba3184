#!/bin/sh
# `make test`: formatting, lints (host and wasm32), unit tests, the wasm32 builds, and
# the end-to-end tests (real wrangler dev, real headless Chromium).
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
WASM=wasm32-unknown-unknown
started=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$*" "$(( $(date +%s) - started ))"; }

step "cargo fmt --check"
cargo fmt --all --check

step "clippy, host"
cargo clippy --quiet -p concierge-core -p concierge-e2e -p concierge-sqlcheck --all-targets --all-features -- -D warnings
cargo clippy --quiet -p concierge-widget --all-targets -- -D warnings

step "clippy, wasm32"
cargo clippy --quiet -p concierge-core --no-default-features --target $WASM -- -D warnings
# The rental template builds no_std for wasm32 too: without its SQL validator (the main
# Worker's set) and with it (sqlparser: the validator Worker's).
cargo clippy --quiet -p concierge-core --no-default-features --features rental,knowledge --target $WASM -- -D warnings
cargo clippy --quiet -p concierge-core --no-default-features --features rental-sql,knowledge --target $WASM -- -D warnings
cargo clippy --quiet -p concierge-edge -p concierge-widget -p concierge-sqlcheck --target $WASM -- -D warnings

step "unit tests, host"
cargo test --quiet -p concierge-core --all-features
cargo test --quiet -p concierge-sqlcheck
cargo test --quiet -p concierge-widget

step "AI SDK stream fixtures through the ai package's own parser"
node tests/ai-sdk/parse.mjs

step "the local Vectorize double's documented limits"
node --test tests/doubles/vectorize/test/*.test.js

step "the widget's live stream as the server ends it"
node --test tests/widget-live/*.test.mjs

step "wasm32 builds: core (no_std), widget, Worker, SQL validator Worker"
cargo build --quiet -p concierge-core --no-default-features --target $WASM
sh scripts/build.sh
sh scripts/sizes.sh
sh scripts/worker-size.sh check

step "end-to-end: wrangler dev + headless Chromium"
cargo test --quiet -p concierge-e2e

step "load benchmark, short mode: the counted per-turn budget and the correctness gates"
BENCH_LOAD_QUICK=1 sh scripts/bench-load.sh

step "all green"
