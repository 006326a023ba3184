#!/bin/sh
# Measures the `guarded` guardrail's accuracy on tests/guardrail/questions.tsv (68 bilingual
# in-domain, off-domain and near-miss questions) with the real small llama.cpp model
# (scripts/install-llm.sh installs it), and prints the figures.
#   scripts/guardrail-accuracy.sh                    (starts llama-server on a free port)
#   GUARDRAIL_BASE_URL=https://…/v1 GUARDRAIL_MODEL=qwen2.5:3b-instruct scripts/guardrail-accuracy.sh
#                                                   (any OpenAI-compatible endpoint instead)
#   GUARDRAIL_DOMAIN_VI='NHA KHOA (RĂNG, NƯỚU, MIỆNG)' GUARDRAIL_DOMAIN_EN='DENTISTRY (TEETH, GUMS, MOUTH)' \
#       scripts/guardrail-accuracy.sh               (compare a domain's wording)
set -eu
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
if [ -n "${GUARDRAIL_BASE_URL:-}" ]; then
    exec cargo run -q -p concierge-core --features std --example guardrail_accuracy -- \
        "$GUARDRAIL_BASE_URL" "${GUARDRAIL_MODEL:-default}"
fi
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
LOG="${TMPDIR:-/tmp}/guardrail-llm-$$.log"
sh scripts/llm-server.sh "$PORT" >"$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null || true' EXIT INT TERM
i=0
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -gt 300 ] || ! kill -0 "$SERVER" 2>/dev/null; then
        echo "guardrail-accuracy: llama-server did not start; log: $LOG" >&2
        exit 1
    fi
    sleep 0.2
done
cargo run -q -p concierge-core --features std --example guardrail_accuracy -- \
    "http://127.0.0.1:$PORT/v1" smollm2-135m-instruct
