// Rich turns in the chat panel: the answer's safe markdown (bottom of this file), tool rows,
// a plan's progress bar, a turn's payloads — lists, tables, charts (inline SVG), sources,
// evidence, and follow-up and control questions as chips — and feedback (thumbs, optional
// comment: feedback.js, on demand) and copy on each answer, drawn with DOM calls only from the answer's text and
// events or its stored message (widget/src/rich.rs forwards them). Everything is in the
// panel's language: names from the payloads (`area_m2`, `check_stock`) through a
// vocabulary, numbers, prices and dates in the language's format, a plan's stages in the
// panel's words.
//
// Another page (the console's conversation view) uses the same entry points: `setup(words,
// lang, origin)` once, then per message `markdown(bodyElement, text)` and
// `render(element, payloads)`; `stored`/`mount`/`event` add feedback and live events.
//
// Every payload string becomes a text node or an attribute value, never markup. Links
// point only to absolute http(s) URLs or to site-relative paths on the embedding page's
// origin, open in a new tab and carry rel="noopener noreferrer"; anything else shows as
// plain text. Big payloads are capped (a table shows its first 100 rows, a list 50 items)
// and say how many they show. Plain JS rather than Rust: this keeps the widget inside its
// download budget (scripts/sizes.sh); charts are drawn by `chart.js`, loaded on demand.

const SVG = "http://www.w3.org/2000/svg";
const MAX_ROWS = 100;
const MAX_ITEMS = 50;

/** The words `setup` takes, in order, by their field in widget/src/i18n.rs `Strings`
 * (`field.n`: item n of an array field): tool states, table, "showing…" parts, headings,
 * chip label, feedback (up and down names, up and down visible, copy, copied, comment,
 * send comment, thanks), a plan's stages (ready, "step {0}/{1}: {2}", "{0}/{1} steps
 * done", resolving), currency, chart kinds (bar, line, pie) and a chart's default title,
 * the vocabulary, a tool with no known word. widget/src/rich.rs builds the panel's list in
 * this order; the console's list is generated from i18n.rs by these keys
 * (scripts/console-words.mjs); tests/browser/console_words.mjs checks both. */
export const WORD_KEYS = [
  "tool_states.0", "tool_states.1", "tool_states.2", "table", "showing.0", "showing.1", "showing.2",
  "sources", "evidence", "follow_ups", "control",
  ...[0, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => `feedback.${i}`),
  ...[0, 1, 2, 3].map((i) => `stages.${i}`),
  "currency", "charts.0", "charts.1", "charts.2", "charts.3", "vocabulary", "tool",
];
let words = [];
let format, compact, percent, day;
let vocab = new Map();
let reorder = true; // Vietnamese puts the head noun first: "avg price" → "giá trung bình"
let site = "";
const turns = new Map(); // message key → its state
const views = new Map(); // message key → [work element, payloads element, footer element]
let session = {}; // the conversation and the API headers (feedback)

/** The panel's words, language and the embedding page's origin. */
export function setup(panelWords, lang, origin) {
  words = panelWords;
  const en = lang === "en";
  const locale = en ? "en-US" : "vi-VN";
  format = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
  compact = new Intl.NumberFormat(locale, { notation: "compact", compactDisplay: en ? "short" : "long", maximumFractionDigits: 1 });
  percent = new Intl.NumberFormat(locale, { style: "percent", maximumFractionDigits: 1 });
  day = new Intl.DateTimeFormat(locale, { day: "2-digit", month: "2-digit", year: "numeric", timeZone: "UTC" });
  reorder = !en;
  vocab = new Map(str(words[29]).split("|").map((entry) => entry.split("=")));
  site = /^https?:\/\/[^/]+$/i.test(origin) ? origin : "";
}

/** The conversation (a new one forgets the old one's messages) and how to call the API
 * on its behalf. */
export function conversation(id, key, embedder, token) {
  session = { id, key, embedder, token };
  turns.clear();
  views.clear();
}

