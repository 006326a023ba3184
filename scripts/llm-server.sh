#!/bin/sh
# Runs llama.cpp's llama-server with SmolLM2-135M-Instruct on 127.0.0.1, in the foreground.
#   scripts/llm-server.sh [port]            (default port 8080)
# Serves OpenAI-compatible /v1/chat/completions with SSE streaming. The Jinja chat template
# in scripts/llm/smollm2-tools.jinja teaches the model SmolLM2's trained
# `<tool_call>[...]</tool_call>` format, so requests with `tools` (best with
# `tool_choice: "required"` and temperature 0) stream real tool calls.
# Extra llama-server arguments can be passed in LLM_SERVER_ARGS.
set -eu
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LLM_DIR="$ROOT/.tools/llm"
PORT="${1:-8080}"
SERVER="$LLM_DIR/bin/llama-server"
MODEL="$LLM_DIR/SmolLM2-135M-Instruct.Q4_1.gguf"

if [ ! -x "$SERVER" ] || [ ! -s "$MODEL" ]; then
    echo "llm-server: not installed; run scripts/install-llm.sh first" >&2
    exit 1
fi
# shellcheck disable=SC2086 # LLM_SERVER_ARGS is a word list on purpose.
exec "$SERVER" -m "$MODEL" --host 127.0.0.1 --port "$PORT" -t 2 -c 4096 --no-webui \
    --alias smollm2-135m-instruct --jinja --chat-template-file "$ROOT/scripts/llm/smollm2-tools.jinja" \
    ${LLM_SERVER_ARGS:-}
