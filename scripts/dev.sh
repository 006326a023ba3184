#!/bin/sh
# `make dev`: build, apply migrations, seed demo data, and run the Worker on
# http://127.0.0.1:8787 under wrangler dev (local workerd, D1, KV and Queues).
#
# In order: the widget and the Worker are built (a first build takes many minutes), the
# demo data that lives in D1 is seeded, wrangler dev starts (without building again) and
# is waited for until /health answers, then the demo data that needs the running Worker
# (the analyst data sets, the indexed knowledge bases) is seeded and checked
# (scripts/seed-demo.mjs). "Concierge is running" is printed only then. If the Worker
# does not come up or a demo cannot be prepared, it says what failed, stops everything it
# started and exits non-zero. Ctrl-C stops everything it started.
#
# Configuration (LLM_*, EMBED_*, OPERATOR_TOKEN, …) comes from the environment and from
# `.dev.vars` (KEY=value lines; another file with CONCIERGE_DEV_VARS=path); the environment
# wins. Both reach the Worker as wrangler env files, so secrets such as LLM_API_KEY are not
# printed. With no LLM endpoint configured (LLM_BASE_URL), it also starts a real local
# model: llama.cpp's llama-server with SmolLM2-135M, one process for chat and one for
# embeddings (the demo knowledge bases are indexed through it).
#   PORT=8787  CONCIERGE_STATE_DIR=.wrangler/state  LLM_PORT=8080
#   CONCIERGE_DEV_READY_TIMEOUT=300  seconds the Worker (and each llama-server) may take to answer
#   CONCIERGE_DEV_SEED_TIMEOUT=300   seconds the demo knowledge bases may take to be indexed
#   CONCIERGE_SKIP_BUILD=1           build nothing (test harnesses, which have just built)
#   RETRIEVAL=vectorize-double       retrieval through the production Vectorize code path
#                                    (RETRIEVAL_BACKEND=vectorize) against the local Vectorize
#                                    double (tests/doubles/vectorize/) instead of the local
#                                    fallback (the site's object);
#                                    VECTORIZE_DOUBLE_DELAY_MS=1000 (writes become visible after
#                                    it), VECTORIZE_DOUBLE_DIMENSIONS (default: 1024, or 576 for
#                                    the bundled SmolLM2 embeddings)
# Logs: target/dev-logs/<port>/ (wrangler.log, llama-*.log, migrations.log, seed.log).
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
PORT="${PORT:-8787}"
STATE="${CONCIERGE_STATE_DIR:-$ROOT/.wrangler/state}"
LOGS="$ROOT/target/dev-logs/$PORT"
DEV_VARS="${CONCIERGE_DEV_VARS:-$ROOT/.dev.vars}"
READY_TIMEOUT="${CONCIERGE_DEV_READY_TIMEOUT:-300}"
mkdir -p "$LOGS" "$STATE"

