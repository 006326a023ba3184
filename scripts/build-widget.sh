#!/bin/sh
# Builds the widget into www/:
# - the Leptos panel: cargo (wasm32, release) → wasm-bindgen --target web → wasm-opt -Os
#   (npm binaryen; Debian's is broken) into www/widget/pkg/, its JS glue and snippets
#   (widget/js/) minified by esbuild;
# - the loader: widget/embed/embed.js minified by esbuild into www/embed.js;
# - the panel's stylesheet: widget/style/widget.css minified into www/widget/widget.css.
# Honours CARGO_TARGET_DIR.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
OUT="$ROOT/www/widget/pkg"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --quiet --release -p concierge-widget --target wasm32-unknown-unknown
mkdir -p "$OUT"
rm -rf "$OUT/snippets"
wasm-bindgen --target web --no-typescript --out-dir "$OUT" \
    "$TARGET/wasm32-unknown-unknown/release/concierge_widget.wasm"
# -Os (not -Oz) and no producers/target-features sections: smaller once gzipped.
wasm-opt -Os --strip-producers --strip-target-features \
    --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types --enable-multivalue \
    -o "$OUT/concierge_widget_bg.wasm.opt" "$OUT/concierge_widget_bg.wasm"
mv "$OUT/concierge_widget_bg.wasm.opt" "$OUT/concierge_widget_bg.wasm"
# The JS glue and the panel's JS snippets (widget/js/, e.g. rich turns), minified in place.
for js in "$OUT/concierge_widget.js" $(find "$OUT/snippets" -name '*.js'); do
    "$ESBUILD_BIN" "$js" --minify --format=esm --target=es2020 --log-level=warning \
        --outfile="$js.min"
    mv "$js.min" "$js"
done
"$ESBUILD_BIN" widget/style/widget.css --minify --log-level=warning \
    --outfile="$ROOT/www/widget/widget.css"
"$ESBUILD_BIN" widget/embed/embed.js --minify --target=es2017 --log-level=warning \
    --outfile="$ROOT/www/embed.js"
