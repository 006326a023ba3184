#!/bin/sh
# The Worker's size, as `wrangler deploy` uploads it (edge/build/ after scripts/build-edge.sh),
# and the SQL validator Worker's (sqlcheck/build/ after scripts/build-sqlcheck.sh), each
# against its own budget.
#   sh scripts/worker-size.sh check    prints the upload sizes and fails over budget (make test)
#   sh scripts/worker-size.sh profile  where the bytes go: by crate, then the largest
#                                      functions (twiggy, pinned, installed on first use)
#   sh scripts/worker-size.sh profile sqlcheck   the same for the SQL validator Worker
# The measure is wrangler's own: `wrangler deploy --dry-run` bundles the Worker as it would
# upload it and prints "Total Upload: <raw> KiB / gzip: <gzip> KiB" (KiB = 1024 B); the
# budget is on the gzip figure.
set -eu
. "$(dirname "$0")/env.sh"
cd "$ROOT"
# The enforced budget: the size reached plus ~2%, under issue 29's target of 1,200,000 B.
# 1,040,168 B on 2026-11-27 once the SQL validator (sqlparser) moved into its own Worker
# (1,384,581 B before); 1,120,122 B once durable conversations and handoff landed (the
# conversation's Durable Object, its event log and streams, handoff's gate and console
# operations: +80 KB, not yet profiled); 1,143,736 B with issue 39's live stream bounds
# (grants, caps, the closed event, the reader check), the delete that clears the
# conversation's object and its debug view: the budget moved to 1,150,000 B. 1,161,461 B
# with the rest of issue 39 (client keys, the merchant's budget, the handoff queue's caps
# and pages, labels, no redirects) and issue 48 (the shop's question shapes, catalog
# vocabulary and the model as a classifier): the budget moved to 1,175,000 B. 1,180,446 B
# with issue 42's draft and live configurations (the draft routes, publish, versions and
# restore, draft keys; +19 KB, the change's one save routine taking its plan as a
# `dyn FnMut` rather than six monomorphized copies): the budget moved to 1,190,000 B.
# 1,193,052 B with those merged beside issue 47's per-site caps (the caps, their guards and
# `GET /admin/usage`), the binding-call counters (off unless COUNT_BINDINGS) and issue 45's
# handoff lines in history: the budget moved to 1,197,000 B, 3 KB under the target;
# 1,195,581 B with issue 45's console items (the waiting list's questions and handoff
# figures, template defaults). The next change that needs room profiles first
# (`sh scripts/worker-size.sh profile`) and finds it. 1,150,156 B with the URL parser's
# Unicode domain tables left out (`idna_adapter` pinned to 1.0.0 in Cargo.lock, README
# "Size"): a `cargo update` that lifts the pin comes back as +45 KB; the budget stays at
# 1,197,000 B for the work in flight and comes down once it lands. 1,170,728 B with the
# site's own object (SiteObject: its logs in SQLite with FTS5 and its warranty records, one
# externally tagged call enum (an internally tagged one cost 6 KB more), the import from
# D1; +20 KB); 1,176,012 B with the busy-store retries (edge/js/retry.js in the bundle);
# 1,210,337 B with issue 42's test sets, runs and publish gate (+34 KB); 1,190,082 B once
# every template's answer runs over one platform type (the engine's `Gated`, an open gate
# where the message is stored first: one copy of each answer instead of two, -20 KB);
# 1,196,083 B with analyst's data sets in the site object (+6 KB: one flat call struct and
# one JSON decoding per answer; a typed enum of calls and typed answers cost +15 KB).
# 1,206,743 B with issue 47's data sets (+6 KB) and issue 45's follow-ups (+7 KB) merged;
# 1,115,310 B once `analyst`'s `$regex` moved from regex-automata (its Unicode tables) to
# regex-lite (-91 KB); 1,132,738 B with `rental`'s data in site objects (+17 KB): the budget
# moved down to 1,155,000 B (the size reached plus 2%). 1,156,720 B with the upload read,
# typed and sent in slices (issue 40's isolation: the Worker yields between them; +3 KB);
# 1,158,789 B (measured apart) with issue 47's item 4 (vectors per site: the local path's
# calls to the site object and its import from D1, +~5 KB): the budget moved to
# 1,180,000 B for issue 47's work in flight, 20 KB under the target.
GZIP_BUDGET=1180000
GZIP_TARGET=1200000
# The SQL validator Worker (`concierge-sql`, sqlcheck/): the size reached (460,974 B on
# 2026-11-27) plus ~2%. The main Worker calls it once per model-written statement.
SQLCHECK_GZIP_BUDGET=470000
WASM="$ROOT/edge/build/index_bg.wasm"
SQLCHECK_WASM="$ROOT/sqlcheck/build/sqlcheck_bg.wasm"
# The same wasm before its name section was stripped (scripts/build-edge.sh keeps it).
NAMED="$ROOT/target/worker-size/index_bg.named.wasm"
# Installed on first use by `profile` (cargo install --root .tools/cargo, pinned).
TWIGGY_VERSION=0.8.0
TWIGGY_BIN="$ROOT/.tools/cargo/bin/twiggy"

