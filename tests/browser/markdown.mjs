// The panel's markdown renderer (widget/js/rich.js `parse`), in Node: no DOM needed, the
// tree it returns is what `markdown()` builds. It must render exactly as the Rust renderer
// it replaced (widget/src/markdown.rs, removed to keep the widget in its download budget):
// markdown-corpus.json holds [input, html] pairs recorded from that renderer's unit tests
// and from 400 random combinations of tricky fragments (emphasis runs, code spans, links,
// `javascript:` targets, HTML, lists, fences, quotes, rules, tables, escapes, Vietnamese).
// Then the cases it adds: GFM tables and rental's role label.
// Usage: node tests/browser/markdown.mjs → prints "ok markdown".
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { parse, withoutRoleLabel, safeMarkdownHref } from "../../widget/js/rich.js";

const esc = (t) => t.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
/** The tree as escaped HTML, with the attributes the Rust renderer's tests printed. */
function html(node) {
  if (typeof node === "string") return esc(node);
  const [tag, attrs, ...kids] = node;
  let a = "";
  for (const k of ["href", "target", "rel", "start", "class"]) if (attrs && attrs[k] != null) a += ` ${k}="${esc(attrs[k])}"`;
  return tag === "br" || tag === "hr" ? `<${tag}${a}>` : `<${tag}${a}>${kids.map(html).join("")}</${tag}>`;
}
const render = (src) => parse(src).map(html).join("");

const corpus = JSON.parse(readFileSync(new URL("markdown-corpus.json", import.meta.url), "utf8"));
assert.ok(corpus.length >= 500);
for (const [src, want] of corpus) assert.equal(render(src), want, `input ${JSON.stringify(src)}`);

// Tables: alignment from the delimiter row, numbers end right, inline markdown in cells,
// escaped pipes, short rows padded, long rows cut, the region and header scope.
const [region] = parse("| Kênh | Doanh thu | Ghi chú |\n|---|---|:-:|\n| **Web** | 1.200.000 đ | \\| x |\n| Shop | 15,5% |");
assert.deepEqual(region[1], { class: "cw-table", role: "region", tabindex: "0" });
assert.deepEqual(region[2][2][2][3][1], { scope: "col", class: "cw-num" });
assert.equal(html(region), '<div class="cw-table"><table><thead><tr><th>Kênh</th><th class="cw-num">Doanh thu</th>' +
  '<th class="cw-mid">Ghi chú</th></tr></thead><tbody><tr><td><strong>Web</strong></td><td class="cw-num">1.200.000 đ</td>' +
  '<td class="cw-mid">| x</td></tr><tr><td>Shop</td><td class="cw-num">15,5%</td><td class="cw-mid"></td></tr></tbody></table></div>');
assert.equal(render("a|b\n-|-\n1|2|3"), '<div class="cw-table"><table><thead><tr><th class="cw-num">a</th><th class="cw-num">b</th></tr></thead>' +
  '<tbody><tr><td class="cw-num">1</td><td class="cw-num">2</td></tr></tbody></table></div>');
// A table right under a paragraph line; its rows end at a blank line.
assert.equal(render("Bảng:\n|a|\n|-|\n|x|\n\nSau."), '<p>Bảng:</p><div class="cw-table"><table><thead><tr><th>a</th></tr></thead>' +
  "<tbody><tr><td>x</td></tr></tbody></table></div><p>Sau.</p>");
// Not tables: no delimiter row, different cell counts, other text in the delimiter.
for (const src of ["| a | b |\n| c | d |", "| a | b |\n|---|", "| a |\n| -x- |", "a\n---"]) {
  assert.ok(!render(src).includes("<table"), src);
}
// Markup in cells stays text; unsafe links in cells drop their target.
assert.equal(render("|x|\n|-|\n|<b>[y](javascript:z)</b>|"), '<div class="cw-table"><table><thead><tr><th>x</th></tr></thead>' +
  "<tbody><tr><td>&lt;b&gt;y&lt;/b&gt;</td></tr></tbody></table></div>");

// Rental's role label.
assert.equal(withoutRoleLabel("[GUEST] Xin chào!"), "Xin chào!");
assert.equal(withoutRoleLabel("  [LANDLORD]\nDạ"), "Dạ");
assert.equal(withoutRoleLabel("[TENANT]"), "");
assert.equal(withoutRoleLabel("[GUE"), "");
assert.equal(withoutRoleLabel("["), "");
assert.equal(withoutRoleLabel("Xin chào [GUEST]"), "Xin chào [GUEST]");
assert.equal(withoutRoleLabel("[x] việc cần làm"), "[x] việc cần làm");
assert.equal(withoutRoleLabel("[GUESTS] a"), "[GUESTS] a");

assert.ok(safeMarkdownHref("https://a.b") && safeMarkdownHref("tel:+84") && !safeMarkdownHref("https://") && !safeMarkdownHref("https://a\u0000b"));
console.log("ok markdown");
