#!/bin/sh
# Records a real streamed chat completion from the local llama-server as a test fixture.
#   scripts/llm-server.sh 8080 &                       # in another terminal
#   scripts/record-fixture.sh shared/tests/data/openai/llamacpp_text.request.json [port]
# writes the raw response body, byte for byte, next to the request as `<name>.sse`. Then
#   BLESS=1 cargo test -p concierge-core --test stream_fixtures
# writes `<name>.expected.json`: review it before committing.
set -eu
request="$1"
port="${2:-8080}"
out="${request%.request.json}.sse"
curl --silent --show-error --no-buffer --fail-with-body \
    -H 'content-type: application/json' --data-binary "@$request" \
    -o "$out" "http://127.0.0.1:$port/v1/chat/completions"
printf 'record-fixture: %s (%s bytes)\n' "$out" "$(wc -c <"$out" | tr -d ' ')"
