#!/bin/sh
# Writes the two wrangler configurations that run the Concierge Worker against the local
# Vectorize double (tests/doubles/vectorize/) in one `wrangler dev` session, and prints
# the arguments that select them: `-c <concierge config> -c <double config>`.
#
#   sh scripts/vectorize-double.sh DIR [DELAY_MS] [DIMENSIONS]
#
# The Concierge configuration is wrangler.toml with its `[[vectorize]]` binding replaced
# by a service binding of the same name (`VECTORIZE`) to the double: the Worker's code
# path is production's (RETRIEVAL_BACKEND=vectorize), only the index is local. It is
# written beside wrangler.toml (wrangler.vectorize-double.toml, ignored by git) so its
# relative paths still hold; it depends on wrangler.toml alone, and is replaced only when
# that changed (a running `wrangler dev` reloads on a new file, and the double forgets its
# vectors). The double's configuration goes to DIR, with DELAY_MS (how long a write takes
# to become visible; default 1000) and DIMENSIONS (default: the index's, from
# scripts/vectorize-setup.sh).
set -eu
ROOT="${CONCIERGE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}"
DIR="$1"
DELAY_MS="${2:-1000}"
DIMENSIONS="${3:-}"
mkdir -p "$DIR"

concierge="$ROOT/wrangler.vectorize-double.toml"
tmp="$concierge.$$"
awk '
    /^\[\[vectorize\]\]/ { skip = 1; next }
    skip && /^(\[|$)/ { skip = 0 }
    skip { next }
    { print }
    END {
        print ""
        print "# The local Vectorize double in place of the index (scripts/vectorize-double.sh)."
        print "[[services]]"
        print "binding = \"VECTORIZE\""
        print "service = \"concierge-vectorize-double\""
    }
' "$ROOT/wrangler.toml" >"$tmp"
grep -q '^binding = "VECTORIZE"' "$tmp" || { echo "vectorize-double: no VECTORIZE binding written" >&2; exit 1; }
if cmp -s "$tmp" "$concierge"; then
    rm -f "$tmp"
else
    mv "$tmp" "$concierge"
fi

double="$DIR/vectorize-double.toml"
sed -e "s|^main = \"src/worker.js\"|main = \"$ROOT/tests/doubles/vectorize/src/worker.js\"|" \
    -e "s|^VECTORIZE_DOUBLE_DELAY_MS = .*|VECTORIZE_DOUBLE_DELAY_MS = \"$DELAY_MS\"|" \
    -e "s|^VECTORIZE_DOUBLE_DIMENSIONS = .*|VECTORIZE_DOUBLE_DIMENSIONS = \"$DIMENSIONS\"|" \
    "$ROOT/tests/doubles/vectorize/wrangler.toml" >"$double"
echo "-c $concierge -c $double"
