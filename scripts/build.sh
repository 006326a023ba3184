#!/bin/sh
# Builds everything the Worker serves: the Worker itself and the widget assets.
set -eu
. "$(dirname "$0")/env.sh"
sh "$ROOT/scripts/build-widget.sh"
CONCIERGE_SKIP_BUILD=0 sh "$ROOT/scripts/build-edge.sh"