pids=""
# Stops what this script started: on any exit, Ctrl-C (INT) and TERM.
cleanup() {
    trap - EXIT INT TERM
    if [ -n "$pids" ]; then
        kill $pids 2>/dev/null || true
        wait 2>/dev/null || true
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# fail MESSAGE [LOG]: says what failed (and the end of LOG), then exits non-zero; the EXIT
# trap stops everything started.
fail() {
    echo "dev: $1" >&2
    if [ -n "${2:-}" ] && [ -s "$2" ]; then
        echo "dev: the end of $2:" >&2
        tail -n 40 "$2" >&2
    fi
    echo "dev: make dev failed; everything it started is stopped" >&2
    exit 1
}

# Something already answering on the port would pass for this Worker.
port_free() {
    code=0
    curl -s -o /dev/null --max-time 3 "http://127.0.0.1:$PORT/" || code=$?
    [ "$code" -eq 7 ] ||
        fail "port $PORT is already in use (another make dev?); stop it or run with PORT=<a free port>"
}

# wait_ready URL WHAT PID LOG: until URL answers 200, as long as process PID lives, for up
# to READY_TIMEOUT seconds (a note every 30 s); fails, with LOG's end, otherwise.
wait_ready() {
    began=$(date +%s)
    note=$((began + 30))
    until curl -sf --max-time 5 -o /dev/null "$1" 2>/dev/null; do
        kill -0 "$3" 2>/dev/null || fail "$2 exited before it answered $1" "$4"
        now=$(date +%s)
        [ $((now - began)) -lt "$READY_TIMEOUT" ] ||
            fail "$2 did not answer $1 within $READY_TIMEOUT s (CONCIERGE_DEV_READY_TIMEOUT)" "$4"
        if [ "$now" -ge "$note" ]; then
            echo "dev: still waiting for $2 ($((now - began)) s)"
            note=$((now + 30))
        fi
        sleep 0.5
    done
}

port_free
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

# Everything is built before wrangler starts: wrangler's own build ([build] in
# wrangler.toml) would run inside its start, for many minutes on a first build. Its first
# build is skipped (the marker below); it still rebuilds when edge/, shared/ or prompts/
# change.
skip_first_build=""
skip_first_sqlcheck_build=""
if [ "${CONCIERGE_SKIP_BUILD:-0}" = 1 ]; then
    echo "dev: not building (CONCIERGE_SKIP_BUILD=1)"
else
    echo "dev: building the widget and the Worker (a first build takes many minutes)"
    build_began=$(date +%s)
    sh scripts/build.sh || fail "the build failed (above)"
    echo "dev: built in $(($(date +%s) - build_began)) s"
    skip_first_build="$STATE/.built-for-wrangler"
    skip_first_sqlcheck_build="$STATE/.sqlcheck-built-for-wrangler"
    : >"$skip_first_build"
    : >"$skip_first_sqlcheck_build"
fi
[ -f edge/build/index.js ] || fail "the Worker is not built (edge/build/index.js): run make build"
[ -f sqlcheck/build/sqlcheck_bg.wasm ] ||
    fail "the SQL validator Worker is not built (sqlcheck/build/): run make build"
echo "dev: applying D1 migrations (local)"
wrangler d1 migrations apply DB --local --persist-to "$STATE" >"$LOGS/migrations.log" 2>&1 ||
    fail "applying the D1 migrations failed" "$LOGS/migrations.log"
wrangler d1 migrations apply LISTINGS --local --persist-to "$STATE" >>"$LOGS/migrations.log" 2>&1 ||
    fail "applying the LISTINGS migrations failed" "$LOGS/migrations.log"
echo "dev: seeding demo data"
# The demo site allows this server's own origins (the demo page embeds the widget). The
# demo knowledge bases are indexed again once the Worker runs: pending until then.
{
    sed "s/:8787/:$PORT/g" scripts/seed.sql
    echo "UPDATE knowledge_documents SET index_status = 'pending' WHERE site_id IN ('site_demo', 'site_kb_demo');"
} >"$LOGS/seed.sql"
wrangler d1 execute DB --local --persist-to "$STATE" --file "$LOGS/seed.sql" >"$LOGS/seed.log" 2>&1 ||
    fail "seeding the demo sites failed" "$LOGS/seed.log"
# The `rental` demo site, and its 5,000 generated listings in the LISTINGS database.
sed "s/:8787/:$PORT/g" scripts/seed-rental.sql >"$LOGS/seed-rental.sql"
node scripts/seed-rental.mjs site_rental_demo >"$LOGS/seed-listings.sql"
{ wrangler d1 execute DB --local --persist-to "$STATE" --file "$LOGS/seed-rental.sql" &&
    wrangler d1 execute LISTINGS --local --persist-to "$STATE" --file "$LOGS/seed-listings.sql"; } \
    >>"$LOGS/seed.log" 2>&1 || fail "seeding the rental demo failed" "$LOGS/seed.log"
# The `analyst` demo site (its data sets are uploaded once the Worker runs, below).
sed "s/:8787/:$PORT/g" scripts/seed-analyst.sql >"$LOGS/seed-analyst.sql"
wrangler d1 execute DB --local --persist-to "$STATE" --file "$LOGS/seed-analyst.sql" >>"$LOGS/seed.log" 2>&1 ||
    fail "seeding the analyst demo site failed" "$LOGS/seed.log"
node scripts/seed-analyst.mjs orders >"$LOGS/don_hang.csv"
node scripts/seed-analyst.mjs salaries >"$LOGS/luong_nhan_vien.csv"

configured_llm="${LLM_BASE_URL:-}"
if [ -z "$configured_llm" ] && [ -f "$DEV_VARS" ]; then
    configured_llm=$(sed -n "s/^LLM_BASE_URL *= *[\"']\{0,1\}\([^\"']*\)[\"']\{0,1\}\$/\1/p" "$DEV_VARS" | tail -n 1)
fi
# Development mode: loopback http endpoints allowed, the diagnostics route on; the panel
# is served from this Worker's own origins.
case "${RETRIEVAL:-local}" in
    local) backend=local ;;
    vectorize-double) backend=vectorize ;;
    *) fail "RETRIEVAL must be local or vectorize-double, not ${RETRIEVAL}" ;;
