#!/bin/sh
# Issue 14's benchmark: a canonical-hit turn and a filtered query over 5,000 listings
# under `wrangler dev` (scripted upstream); prints the figures. Build first (make build).
set -e
cd "$(dirname "$0")/.."
. scripts/env.sh
exec cargo test -p concierge-e2e --test e2e rental::bench -- --ignored --nocapture
