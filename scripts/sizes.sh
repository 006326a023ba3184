#!/bin/sh
# Prints the widget's transfer sizes (gzip -9), as a merchant's visitors pay them, and
# fails when over budget: the loader at most 3 KB, everything (loader, wasm, JS glue,
# boot script, CSS) at most 125 KB (KB = 1000 bytes). What loads on demand (charts, the
# earlier-conversations list, feedback) is printed, not counted.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT/www"
LOADER_BUDGET=3000
TOTAL_BUDGET=125000
gz() { gzip -9 -c "$1" | wc -c; }
loader=$(gz embed.js)
wasm=$(gz widget/pkg/concierge_widget_bg.wasm)
glue=$(gz widget/pkg/concierge_widget.js)
css=$(gz widget/widget.css)
boot=$(gz widget/boot.js)
snippets=0
for js in $(find widget/pkg/snippets -name '*.js' 2>/dev/null); do
    snippets=$((snippets + $(gz "$js")))
done
total=$((loader + wasm + glue + snippets + css + boot))
printf 'widget size (gzip -9): loader %s B, wasm %s B, JS glue %s B, JS snippets %s B, boot %s B, CSS %s B, total %s B (%s.%s KB)\n' \
    "$loader" "$wasm" "$glue" "$snippets" "$boot" "$css" "$total" "$((total / 1000))" "$((total % 1000 / 100))"
# Loaded on demand, not counted: widget/js/chart.js (the first answer with a chart) and
# widget/js/history.js (the first time the earlier-conversations list is opened) and
# widget/js/feedback.js (the first vote or comment) and widget/js/contact.js (the form to
# leave a contact under a "nobody is free" notice).
printf 'on demand: charts %s B, earlier conversations %s B, feedback %s B, contact form %s B\n' \
    "$(gz widget/pkg/chart.js)" "$(gz widget/pkg/history.js)" "$(gz widget/pkg/feedback.js)" \
    "$(gz widget/pkg/contact.js)"
printf 'budget: loader %s B <= %s B, total %s B <= %s B\n' "$loader" "$LOADER_BUDGET" "$total" "$TOTAL_BUDGET"
if [ "$loader" -gt "$LOADER_BUDGET" ] || [ "$total" -gt "$TOTAL_BUDGET" ]; then
    echo "sizes: over budget" >&2
    exit 1
fi
