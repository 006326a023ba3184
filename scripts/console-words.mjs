// The chat panel's words for the merchant console's conversation view, from the panel's
// own source: widget/src/i18n/{vi,en}.rs's `static VI/EN: Strings = Strings { … }`, picked in the
// order widget/js/rich.js's `setup` takes them (its `WORD_KEYS`, the order
// widget/src/rich.rs builds the panel's list in). The console then shows a stored answer
// with exactly the words, vocabulary and number format the visitor saw, and a word added
// to the panel reaches the console without anyone copying it.
//
// Run by scripts/build-widget.sh: prints the entry module esbuild bundles into
// www/console/rich.js (rich.js's exports, plus `WORDS = {vi: [...], en: [...]}`).
// `i18nSource()` and `wordsFor(source)` are exported for tests/browser/console_words.mjs.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { WORD_KEYS } from "../widget/js/rich.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Rust tokens: identifiers, punctuation and string literals (their value). */
function tokens(src) {
  const out = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (src.startsWith("//", i)) {
      i = src.indexOf("\n", i) < 0 ? src.length : src.indexOf("\n", i);
    } else if (c === '"') {
      let value = "";
      for (i++; src[i] !== '"'; i++) {
        if (i >= src.length) throw new Error("i18n.rs: unterminated string");
        if (src[i] !== "\\") {
          value += src[i];
          continue;
        }
        const e = src[++i];
        if (e === "\n") {
          while (/\s/.test(src[i + 1])) i++;
        } else if (e === "u") {
          const end = src.indexOf("}", i);
          value += String.fromCodePoint(parseInt(src.slice(i + 2, end), 16));
          i = end;
        } else if (e in ESCAPES) {
          value += ESCAPES[e];
        } else {
          throw new Error(`i18n.rs: unsupported escape \\${e}`);
        }
      }
      i++;
      out.push({ str: value });
    } else if (/[A-Za-z_]/.test(c)) {
      const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))[0];
      if ((id === "r" || id === "br") && /["#]/.test(src[i + id.length])) throw new Error("i18n.rs: raw strings are not supported");
      out.push({ id });
      i += id.length;
    } else {
      out.push({ punct: c });
      i++;
    }
  }
  return out;
}
const ESCAPES = { n: "\n", t: "\t", r: "\r", 0: "\0", "\\": "\\", '"': '"', "'": "'" };

/** One field's value at `t[at]`: a string, `concat!(strings…)` or `[strings…]`. */
function value(t, at) {
  if (t[at].str != null) return [t[at].str, at + 1];
  const list = (open, close, from) => {
    const items = [];
    let k = from;
    if (t[k].punct !== open) throw new Error(`i18n.rs: expected ${open}`);
    for (k++; t[k].punct !== close; k++) {
      if (t[k].punct === ",") continue;
      if (t[k].str == null) throw new Error(`i18n.rs: expected a string literal, got ${JSON.stringify(t[k])}`);
      items.push(t[k].str);
    }
    return [items, k + 1];
  };
  if (t[at].id === "concat" && t[at + 1].punct === "!") {
    const [parts, next] = list("(", ")", at + 2);
    return [parts.join(""), next];
  }
  if (t[at].punct === "[") return list("[", "]", at);
  throw new Error(`i18n.rs: unsupported value ${JSON.stringify(t[at])}`);
}

/** Each `static NAME: Strings = Strings { field: value, … };` of `source`, as
 * {name (lower case): {field: value}}. */
export function stringsOf(source) {
  const t = tokens(source);
  const langs = {};
  for (let i = 0; i + 6 < t.length; i++) {
    if (!(t[i].id === "static" && t[i + 2].punct === ":" && t[i + 3].id === "Strings" && t[i + 5].id === "Strings")) continue;
    const fields = {};
    let k = i + 7; // after `{`
    while (t[k].punct !== "}") {
      const name = t[k].id;
      if (!name || t[k + 1].punct !== ":") throw new Error(`i18n.rs: expected a field in ${t[i + 1].id}`);
      const [v, next] = value(t, k + 2);
      fields[name] = v;
      k = t[next].punct === "," ? next + 1 : next;
    }
    langs[t[i + 1].id.toLowerCase()] = fields;
    i = k;
  }
  return langs;
}

/** {lang: the words in `WORD_KEYS` order} from i18n.rs's `source`; throws naming a key
 * a language lacks. */
export function wordsFor(source) {
  const out = {};
  for (const [lang, fields] of Object.entries(stringsOf(source))) {
    out[lang] = WORD_KEYS.map((key) => {
      const [field, index] = key.split(".");
      const v = index == null ? fields[field] : (fields[field] || [])[Number(index)];
      if (typeof v !== "string") throw new Error(`i18n.rs: ${lang} has no string for ${key}`);
      return v;
    });
  }
  if (!out.vi || !out.en) throw new Error("i18n.rs: expected static VI and EN strings");
  return out;
}

/** The panel's words as written: the files of widget/src/i18n/ that hold `VI` and `EN`,
 * one after the other. */
export function i18nSource() {
  return ["vi", "en"].map((lang) => readFileSync(`${ROOT}/widget/src/i18n/${lang}.rs`, "utf8")).join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const words = wordsFor(i18nSource());
  process.stdout.write(`export * from ${JSON.stringify(`${ROOT}widget/js/rich.js`)};\nexport const WORDS = ${JSON.stringify(words)};\n`);
}
