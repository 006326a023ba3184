#!/bin/sh
# `make dev`: build, apply migrations, seed demo data, and run the Worker on
# http://127.0.0.1:8787 under wrangler dev (local workerd, D1, KV and Queues). With no
# LLM endpoint configured (LLM_BASE_URL in the environment or .dev.vars), it also starts
# a real local model: llama.cpp's llama-server with SmolLM2-135M, one process for chat and
# one for embeddings. Ctrl-C stops everything it started.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
PORT="${PORT:-8787}"
STATE="$ROOT/.wrangler/state"
LOGS="$ROOT/target/dev-logs"
mkdir -p "$LOGS"

# The widget is built here; wrangler builds the Worker itself (its [build] command) and
# rebuilds it when edge/, shared/ or prompts/ change.
sh scripts/build-widget.sh
echo "dev: applying D1 migrations (local)"
wrangler d1 migrations apply DB --local --persist-to "$STATE" >"$LOGS/migrations.log" 2>&1 ||
    { cat "$LOGS/migrations.log"; exit 1; }
echo "dev: seeding demo data"
# The demo site allows this server's own origins (the demo page embeds the widget).
sed "s/:8787/:$PORT/g" scripts/seed.sql >"$LOGS/seed.sql"
wrangler d1 execute DB --local --persist-to "$STATE" --file "$LOGS/seed.sql" >"$LOGS/seed.log" 2>&1 ||
    { cat "$LOGS/seed.log"; exit 1; }

pids=""
cleanup() {
    trap - EXIT INT TERM
    [ -n "$pids" ] && kill $pids 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

configured_llm="${LLM_BASE_URL:-}"
if [ -z "$configured_llm" ] && [ -f .dev.vars ]; then
    configured_llm=$(sed -n 's/^LLM_BASE_URL *= *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' .dev.vars | tail -n 1)
fi
set -- --var RETRIEVAL_BACKEND:local --var "CONCIERGE_COMMIT:$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --var "WORKER_ORIGINS:http://127.0.0.1:$PORT http://localhost:$PORT"
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

cat <<MSG

  Concierge is running on http://127.0.0.1:$PORT
    demo shop page   http://127.0.0.1:$PORT/
    health           http://127.0.0.1:$PORT/health
    demo site keys   public pk_demo, secret sk_demo_local_only (local only)
    try              curl -s -X POST -H 'x-api-key: sk_demo_local_only' http://127.0.0.1:$PORT/conversations
  Ctrl-C stops everything.

MSG
wait "$wrangler_pid"