/** A stored assistant message from history ({id, kind, payloads, feedback}). */
export function stored(key, message) {
  // An answer cut short is not voted on, as it was not live (no `completed`).
  const cut = message.metadata && message.metadata.incomplete === true;
  turns.set(key, offer(fresh({ payloads: arr(message.payloads), id: rated(message.kind) && !cut ? message.id : null, feedback: message.feedback }), message.metadata?.handoff));
  draw(key);
}

/** An event of message `key`'s answer (see widget/src/rich.rs). */
export function event(key, name, data) {
  let d;
  try {
    d = data ? JSON.parse(data) : {};
  } catch (_) {
    return;
  }
  if (name === "reset") turns.delete(key);
  const turn = turns.get(key) || fresh({});
  turns.set(key, turn);
  const tool = turn.tools.find((t) => t.id === d.call_id);
  if (name === "tool_start" && !tool) turn.tools.push({ id: d.call_id, name: d.name, state: 0 });
  if (name === "tool_end" && tool) tool.state = d.ok ? 1 : 2;
  // Progress shows until the answer's text begins.
  if (name === "progress" && !turn.text) {
    turn.message = stage(turn, d);
    turn.percent = typeof d.percentage === "number" ? Math.max(0, Math.min(100, Math.round(d.percentage))) : -1;
  }
  if (name === "payload") turn.payloads.push(d);
  if (name === "text") turn.text = true;
  if (name === "text" || name === "completed" || name === "end") turn.percent = -1;
  // A call still working when the answer failed or stopped, failed.
  if (name === "end") for (const t of turn.tools) t.state = t.state || 2;
  if (name === "completed") rated(d.kind) ? (turn.id = d.message_id) : offer(turn, d.reply?.handoff);
  draw(key);
}

/** Whether an assistant message of `kind` is the assistant's answer to vote on: not a
 * fixed text (the greeting, a refusal, a handoff notice, a person's reply: the core's
 * `MessageKind::is_fixed`). */
const rated = (kind) => !["greeting", "refusal", "handoff", "human"].includes(kind);

/** "Nobody is free" (a wait that timed out, outside office hours): the notice offers a
 * form to leave a phone number or e-mail (contact.js, loaded on demand), drawn as a payload. */
const offer = (turn, notice) => (/^(timeout|outside_hours)$/.test(notice) && turn.payloads.push({ kind: "contact", data: {} }), turn);

function fresh(turn) {
  return { tools: [], percent: -1, message: "", payloads: [], painted: -1, done: 0, ...turn };
}

/** A plan's stage in the panel's words (the API's message is English, for logs and API
 * clients): ready, working on step i/n, k of n steps done (counted here: tasks finish in
 * any order), resolving. Other stages show their message as sent. */
function stage(turn, d) {
  const [, step, total, purpose] = /(\d+)\/(\d+):?\s*(.*)/.exec(str(d.message)) || [];
  if (d.stage === "task_completed") turn.done++;
  const text = {
    plan_ready: words[20],
    executing_task: total && fill(words[21], step, total, purpose),
    task_completed: total && fill(words[22], Math.min(turn.done, total), total),
    ready_for_resolution: words[23],
  }[d.stage];
  return text || str(d.message);
}

const fill = (template, ...args) => str(template).replace(/\{(\d)\}/g, (_, i) => args[i]);

/** The elements message `key` draws into, once mounted: `work` (tool rows, progress bar),
 * `rich` (payloads, feedback and copy) and, optionally, `activity` (the stage line). */
export function mount(key, work, rich, activity) {
  rich.textContent = "";
  views.set(key, [work, el(rich, "div"), el(rich, "div", "cw-foot"), activity]);
  const turn = turns.get(key);
  if (turn) turn.painted = -1;
  draw(key);
}

