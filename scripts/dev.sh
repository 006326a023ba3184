#!/bin/sh
# `make dev`: build, apply migrations, seed demo data, and run the Worker on
# http://127.0.0.1:8787 under wrangler dev (local workerd, D1, KV and Queues).
#
# Configuration (LLM_*, EMBED_*, OPERATOR_TOKEN, …) comes from the environment and from
# `.dev.vars` (KEY=value lines; another file with CONCIERGE_DEV_VARS=path); the environment
# wins. Both reach the Worker as wrangler env files, so secrets such as LLM_API_KEY are not
# printed. With no LLM endpoint configured (LLM_BASE_URL), it also starts a real local
# model: llama.cpp's llama-server with SmolLM2-135M, one process for chat and one for
# embeddings. Ctrl-C stops everything it started.
#   PORT=8787  CONCIERGE_STATE_DIR=.wrangler/state  LLM_PORT=8080
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
PORT="${PORT:-8787}"
STATE="${CONCIERGE_STATE_DIR:-$ROOT/.wrangler/state}"
LOGS="$ROOT/target/dev-logs"
DEV_VARS="${CONCIERGE_DEV_VARS:-$ROOT/.dev.vars}"
mkdir -p "$LOGS" "$STATE"

# The Worker's settings (wrangler.toml [vars] and secrets) that the environment passes on,
# over the vars file's.
WORKER_SETTINGS="LLM_PROVIDER LLM_BASE_URL LLM_MODEL LLM_API_KEY LLM_FIRST_TOKEN_TIMEOUT_MS
LLM_IDLE_TIMEOUT_MS EMBED_BASE_URL EMBED_MODEL EMBED_MAX_ATTEMPTS EMBED_RETRY_BASE_SECONDS
OPERATOR_TOKEN SITE_KEYS_SECRET"
passed_on() {
    for name in $WORKER_SETTINGS; do
        printenv "$name" >/dev/null && echo "$name"
    done
    return 0
}
env_files=""
if [ -f "$DEV_VARS" ]; then
    env_files="$DEV_VARS"
fi
from_env="$STATE/.env.from-environment"
: >"$from_env"
chmod 600 "$from_env"
for name in $(passed_on); do
    value=$(printenv "$name")
    case "$value" in
        *"'"* | *"
"*) echo "dev: $name contains a quote or a newline; put it in $DEV_VARS instead" >&2; exit 1 ;;
    esac
    printf "%s='%s'\n" "$name" "$value" >>"$from_env"
