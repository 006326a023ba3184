#!/bin/sh
# Prints the widget's transfer sizes (gzip -9), as a merchant's visitors pay them.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT/www"
gz() { gzip -9 -c "$1" | wc -c; }
loader=$(gz embed.js)
wasm=$(gz widget/pkg/concierge_widget_bg.wasm)
glue=$(gz widget/pkg/concierge_widget.js)
css=$(gz widget/widget.css)
boot=$(gz widget/boot.js)
total=$((loader + wasm + glue + css + boot))
printf 'widget size (gzip -9): loader %s B, wasm %s B, JS glue %s B, boot %s B, CSS %s B, total %s B (%s KB)\n' \
    "$loader" "$wasm" "$glue" "$boot" "$css" "$total" "$((total / 1024))"