function draw(key) {
  const view = views.get(key);
  const turn = turns.get(key);
  if (!view || !turn) return;
  const [work, rich, , activity] = view;
  work.textContent = "";
  if (activity) activity.textContent = turn.message;
  if (turn.tools.length) {
    const list = el(work, "ul", "cw-tools");
    for (const { name, state } of turn.tools) {
      el(list, "li", "cw-tool", `${label(name, true)}: ${words[state]}`).dataset.state = ["working", "done", "failed"][state];
    }
  }
  if (turn.percent >= 0) {
    const bar = el(work, "progress");
    bar.max = 100;
    bar.value = turn.percent;
    bar.setAttribute("aria-label", turn.message);
  }
  if (turn.painted !== turn.payloads.length) {
    turn.painted = turn.payloads.length;
    rich.textContent = "";
    for (const payload of turn.payloads) paint(rich, payload);
  }
  footer(key);
}

/** A message's payloads drawn into `out`, without feedback or copy: for a page that only
 * shows a conversation (after `setup`). */
export function render(out, payloads) {
  for (const payload of arr(payloads)) paint(out, payload);
}

function paint(out, payload) {
  const data = payload && payload.data;
  switch (payload && payload.kind) {
    case "list": return list(out, data || {});
    case "table": return table(out, data || {});
    case "chart": return chart(out, data || {});
    case "sources": return sources(out, arr(data));
    case "evidence": return evidence(out, arr(data));
    case "follow_ups": return chips(out, arr(data), words[9]);
    case "control": return chips(out, arr(data && data.questions), words[10]);
    case "contact": return import(new URL("contact.js", import.meta.url).href).then((m) => m.form(out, data, session), () => {});
  }
}

// ---- feedback and copy ------------------------------------------------------------------

/** Once the answer is stored, one row of icon buttons named for screen readers: thumbs
 * up/down (the visitor's vote pressed: `aria-pressed` and filled), copy, and after a vote
 * "comment", which opens the comment box. Storing a vote and the comment box are in
 * feedback.js, loaded on the first vote or comment (scripts/sizes.sh). */
function footer(key) {
  const foot = views.get(key)[2];
  const turn = turns.get(key);
  foot.textContent = "";
  if (!turn.id) return;
  const rating = turn.feedback && turn.feedback.rating;
  ["up", "down"].forEach((r, i) => {
    const b = icon(foot, "cw-vote cw-" + r, words[11 + i], THUMB);
    b.setAttribute("aria-pressed", String(rating === r));
    b.onclick = () => more((m, c) => m.vote(c, key, r));
  });
  const copy = icon(foot, "cw-copy", words[15], COPY);
  copy.onclick = () => {
    const body = foot.closest(".cw-msg").querySelector(".cw-body");
    navigator.clipboard.writeText(body.textContent).then(() => {
      copy.setAttribute("aria-label", words[16]);
      copy.title = words[16];
      copy.classList.add("cw-copied");
    }, () => {});
  };
  if (turn.thanked) {
    el(foot, "p", "cw-note", words[19]).setAttribute("role", "status");
  } else if (rating) {
    const ask = icon(foot, "cw-ask", words[17], BUBBLE);
    ask.setAttribute("aria-expanded", String(!!turn.asking));
    ask.onclick = () => {
      turn.asking = !turn.asking;
      footer(key);
      if (!turn.asking) foot.querySelector(".cw-ask").focus();
    };
    if (turn.asking) more((m, c) => m.comment(c, key, foot));
  }
}

const THUMB = "M7 11v10H3V11zm0 0l4-9a3 3 0 0 1 3 3v4h5.5a2 2 0 0 1 2 2.3l-1.3 7.5a2 2 0 0 1-2 1.7H7";
const COPY = "M9 9h11v11H9zM5 15H4V4h11v1";
const BUBBLE = "M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z";

/** An icon button named `name` (its aria-label and tooltip). */
function icon(parent, cls, name, d) {
  const b = button(parent, "cw-act " + cls, null, name);
  b.innerHTML = `<svg viewBox="0 0 24 24" aria-hidden="true"><path d="${d}"/></svg>`;
  return b;
}

/** feedback.js, asked for once, then `f(module, what it needs from here)`. */
let feedbackModule;
function more(f) {
  feedbackModule ||= import(new URL("feedback.js", import.meta.url).href);
  feedbackModule.then((m) => f(m, { turns, views, session, footer, el, button, words }), () => { feedbackModule = null; });
}

