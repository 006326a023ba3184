#!/bin/sh
# `make dev`: build, apply migrations, seed demo data, run the Worker on
# http://127.0.0.1:8787 under wrangler dev (local workerd, D1 and KV). Ctrl-C stops it.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
PORT="${PORT:-8787}"
STATE="$ROOT/.wrangler/state"

# The widget is built here; wrangler builds the Worker itself (its [build] command) and
# rebuilds it when edge/, shared/ or prompts/ change.
sh scripts/build-widget.sh
echo "dev: applying D1 migrations (local)"
wrangler d1 migrations apply DB --local --persist-to "$STATE" >/dev/null
echo "dev: seeding demo data"
wrangler d1 execute DB --local --persist-to "$STATE" --file scripts/seed.sql >/dev/null

cat <<MSG

  Concierge is starting on http://127.0.0.1:$PORT
    demo shop page   http://127.0.0.1:$PORT/
    health           http://127.0.0.1:$PORT/health
    demo site keys   public pk_demo, secret sk_demo_local_only (local only)
  Ctrl-C stops everything.

MSG
# exec: wrangler receives Ctrl-C directly and stops workerd with it.
exec wrangler dev --local --ip 127.0.0.1 --port "$PORT" \
    --persist-to "$STATE" --show-interactive-dev-session=false \
    --var RETRIEVAL_BACKEND:local
