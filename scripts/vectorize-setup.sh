#!/bin/sh
# Creates the Vectorize index the Worker's `VECTORIZE` binding uses (wrangler.toml,
# `[[vectorize]]`), with a metadata index for every field the Worker filters on.
#
#   sh scripts/vectorize-setup.sh            # runs the commands (needs `wrangler login`)
#   sh scripts/vectorize-setup.sh --print    # prints them only
#
# Run it once, before the first deployment: Vectorize indexes a vector's metadata only
# if the metadata index existed when the vector was written (vectors written earlier
# are never found by a filter on that field; re-index them, e.g. PUT each document
# again). The dimensions must be those of the embedding model (bge-m3: 1024) and cannot
# change later: another model means another index.
#
# This file is also configuration. The Worker (edge/src/bindings/vectors.rs) reads the
# `--property-name` lines below at build time and refuses a query filtering on any other
# field; the local Vectorize double (tests/doubles/vectorize/) reads the same lines as
# its metadata indexes; a test (tests/tests/vectorize_setup.rs) checks them against the
# filters the core builds. One `create-metadata-index` command per line, as below.
set -eu
INDEX="${VECTORIZE_INDEX:-concierge-knowledge}"
DIMENSIONS="${VECTORIZE_DIMENSIONS:-1024}"

run() {
    echo "$*"
    if [ "$PRINT" = 0 ]; then
        "$@"
    fi
}
PRINT=0
[ "${1:-}" = "--print" ] && PRINT=1
if [ "$PRINT" = 0 ]; then
    . "$(dirname "$0")/env.sh"
fi

run npx wrangler vectorize create "$INDEX" --dimensions="$DIMENSIONS" --metric=cosine
# Every query: the site it is scoped to.
run npx wrangler vectorize create-metadata-index "$INDEX" --property-name=site_id --type=string
# Knowledge or conversation memory (or a template's own source, e.g. rental_qa).
run npx wrangler vectorize create-metadata-index "$INDEX" --property-name=source --type=string
# Conversation memory: this conversation's messages only.
run npx wrangler vectorize create-metadata-index "$INDEX" --property-name=conversation_id --type=string
# `knowledge`: the caller's permitted scopes and departments ($in).
run npx wrangler vectorize create-metadata-index "$INDEX" --property-name=scope --type=string
run npx wrangler vectorize create-metadata-index "$INDEX" --property-name=department --type=string