[ -f "$WASM" ] || { echo "worker-size: $WASM is missing: run sh scripts/build-edge.sh" >&2; exit 1; }

upload() { # prints "<raw bytes> <gzip bytes>" of the upload wrangler would make with config $1
    out=$(mktemp -d "${TMPDIR:-/tmp}/concierge-worker-size.XXXXXX")
    report=$(CONCIERGE_SKIP_BUILD=1 wrangler deploy --dry-run -c "$1" --outdir "$out/bundle" 2>&1) || {
        rm -rf "$out"; printf '%s\n' "$report" >&2; echo "worker-size: wrangler deploy --dry-run failed" >&2; exit 1; }
    rm -rf "$out"
    printf '%s\n' "$report" | sed 's/\x1b\[[0-9;]*m//g' |
        awk '/Total Upload:/ { for (i = 1; i <= NF; i++) { if ($i == "Upload:") raw = $(i+1); if ($i == "gzip:") gz = $(i+1) }
                               printf "%d %d\n", raw * 1024, gz * 1024; found = 1 }
             END { if (!found) exit 1 }'
}

case "${1:-check}" in
check)
    [ -f "$SQLCHECK_WASM" ] ||
        { echo "worker-size: $SQLCHECK_WASM is missing: run sh scripts/build-sqlcheck.sh" >&2; exit 1; }
    sizes=$(upload "$ROOT/wrangler.toml") ||
        { echo "worker-size: no 'Total Upload' line from wrangler deploy --dry-run" >&2; exit 1; }
    raw=${sizes% *}; gz=${sizes#* }
    printf 'Worker upload (wrangler deploy --dry-run): %s B raw, %s B gzip (wasm alone: %s B raw)\n' \
        "$raw" "$gz" "$(wc -c <"$WASM" | tr -d ' ')"
    printf 'budget: gzip %s B <= %s B; target %s B: %s\n' "$gz" "$GZIP_BUDGET" "$GZIP_TARGET" \
        "$([ "$gz" -le "$GZIP_TARGET" ] && echo met || echo "not met yet ($((gz - GZIP_TARGET)) B over)")"
    sizes=$(upload "$ROOT/sqlcheck/wrangler.toml") ||
        { echo "worker-size: no 'Total Upload' line from wrangler deploy --dry-run (sqlcheck)" >&2; exit 1; }
    sql_raw=${sizes% *}; sql_gz=${sizes#* }
    printf 'SQL validator Worker upload (concierge-sql, sqlcheck/): %s B raw, %s B gzip (wasm alone: %s B raw)\n' \
        "$sql_raw" "$sql_gz" "$(wc -c <"$SQLCHECK_WASM" | tr -d ' ')"
    printf 'budget: gzip %s B <= %s B\n' "$sql_gz" "$SQLCHECK_GZIP_BUDGET"
    status=0
    if [ "$gz" -gt "$GZIP_BUDGET" ]; then
        echo "worker-size: the Worker is over its budget (see: sh scripts/worker-size.sh profile)" >&2
        status=1
    fi
    if [ "$sql_gz" -gt "$SQLCHECK_GZIP_BUDGET" ]; then
        echo "worker-size: the SQL validator Worker is over its budget" >&2
        status=1
    fi
    exit "$status"
    ;;
profile)
    if [ "${2:-}" = sqlcheck ]; then
        WASM="$SQLCHECK_WASM"
        NAMED="$ROOT/target/worker-size/sqlcheck_bg.named.wasm"
    fi
    # Installed on first use (not by `make install`: only profiles need it), pinned, built
    # from source into the project's own .tools/ (it runs on any CPU family).
    if [ "$("$TWIGGY_BIN" --version 2>/dev/null | awk '{print $NF}')" != "$TWIGGY_VERSION" ]; then
        echo "worker-size: installing twiggy $TWIGGY_VERSION into .tools/cargo" >&2
        cargo install twiggy --version "$TWIGGY_VERSION" --locked --root "$ROOT/.tools/cargo" --force --quiet
    fi
    [ -f "$NAMED" ] || { echo "worker-size: $NAMED is missing: run sh scripts/build.sh" >&2; exit 1; }
    csv=$(mktemp "${TMPDIR:-/tmp}/concierge-twiggy.XXXXXX")
    trap 'rm -f "$csv"' EXIT
    "$TWIGGY_BIN" top -n 1000000 --format csv "$NAMED" >"$csv"
    printf 'Worker wasm %s B raw (%s B gzip -9, name section stripped); twiggy shallow sizes of %s\n\n' \
        "$(wc -c <"$WASM" | tr -d ' ')" "$(gzip -9 -c "$WASM" | wc -c | tr -d ' ')" "$NAMED"
    python3 - "$csv" "${PROFILE_TOP:-25}" <<'EOF'
import csv, re, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
top = int(sys.argv[2])
total = sum(int(r["ShallowSize"]) for r in rows)
by = defaultdict(int)
# An item counts for the first non-std crate its name mentions: monomorphised code for
# the crate whose item or type it is (`<sqlparser::ast::Statement as core::clone::Clone>`).
STD = {"core", "alloc", "std", "fmt", "num", "str", "slice", "ptr", "iter", "vec", "string", "option", "result"}
def crate(name):
    if name.startswith("data[") or name.startswith("data segment"):
        return "(data: string literals, tables, vtables)"
    if name.startswith("\"function names\"") or name.startswith("custom section"):
        return "(name section / custom sections)"
    if name.startswith("code[") or name.startswith("func["):
        return "(unnamed functions)"
    if name in ("table[0]", "elem[0]") or name.startswith(("type[", "import ", "export ", "global[", "elem[", "table[", "memory[")):
        return "(wasm structure: types, imports, exports, tables)"
    crates = re.findall(r"(?<![A-Za-z0-9_:])([a-z_][a-z0-9_]*)::", name)
    if not crates:
        return "(other)"
    # Generic std code (drop glue, Vec, Option, iterators…) counts for the first other
    # crate its name mentions (`core::ptr::drop_in_place<sqlparser::ast::Expr>`: sqlparser).
    own = [c for c in crates if c not in STD]
    return own[0] if own else "std (core, alloc: fmt, panics, collections)"
for r in rows:
    by[crate(r["Name"])] += int(r["ShallowSize"])
print(f"{'crate / group':<52} {'bytes':>10} {'share':>7}")
for name, size in sorted(by.items(), key=lambda kv: -kv[1])[:top]:
    print(f"{name:<52} {size:>10} {100 * size / total:>6.1f}%")
print(f"{'total':<52} {total:>10}")
print(f"\nlargest {top} items:")
for r in rows[:top]:
    print(f"{int(r['ShallowSize']):>8}  {float(r['ShallowSizePercent']):>5.2f}%  {r['Name'][:110]}")
EOF
    ;;
*)
    echo "usage: sh scripts/worker-size.sh [check|profile [sqlcheck]]" >&2
    exit 2
    ;;
esac