function button(parent, cls, text, label) {
  const b = el(parent, "button", cls, text);
  b.type = "button";
  if (label) {
    b.setAttribute("aria-label", label);
    b.title = label;
  }
  return b;
}

// ---- helpers --------------------------------------------------------------------------

function el(parent, tag, cls, text) {
  const e = parent.appendChild(document.createElement(tag));
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

function svg(parent, tag, attrs) {
  const e = parent.appendChild(document.createElementNS(SVG, tag));
  for (const name in attrs) e.setAttribute(name, attrs[name]);
  return e;
}

const arr = (v) => (Array.isArray(v) ? v : []);
const str = (v) => (v == null ? "" : String(v));
const num = (n) => format.format(n);
const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

/** A column, series, scope or tool name (`area_m2`, `avgPrice`, `check_stock`) in the
 * panel's words, through the vocabulary (`key=words`; `^` a word that leads, `$` a unit,
 * shown in brackets at the end, `~` a Vietnamese word: no reordering; an empty value drops
 * the word). Text with spaces or letters beyond ASCII is already words and stays as it
 * is. In English an unknown word is itself; in Vietnamese a name with an unknown word is
 * shown humanised, and a tool keeps its known words or is named generically. */
function label(name, tool) {
  name = str(name).trim();
  if (!/^[\w.:-]+$/.test(name)) return name;
  const keys = name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().split(/[_\-.:\s]+/).filter(Boolean);
  const whole = vocab.get(keys.join("_"));
  const [front, rest, units] = [[], [], []];
  let missing = false;
  let native = false;
  for (const key of whole == null ? keys : [whole]) {
    const w = whole == null ? vocab.get(key) ?? (reorder ? null : key) : key;
    if (w == null) {
      missing = true;
      continue;
    }
    const mark = w.charAt(0);
    if (mark === "~") native = true;
    (mark === "^" ? front : mark === "$" ? units : rest).push("^$~".includes(mark) ? w.slice(1) : w);
  }
  if (missing && !tool) return cap(keys.join(" "));
  if (reorder && !native) rest.reverse();
  const text = front.concat(rest).filter(Boolean).join(" ");
  if (text) return cap(text + (units.length ? ` (${units.join(" ")})` : ""));
  return tool ? words[30] : cap(keys.join(" "));
}

/** Whether a column or series named `name` holds amounts of money. */
const isPrice = (name) =>
  /price|cost|amount|revenue|fee|budget|salary|(^|[\s_])(gia|tien|doanh|luong|phi)([\s_]|$)|giá(?! trị)|tiền|doanh thu|phí|lương/i.test(name) &&
  !/vnd|usd|₫|\(đ\)|\$| đ$/i.test(name);

/** `n` formatted, with the currency when `name` names an amount of money and `n` is one
 * (from 1,000: no price is less; a smaller figure is in some other unit, e.g. millions). */
const amount = (n, name) => num(n) + (isPrice(name) && Math.abs(n) >= 1e3 ? ` ${words[24]}` : "");

/** An ISO date (`2026-03-05`, with or without a time) in the panel's format. */
function date(value) {
  const t = typeof value === "string" && /^\d{4}-\d\d-\d\d/.test(value) ? Date.parse(value.slice(0, 10)) : NaN;
  return isNaN(t) ? str(value) : day.format(t);
}

/** Where a link may point, or null. */
function safeHref(href) {
  if (typeof href !== "string" || /[\s\x00-\x1f"<>\\]/.test(href)) return null;
  if (/^https?:\/\/[^/]/i.test(href)) return href;
  return site && /^\/(?!\/)/.test(href) ? site + href : null;
}

function link(parent, text, href) {
  const url = safeHref(href);
  if (!url) return el(parent, "span", "", str(text));
  const a = el(parent, "a", "", str(text));
  a.href = url;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  return a;
}

/** "Showing the first N of M" under a capped collection. */
function shown(parent, count, total) {
  if (total > count) el(parent, "p", "cw-note", words[4] + num(count) + words[5] + num(total) + words[6]);
}

// ---- payloads -------------------------------------------------------------------------

function list(out, data) {
  const items = arr(data.items);
  const ul = el(out, "ul", "cw-list");
  for (const item of items.slice(0, MAX_ITEMS)) {
    const li = el(ul, "li");
    link(li, item && item.title, item && item.path);
    if (item && item.subtitle) el(li, "small", "", subtitle(item.subtitle));
  }
  const total = typeof data.total === "number" ? data.total : 0;
  shown(out, Math.min(items.length, MAX_ITEMS), Math.max(total, items.length));
}

/** A list item's subtitle (parts joined by " · "): bare numbers formatted; a bare integer of
 * 10,000 or more is an amount of money (a price or budget: the unit a subtitle shows). */
function subtitle(text) {
  return str(text).split(" · ").map((part) => {
    if (!/^-?\d+(\.\d+)?$/.test(part)) return part;
    const n = Number(part);
    return Math.abs(n) >= 1e4 && Number.isInteger(n) ? amount(n, "price") : num(n);
  }).join(" · ");
}

function table(out, data) {
  const columns = arr(data.columns).map((c) => {
    const [key, name] = [str(c && c.key), str(c && c.label)];
    return { key, label: label(name || key), price: `${key} ${name}`, type: c && c.type, number: c && c.type === "number" };
  });
  const rows = arr(data.rows);
  // Scrolls both ways; focusable so the keyboard can scroll it.
  const wrap = el(out, "div", "cw-table");
  wrap.setAttribute("role", "region");
  wrap.setAttribute("aria-label", words[3]);
  wrap.tabIndex = 0;
  const t = el(wrap, "table");
  const head = el(el(t, "thead"), "tr");
  for (const c of columns) el(head, "th", c.number ? "cw-num" : "", c.label).scope = "col";
  const body = el(t, "tbody");
  for (const row of rows.slice(0, MAX_ROWS)) {
    const tr = el(body, "tr");
    for (const c of columns) {
      const cell = row && row[c.key];
      const td = el(tr, "td", c.number ? "cw-num" : "");
      if (typeof cell === "number") td.textContent = amount(cell, c.price);
      else if (cell && typeof cell === "object") link(td, cell.text, cell.href);
      else td.textContent = c.type === "date" ? date(cell) : str(cell);
    }
  }
  shown(out, Math.min(rows.length, MAX_ROWS), rows.length);
}

/** A chart, drawn by `chart.js` once it has loaded: most answers have none, so it is not
 * part of the panel's first download (scripts/sizes.sh). A box keeps the chart's place among
 * the payloads, `aria-busy` until drawn; the module is asked for once. */
let charts;
function chart(out, data) {
  const box = el(out, "div", "cw-chart-box");
  box.setAttribute("aria-busy", "true");
  charts ||= import(new URL("chart.js", import.meta.url).href);
  const done = () => box.removeAttribute("aria-busy");
  charts.then((m) => { m.chart(box, data, { el, svg, arr, str, label, amount, words, format, compact, percent }); done(); },
    () => { charts = null; done(); });
}

function sources(out, items) {
  const section = el(out, "section", "cw-sources");
  el(section, "h3", "", words[7]);
  const ol = el(section, "ol");
  for (const s of items.slice(0, MAX_ITEMS)) {
    const li = el(ol, "li");
    // A scope suffix ("… · internal") becomes a small tag in the panel's words.
    const [, title, scope] = /^(.*) · (private|internal|public)$/.exec(str(s && s.title)) || [, s && s.title];
    link(li, title, s && s.url);
    if (scope) el(li, "span", "cw-tag", label(scope));
    if (s && s.snippet) el(li, "small", "", str(s.snippet));
  }
  shown(section, Math.min(items.length, MAX_ITEMS), items.length);
}

function evidence(out, items) {
  const section = el(out, "section", "cw-evidence");
  el(section, "h3", "", words[8]);
  const ul = el(section, "ul");
  for (const e of items.slice(0, MAX_ITEMS)) {
    let line = str(e && e.claim);
    for (const i of arr(e && e.sources)) if (typeof i === "number") line += ` [${i + 1}]`;
    if (e && typeof e.confidence === "number") line += ` (${Math.round(e.confidence * 100)}%)`;
    el(ul, "li", "", line);
  }
}

/** Questions as chips; the message's click handler sends `data-q`. */
function chips(out, questions, label) {
  const group = el(out, "div", "cw-chips");
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", label);
  for (const q of questions.slice(0, MAX_ITEMS)) {
    if (typeof q !== "string" || !q.trim()) continue;
    const chip = el(group, "button", "cw-starter", q);
    chip.type = "button";
    chip.dataset.q = q;
  }
}

// ---- markdown ----------------------------------------------------------------------------
//
// Safe markdown for assistant messages. Assistant text is model output: it must never become
// markup. `parse` turns it into a tree of nodes — `[tag, attributes, ...children]` or a
// string (text) — and `markdown` builds DOM nodes from it: only the tags below can ever be
// produced, every piece of text becomes a text node, and a link survives only when its
// target is `http(s):`, `mailto:` or `tel:` (so no `javascript:` URLs); any HTML in the
// input is shown as the literal text it is.
//
// The dialect is what chat models write: paragraphs (a single newline is a line break),
// `#` headings (h3–h5: the panel's title is the page's top), `-`/`*`/`+` and `1.` lists,
// fenced code, `>` quotes, `---` rules, GFM tables (a header row, a `---`/`:--:`/`--:`
// delimiter row, body rows; cells hold inline markdown, `\|` is a literal pipe; a column
// without alignment whose cells are all numbers is right-aligned, like the table payload;
// drawn in the same named, focusable scrolling region), and inline `**strong**`,
// `*em*`/`_em_`, `` `code` ``, `[text](url)` and bare `https://` links. Unclosed markers
// stay literal, so a message renders sensibly while it streams in. Rental's role label
// (`[GUEST] …`, `[TENANT] …`, `[LANDLORD] …`, the seed's format, kept by the API) is not
// shown, nor a label still arriving (`[GUE`).

/** Replace `target`'s children with the assistant's `text` rendered as markdown. */
export function markdown(target, text) {
  target.textContent = "";
  for (const node of parse(withoutRoleLabel(str(text)))) build(target, node);
}

function build(parent, node) {
  if (typeof node === "string") return parent.appendChild(document.createTextNode(node));
  const [tag, attrs, ...children] = node;
  const e = parent.appendChild(document.createElement(tag));
  for (const name in attrs) e.setAttribute(name, attrs[name]);
  if (tag === "div") e.setAttribute("aria-label", words[3]);
  for (const child of children) build(e, child);
}

/** `text` without rental's role label at its start (or the start of one, streaming). */
export function withoutRoleLabel(text) {
  const start = text.trimStart();
  for (const label of ["[GUEST]", "[TENANT]", "[LANDLORD]"]) {
    if (start.startsWith(label)) return start.slice(label.length).trimStart();
    if (start && label.startsWith(start)) return "";
  }
  return text;
}

/** Whether `href` may become a link: absolute http(s)/mailto/tel, something after the
 * scheme, no whitespace, control characters, quotes or angle brackets. */
export function safeMarkdownHref(href) {
  return /^(https?:\/\/|mailto:|tel:)./i.test(href) && !/[\s\p{Cc}"<>]/u.test(href);
}

const FENCE = /^(```|~~~)/;
const ALNUM = /[\p{L}\p{N}]/u;

/** Markdown `src` as a tree. */
export function parse(src) {
  const lines = src.split("\n").map((l) => l.replace(/\r$/, ""));
  if (src.endsWith("\n")) lines.pop();
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i++].trimStart();
    if (!line) continue;
    let m = FENCE.exec(line);
    let item;
    if (m) {
      let code = "";
      while (i < lines.length && !lines[i].trimStart().startsWith(m[1])) code += (code && "\n") + lines[i++];
      i++; // the closing fence, if any
      out.push(["pre", null, ["code", null, code]]);
    } else if ((m = tableHead(line, lines[i]))) {
      i++; // the delimiter row
      const rows = [];
      while (i < lines.length && lines[i].includes("|") && !startsBlock(lines[i].trim())) rows.push(cells(lines[i++]));
      // A column without alignment whose filled cells are all numbers ends right.
      const align = m.map((a, c) => {
        const filled = rows.map((r) => r[c]).filter(Boolean);
        return a ?? (filled.length && filled.every((t) => NUMERIC.test(t)) ? "cw-num" : "");
      });
      const row = (tag, cs) => ["tr", null, ...align.map((a, c) => [tag, tag === "th" ? { scope: "col", ...(a && { class: a }) } : a && { class: a }, ...inline(cs[c] || "")])];
      const table = ["table", null, ["thead", null, row("th", cells(line))]];
      if (rows.length) table.push(["tbody", null, ...rows.map((r) => row("td", r))]);
      out.push(["div", { class: "cw-table", role: "region", tabindex: "0" }, table]);
    } else if (isRule(line)) {
      out.push(["hr", null]);
    } else if ((m = heading(line))) {
      out.push([`h${Math.min(m[0] + 2, 5)}`, null, ...inline(m[1])]);
    } else if ((item = listItem(line))) {
      const items = [item[2]];
      while (i < lines.length) {
        const next = lines[i].trimStart();
        const it = listItem(next);
        if (it && it[0] === item[0]) items.push(it[2]);
        else if (!it && next && /^[ \t]/.test(lines[i])) items[items.length - 1] += "\n" + next;
        else break;
        i++;
      }
      const list = item[0] ? ["ol", item[1] !== 1 ? { start: String(item[1]) } : null] : ["ul", null];
      out.push([...list, ...items.map((t) => ["li", null, ...inline(t)])]);
    } else if (line.startsWith(">")) {
      let text = line.slice(1).trimStart();
      while (i < lines.length && lines[i].trimStart().startsWith(">")) text += "\n" + lines[i++].trimStart().slice(1).trimStart();
      out.push(["blockquote", null, ...inline(text)]);
    } else {
      let text = line;
      while (i < lines.length) {
        const next = lines[i].trimStart();
        if (!next || startsBlock(next) || tableHead(next, lines[i + 1])) break;
        text += "\n" + next;
        i++;
      }
      out.push(["p", null, ...inline(text)]);
    }
  }
  return out;
}

/** A number, maybe signed and grouped, maybe with a percent or currency. */
const NUMERIC = /^\$?[\d.,+\- ]*\d[\d.,+\- ]*(%|VND|vnđ|đ|₫|\$|USD|triệu|tỷ)?$/;

/** A table's header `line` and its `delimiter` row: each column's alignment class (null:
 * not given), or null when they are not a table (both hold a `|`, as many cells). */
function tableHead(line, delimiter) {
  if (delimiter == null || !line.includes("|") || !delimiter.includes("|")) return null;
  const align = [];
  for (const cell of cells(delimiter)) {
    const m = /^(:?)-+(:?)$/.exec(cell);
    if (!m) return null;
    align.push(m[2] ? (m[1] ? "cw-mid" : "cw-num") : m[1] ? "" : null);
  }
  return align.length === cells(line).length ? align : null;
}

/** A row's cells, trimmed: split at each `|` not escaped as `\|`, without the outer pipes. */
function cells(line) {
  line = line.trim();
  if (line.startsWith("|")) line = line.slice(1);
  if (line.endsWith("|") && !line.endsWith("\\|")) line = line.slice(0, -1);
  return line.split(/(?<!\\)\|/).map((c) => c.trim());
}

function isRule(line) {
  const t = line.replace(/\s/g, "");
  return /^[-*_]/.test(t) && t.length >= 3 && [...t].every((c) => c === t[0]);
}

/** `## text ##` → [2, "text"]. */
function heading(line) {
  const m = /^(#{1,6})(?: (.*))?$/.exec(line);
  return m && [m[1].length, str(m[2]).trim().replace(/#+$/, "").trimEnd()];
}

/** `- x` → [false, 1, "x"]; `12. x` or `12) x` → [true, 12, "x"]. */
function listItem(line) {
  let m = /^[-*+] (.*)$/s.exec(line);
  if (m) return [false, 1, m[1].trimStart()];
  m = /^(\d{1,9})[.)] (.*)$/s.exec(line);
  return m && [true, Number(m[1]), m[2].trimStart()];
}

const startsBlock = (line) => FENCE.test(line) || isRule(line) || heading(line) || listItem(line) || line.startsWith(">");

/** Inline markdown `src` as nodes. */
function inline(src) {
  const out = [];
  let text = "";
  let prev = "";
  let i = 0;
  while (i < src.length) {
    const found = inlineAt(src.slice(i), prev);
    if (found) {
      if (text) out.push(text);
      text = "";
      out.push(found[0]);
      prev = src.slice(i, i + found[1]).slice(-1);
      i += found[1];
      continue;
    }
    const c = String.fromCodePoint(src.codePointAt(i));
    if (c === "\\" && /[!-/:-@[-`{-~]/.test(src[i + 1] || "")) {
      text += src[i + 1];
      i += 2;
    } else {
      text += c;
      i += c.length;
    }
    prev = c;
  }
  if (text) out.push(text);
  return out;
}

/** An inline construct at the start of `rest`, and how many characters it used. */
function inlineAt(rest, prev) {
  const wordBefore = ALNUM.test(prev);
  const c = rest[0];
  if (c === "\n") return [["br", null], 1];
  if (c === "`") {
    const end = rest.indexOf("`", 1);
    return end > 1 ? [["code", null, rest.slice(1, end)], end + 1] : null;
  }
  if (c === "*" || c === "_") {
    if (c === "_" && wordBefore) return null;
    const delim = rest[1] === c ? c + c : c;
    const after = rest.slice(delim.length);
    if (/^\s/.test(after) || after.startsWith(c)) return null;
    const end = closing(after, delim);
    if (end == null) return null;
    return [[delim.length === 2 ? "strong" : "em", null, ...inline(after.slice(0, end))], delim.length * 2 + end];
  }
  if (c === "[") {
    const close = rest.indexOf("](");
    if (close < 0) return null;
    const label = rest.slice(1, close);
    const urlLen = rest.indexOf(")", close + 2) - close - 2;
    if (urlLen < 0 || !label || /[[\]]/.test(label)) return null;
    const href = rest.substr(close + 2, urlLen);
    const used = close + 3 + urlLen;
    // Not a link we allow: keep the words, drop the target.
    return [safeMarkdownHref(href) ? ["a", link$(href), ...inline(label)] : label, used];
  }
  if (c === "h" && !wordBefore && /^https?:\/\//.test(rest)) {
    const url = /^[^\s<>"]*/.exec(rest)[0].replace(/[.,;:!?)']+$/, "");
    return safeMarkdownHref(url) ? [["a", link$(url), url], url.length] : null;
  }
  return null;
}

const link$ = (href) => ({ href, target: "_blank", rel: "noopener noreferrer" });

/** Where in `s` the `delim` closing an emphasis opened just before `s` starts, or null. */
function closing(s, delim) {
  const marker = delim[0];
  let i = 0;
  while (i < s.length) {
    if (s[i] === "`") {
      // Markers inside code spans do not count.
      const end = s.indexOf("`", i + 1);
      if (end >= 0) {
        i = end + 1;
        continue;
      }
    }
    if (s[i] !== marker) {
      i++;
      continue;
    }
    let run = 0;
    while (s[i + run] === marker) run++;
    const beforeOk = i > 0 && !/[ \t\n\f\r]/.test(s[i - 1]);
    const afterOk = marker !== "_" || !ALNUM.test(String.fromCodePoint(s.codePointAt(i + run) || 32));
    // A run of two inside `*…*` belongs to a nested `**…**`; the closer is the run's end.
    if (beforeOk && afterOk && !(delim.length === 1 && run === 2) && run >= delim.length) return i + run - delim.length;
    i += run;
  }
  return null;
}
