#!/bin/sh
# Builds the widget into www/:
# - the Leptos panel: cargo (wasm32, release) → wasm-bindgen --target web → wasm-opt -Os
#   (npm binaryen; Debian's is broken) into www/widget/pkg/, its JS glue bundled with the
#   JS snippets (widget/js/) and minified by esbuild;
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
# The JS glue bundled with the panel's JS snippets (widget/js/: rich turns) and minified:
# one file, one request, smaller once gzipped.
"$ESBUILD_BIN" "$OUT/concierge_widget.js" --bundle --minify --format=esm --target=es2020 \
    --log-level=warning --outfile="$OUT/concierge_widget.min.js"
mv "$OUT/concierge_widget.min.js" "$OUT/concierge_widget.js"
rm -rf "$OUT/snippets"
# Charts, loaded on demand by rich.js (beside the bundle that imports them): not part of the
# panel's first download.
"$ESBUILD_BIN" widget/js/chart.js --minify --format=esm --target=es2020 \
    --log-level=warning --outfile="$OUT/chart.js"
# Loaded on demand too: the earlier conversations (by flow.js, the first time the list is
# opened), storing feedback with the comment box (by rich.js, on the first vote) and the
# form to leave a contact when nobody is free (by rich.js, under such a notice).
for lazy in history feedback contact; do
    "$ESBUILD_BIN" "widget/js/$lazy.js" --minify --format=esm --target=es2020 \
        --log-level=warning --outfile="$OUT/$lazy.js"
done
"$ESBUILD_BIN" widget/style/widget.css --minify --log-level=warning \
    --outfile="$ROOT/www/widget/widget.css"
# The widget's rich-turn renderer on its own for the merchant console's conversation view
# (www/console/console-review.js imports it): the same code the panel runs, plus the
# panel's words (`WORDS`) generated from widget/src/i18n/ in the order rich.js takes them.
node --no-warnings scripts/console-words.mjs >"$OUT/console-rich.js"
"$ESBUILD_BIN" "$OUT/console-rich.js" --bundle --minify --format=esm --target=es2020 \
    --log-level=warning --outfile="$ROOT/www/console/rich.js"
cp "$OUT/chart.js" "$ROOT/www/console/chart.js"
rm -f "$OUT/console-rich.js"
"$ESBUILD_BIN" widget/embed/embed.js --minify --target=es2017 --log-level=warning \
    --outfile="$ROOT/www/embed.js"
