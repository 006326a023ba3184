#!/bin/sh
# Builds the widget into www/:
# - the Leptos panel: cargo (wasm32, release) → wasm-bindgen --target web → wasm-opt -Oz
#   (npm binaryen; Debian's is broken) into www/widget/pkg/;
# - the loader: widget/embed/embed.js minified by esbuild into www/embed.js.
# Honours CARGO_TARGET_DIR.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
OUT="$ROOT/www/widget/pkg"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --quiet --release -p concierge-widget --target wasm32-unknown-unknown
mkdir -p "$OUT"
wasm-bindgen --target web --no-typescript --out-dir "$OUT" \
    "$TARGET/wasm32-unknown-unknown/release/concierge_widget.wasm"
wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    -o "$OUT/concierge_widget_bg.wasm.opt" "$OUT/concierge_widget_bg.wasm"
mv "$OUT/concierge_widget_bg.wasm.opt" "$OUT/concierge_widget_bg.wasm"
"$ESBUILD_BIN" widget/embed/embed.js --minify --target=es2017 --log-level=warning \
    --outfile="$ROOT/www/embed.js"
