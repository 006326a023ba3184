// The console draws stored answers with the chat panel's renderer (widget/js/rich.js) and
// must hand it the panel's words in the order the panel does. Both lists come from one
// place: rich.js's `WORD_KEYS` names each word by its field in widget/src/i18n/mod.rs; the
// panel's list is built by widget/src/rich.rs `setup`, the console's is generated from
// i18n/{vi,en}.rs by scripts/console-words.mjs. This fails when they drift: a word added to, moved
// in or dropped from rich.rs's list without `WORD_KEYS` following (or the other way round),
// a word rich.js (or chart.js) reads beyond the list, or a key vi.rs or en.rs has no string for.
// Usage: node tests/browser/console_words.mjs → prints "ok console words".
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { WORD_KEYS } from "../../widget/js/rich.js";
import { i18nSource, stringsOf, wordsFor } from "../../scripts/console-words.mjs";

const read = (path) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");
const i18n = i18nSource();
const strings = stringsOf(i18n);

/** The keys of the list widget/src/rich.rs's `setup` builds, in its order. */
function panelKeys(source) {
  const body = /pub\(crate\) fn setup\([^)]*\) \{([\s\S]*?)\n\}/.exec(source)[1];
  const names = new Map(); // local name → its key(s)
  for (const [, list, field] of body.matchAll(/let \[([^\]]+)\] = strings\.(\w+);/g)) {
    list.split(",").map((n) => n.trim()).forEach((n, i) => names.set(n, [`${field}.${i}`]));
  }
  const item = (expr) => {
    expr = expr.trim();
    let m = /^strings\.(\w+)\[(\d+)\]$/.exec(expr);
    if (m) return [`${m[1]}.${m[2]}`];
    m = /^strings\.(\w+)$/.exec(expr);
    if (m) return [m[1]];
    if (names.has(expr)) return names.get(expr);
    throw new Error(`rich.rs setup: unknown word ${expr}`);
  };
  for (const [, name, list] of body.matchAll(/let (\w+) = \[([\s\S]*?)\];/g)) {
    names.set(name, list.split(",").filter((e) => e.trim()).flatMap(item));
  }
  // `for word in A.iter().chain(&B)…`: A, then each chained list in turn.
  const chain = /for \w+ in (\w+)\s*\.iter\(\)([\s\S]*?)\{/.exec(body);
  const keys = [...names.get(chain[1])];
  for (const [, source] of chain[2].matchAll(/\.chain\(&([\w.]+)\)/g)) {
    const field = /^strings\.(\w+)$/.exec(source);
    if (field) {
      const length = strings.vi[field[1]].length;
      assert.ok(Array.isArray(strings.vi[field[1]]), `${source} is an array`);
      for (let i = 0; i < length; i++) keys.push(`${field[1]}.${i}`);
    } else keys.push(...names.get(source));
  }
  return keys;
}

// The panel's order is rich.js's order.
assert.deepEqual(panelKeys(read("widget/src/rich.rs")), WORD_KEYS, "widget/src/rich.rs setup builds the words in WORD_KEYS order");
// rich.js (and chart.js, which it loads on demand with its words) reads no word past the list.
const renderer = read("widget/js/rich.js") + read("widget/js/chart.js");
const used = [...renderer.matchAll(/words\[(\d+)(?: \+ \w+)?\]/g)].map((m) => Number(m[1]));
assert.ok(Math.max(...used) < WORD_KEYS.length, `rich.js reads words[${Math.max(...used)}], the list has ${WORD_KEYS.length}`);
assert.ok(read("widget/js/chart.js").includes("words[25 + kind]") && WORD_KEYS[27] === "charts.2", "three chart kinds from 25");
// Every key has a string in both languages, and the console's list is the panel's words.
const words = wordsFor(i18n);
for (const lang of ["vi", "en"]) {
  assert.equal(words[lang].length, WORD_KEYS.length);
  WORD_KEYS.forEach((key, i) => {
    const [field, index] = key.split(".");
    const want = index == null ? strings[lang][field] : strings[lang][field][Number(index)];
    assert.equal(words[lang][i], want, `${lang} ${key}`);
  });
}
assert.equal(words.vi[WORD_KEYS.indexOf("currency")], "đ");
assert.equal(words.en[WORD_KEYS.indexOf("table")], "Data table");
assert.ok(words.vi[WORD_KEYS.indexOf("vocabulary")].includes("area=diện tích"));
// Drift is caught: a list one word short, or two words swapped, is not the panel's order.
assert.notDeepEqual(panelKeys(read("widget/src/rich.rs").replace("strings.currency,\n", "")), WORD_KEYS);
assert.notDeepEqual(panelKeys(read("widget/src/rich.rs").replace("strings.sources,\n        strings.evidence,", "strings.evidence,\n        strings.sources,")), WORD_KEYS);
console.log("ok console words");
