#!/bin/sh
# Builds everything the Worker serves: the Worker itself, the widget assets, and the SQL
# validator Worker (sqlcheck/) it calls.
set -eu
. "$(dirname "$0")/env.sh"
sh "$ROOT/scripts/build-widget.sh"
CONCIERGE_SKIP_BUILD=0 sh "$ROOT/scripts/build-edge.sh"
# The SQL validator Worker the Worker calls through its SQL_CHECK service binding.
CONCIERGE_SKIP_BUILD=0 sh "$ROOT/scripts/build-sqlcheck.sh"