esac
set -- --var "RETRIEVAL_BACKEND:$backend" --var DEV_MODE:on --var DEBUG_ROUTES:on \
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
    chat_pid=$!
    pids="$pids $chat_pid"
    LLM_SERVER_ARGS="--embeddings --pooling mean" sh scripts/llm-server.sh "$embed_port" >"$LOGS/llama-embed.log" 2>&1 &
    embed_pid=$!
    pids="$pids $embed_pid"
    wait_ready "http://127.0.0.1:$chat_port/health" "llama-server (chat)" "$chat_pid" "$LOGS/llama-chat.log"
    wait_ready "http://127.0.0.1:$embed_port/health" "llama-server (embeddings)" "$embed_pid" "$LOGS/llama-embed.log"
    set -- "$@" --var "LLM_PROVIDER:openai" --var "LLM_BASE_URL:http://127.0.0.1:$chat_port/v1" \
        --var "LLM_MODEL:smollm2-135m-instruct" --var "EMBED_BASE_URL:http://127.0.0.1:$embed_port/v1" \
        --var "EMBED_MODEL:smollm2-135m-instruct"
fi

if [ "$backend" = vectorize ]; then
    # The bundled SmolLM2 embeds in 576 dimensions; a configured model in the index's.
    dimensions="${VECTORIZE_DOUBLE_DIMENSIONS:-}"
    if [ -z "$dimensions" ] && [ -z "$configured_llm" ]; then
        dimensions=576
    fi
    sh scripts/vectorize-double.sh "$STATE/vectorize-double" "${VECTORIZE_DOUBLE_DELAY_MS:-1000}" \
        "$dimensions" >/dev/null || fail "writing the Vectorize double's configuration failed"
    set -- -c "$ROOT/wrangler.vectorize-double.toml" -c "$STATE/vectorize-double/vectorize-double.toml" "$@"
    echo "dev: retrieval through the Vectorize code path, against the local Vectorize double"
else
    set -- -c "$ROOT/wrangler.toml" "$@"
fi
# The SQL validator Worker (sqlcheck/, `concierge-sql`) runs in the same session: the
# Worker's SQL_CHECK service binding reaches it (the first -c is the one on $PORT).
set -- "$@" -c "$ROOT/sqlcheck/wrangler.toml"

port_free
echo "dev: starting the Worker (wrangler dev; log in $LOGS/wrangler.log)"
CONCIERGE_SKIP_NEXT_BUILD="$skip_first_build" CONCIERGE_SKIP_NEXT_SQLCHECK_BUILD="$skip_first_sqlcheck_build" \
    wrangler dev --local --ip 127.0.0.1 --port "$PORT" --persist-to "$STATE" \
    --show-interactive-dev-session=false "$@" >"$LOGS/wrangler.log" 2>&1 &
wrangler_pid=$!
pids="$pids $wrangler_pid"
wait_ready "http://127.0.0.1:$PORT/health" "the Worker (wrangler dev)" "$wrangler_pid" "$LOGS/wrangler.log"
echo "dev: the Worker answers; seeding the demos that need it"
node scripts/seed-demo.mjs "http://127.0.0.1:$PORT" "$LOGS" ||
    fail "the demo data could not be prepared (above)" "$LOGS/wrangler.log"

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
# The Worker's log from here on, until it stops.
tail -n 0 -f --pid="$wrangler_pid" "$LOGS/wrangler.log" &
pids="$pids $!"
status=0
wait "$wrangler_pid" || status=$?
# Ctrl-C reaches wrangler too (the terminal's process group): it ends with 130.
[ "$status" -eq 130 ] && exit 130
echo "dev: wrangler dev exited (status $status)" >&2
exit "$status"