done
# Sites' own LLM keys are sealed with SITE_KEYS_SECRET: unless one is given, a random one
# is kept with the local state (so keys stored earlier stay readable).
if ! printenv SITE_KEYS_SECRET >/dev/null && ! grep -qs '^SITE_KEYS_SECRET *=' "$DEV_VARS"; then
    secret_file="$STATE/.site-keys-secret"
    if [ ! -s "$secret_file" ]; then
        (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$secret_file")
    fi
    printf "SITE_KEYS_SECRET='%s'\n" "$(cat "$secret_file")" >>"$from_env"
fi
env_files="$env_files $from_env"

# The widget is built here; wrangler builds the Worker itself (its [build] command) and
# rebuilds it when edge/, shared/ or prompts/ change. CONCIERGE_SKIP_BUILD=1 (test
# harnesses, which have just built) skips both.
[ "${CONCIERGE_SKIP_BUILD:-0}" = 1 ] || sh scripts/build-widget.sh
echo "dev: applying D1 migrations (local)"
wrangler d1 migrations apply DB --local --persist-to "$STATE" >"$LOGS/migrations.log" 2>&1 ||
    { cat "$LOGS/migrations.log"; exit 1; }
wrangler d1 migrations apply LISTINGS --local --persist-to "$STATE" >>"$LOGS/migrations.log" 2>&1 ||
    { cat "$LOGS/migrations.log"; exit 1; }
echo "dev: seeding demo data"
# The demo site allows this server's own origins (the demo page embeds the widget).
sed "s/:8787/:$PORT/g" scripts/seed.sql >"$LOGS/seed.sql"
wrangler d1 execute DB --local --persist-to "$STATE" --file "$LOGS/seed.sql" >"$LOGS/seed.log" 2>&1 ||
    { cat "$LOGS/seed.log"; exit 1; }
# The `rental` demo site, and its 5,000 generated listings in the LISTINGS database.
sed "s/:8787/:$PORT/g" scripts/seed-rental.sql >"$LOGS/seed-rental.sql"
node scripts/seed-rental.mjs site_rental_demo >"$LOGS/seed-listings.sql"
{ wrangler d1 execute DB --local --persist-to "$STATE" --file "$LOGS/seed-rental.sql" &&
    wrangler d1 execute LISTINGS --local --persist-to "$STATE" --file "$LOGS/seed-listings.sql"; } \
    >>"$LOGS/seed.log" 2>&1 || { cat "$LOGS/seed.log"; exit 1; }
# The `analyst` demo site (its data sets are uploaded once the Worker runs, below).
sed "s/:8787/:$PORT/g" scripts/seed-analyst.sql >"$LOGS/seed-analyst.sql"
wrangler d1 execute DB --local --persist-to "$STATE" --file "$LOGS/seed-analyst.sql" >>"$LOGS/seed.log" 2>&1 ||
    { cat "$LOGS/seed.log"; exit 1; }

pids=""
cleanup() {
    trap - EXIT INT TERM
    [ -n "$pids" ] && kill $pids 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

configured_llm="${LLM_BASE_URL:-}"
if [ -z "$configured_llm" ] && [ -f "$DEV_VARS" ]; then
    configured_llm=$(sed -n "s/^LLM_BASE_URL *= *[\"']\{0,1\}\([^\"']*\)[\"']\{0,1\}\$/\1/p" "$DEV_VARS" | tail -n 1)
fi
# Development mode: loopback http endpoints allowed, the diagnostics route on; the panel
# is served from this Worker's own origins.
set -- --var RETRIEVAL_BACKEND:local --var DEV_MODE:on --var DEBUG_ROUTES:on \
    --var "CONCIERGE_COMMIT:$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --var "WORKER_ORIGINS:http://127.0.0.1:$PORT http://localhost:$PORT"
for file in $env_files; do
    set -- "$@" --env-file "$file"
done
if [ -n "$configured_llm" ]; then
    echo "dev: using the configured LLM endpoint $configured_llm"
else
    chat_port="${LLM_PORT:-8080}"
    embed_port=$((chat_port + 1))
    echo "dev: starting llama-server (SmolLM2-135M) for chat on :$chat_port and embeddings on :$embed_port"
    sh scripts/llm-server.sh "$chat_port" >"$LOGS/llama-chat.log" 2>&1 &
    pids="$pids $!"
    LLM_SERVER_ARGS="--embeddings --pooling mean" sh scripts/llm-server.sh "$embed_port" >"$LOGS/llama-embed.log" 2>&1 &
    pids="$pids $!"
    for _ in $(seq 1 100); do
        curl -sf "http://127.0.0.1:$chat_port/health" >/dev/null 2>&1 &&
            curl -sf "http://127.0.0.1:$embed_port/health" >/dev/null 2>&1 && break
        sleep 0.3
    done
    set -- "$@" --var "LLM_PROVIDER:openai" --var "LLM_BASE_URL:http://127.0.0.1:$chat_port/v1" \
        --var "LLM_MODEL:smollm2-135m-instruct" --var "EMBED_BASE_URL:http://127.0.0.1:$embed_port/v1" \
        --var "EMBED_MODEL:smollm2-135m-instruct"
fi

wrangler dev --local --ip 127.0.0.1 --port "$PORT" --persist-to "$STATE" \
    --show-interactive-dev-session=false "$@" &
wrangler_pid=$!
pids="$pids $wrangler_pid"
for _ in $(seq 1 240); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    kill -0 "$wrangler_pid" 2>/dev/null || { echo "dev: wrangler dev exited" >&2; exit 1; }
    sleep 0.25
done
# Index the demo knowledge base (through the queue, in the background).
curl -sf -X POST -H "x-api-key: sk_demo_local_only" "http://127.0.0.1:$PORT/admin/index" >/dev/null ||
    echo "dev: could not queue the knowledge base for indexing" >&2
curl -sf -X POST -H "x-api-key: sk_kb_demo_local_only" "http://127.0.0.1:$PORT/admin/index" >/dev/null ||
    echo "dev: could not queue the knowledge demo for indexing" >&2

# The analyst demo's data sets: orders for user shop-owner, salaries for user hr-manager.
node scripts/seed-analyst.mjs orders >"$LOGS/don_hang.csv"
node scripts/seed-analyst.mjs salaries >"$LOGS/luong_nhan_vien.csv"
for set in "don_hang shop-owner" "luong_nhan_vien hr-manager"; do
    name=${set% *}
    user=${set#* }
    curl -sf -X PUT -H "x-api-key: sk_analyst_demo_local_only" -H "content-type: text/csv" \
        --data-binary "@$LOGS/$name.csv" "http://127.0.0.1:$PORT/admin/data/$name?user_id=$user" >/dev/null ||
        echo "dev: could not upload the analyst demo data set $name" >&2
done

cat <<MSG

  Concierge is running on http://127.0.0.1:$PORT
    demo shop page   http://127.0.0.1:$PORT/
    health           http://127.0.0.1:$PORT/health
    demo site keys   public pk_demo, secret sk_demo_local_only (local only)
    dental (guarded) public pk_dental_demo, secret sk_dental_local_only (local only);
                     OpenAI-compatible model "dental-duckduckgo" at /v1/chat/completions
    rental demo      public pk_rental_demo, secret sk_rental_demo_local_only (5,000 listings)
    knowledge demo   public pk_kb_demo, secret sk_kb_demo_local_only (template knowledge: HR/IT/general
                     documents at public/internal/private scope, a conflicting old policy, VPN logs)
    try knowledge    curl -s -X POST -H 'x-api-key: sk_kb_demo_local_only' -H 'content-type: application/json' \\
                       -d '{"query":"Đi muộn bị xử lý thế nào?","user_context":{"user_id":"u1","permissions":["internal","private"],"department":"hr"}}' \\
                       http://127.0.0.1:$PORT/knowledge/query
    analyst demo     public pk_analyst_demo, secret sk_analyst_demo_local_only (data sets: don_hang of
                     user shop-owner, luong_nhan_vien of user hr-manager; GET /admin/data lists them)
    try analyst      curl -s -X POST -H 'x-api-key: sk_analyst_demo_local_only' -H 'content-type: application/json' \\
                       -d '{"user_id":"shop-owner"}' http://127.0.0.1:$PORT/conversations
    try              curl -s -X POST -H 'x-api-key: sk_demo_local_only' http://127.0.0.1:$PORT/conversations
  Ctrl-C stops everything.

MSG
wait "$wrangler_pid"
