// Rich turns in the chat panel: tool rows, a plan's progress bar, a turn's payloads —
// lists, tables, charts (inline SVG), sources, evidence, and follow-up and control
// questions as chips — and feedback (thumbs, optional comment) and copy on each answer,
// drawn with DOM calls only from the answer's events or its stored message
// (widget/src/rich.rs forwards them).
//
// Every payload string becomes a text node or an attribute value, never markup. Links
// point only to absolute http(s) URLs or to site-relative paths on the embedding page's
// origin, open in a new tab and carry rel="noopener noreferrer"; anything else shows as
// plain text. Big payloads are capped (a table shows its first 100 rows, a list 50 items)
// and say how many they show. Plain JS rather than Rust: this keeps the widget inside its
// download budget (scripts/sizes.sh).

const SVG = "http://www.w3.org/2000/svg";
const MAX_ROWS = 100;
const MAX_ITEMS = 50;
const MAX_LABELS = 60;
const MAX_SERIES = 6;
const W = 640;
const H = 360;
const TOP = 16;
const BOTTOM = 48;
const SIDE = 16;

// [working, done, failed, table, showing×3, sources, evidence, follow-ups, control, up and
//  down (names), up and down (visible), copy, copied, comment, send comment, thanks]
let words = [];
let format = new Intl.NumberFormat("vi-VN", { maximumFractionDigits: 2 });
let site = "";
const turns = new Map(); // message key → its state
const views = new Map(); // message key → [work element, payloads element, footer element]
let session = {}; // the conversation and the API headers (feedback)

/** The panel's words, language and the embedding page's origin. */
export function setup(panelWords, lang, origin) {
  words = panelWords;
  format = new Intl.NumberFormat(lang === "en" ? "en-US" : "vi-VN", { maximumFractionDigits: 2 });
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
  turns.set(key, fresh({ payloads: arr(message.payloads), id: message.kind === "greeting" ? null : message.id, feedback: message.feedback }));
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
    turn.message = str(d.message);
    turn.percent = typeof d.percentage === "number" ? Math.max(0, Math.min(100, Math.round(d.percentage))) : -1;
  }
  if (name === "payload") turn.payloads.push(d);
  if (name === "text") turn.text = true;
  if (name === "text" || name === "completed" || name === "end") turn.percent = -1;
  // A call still working when the answer failed or stopped, failed.
  if (name === "end") for (const t of turn.tools) t.state = t.state || 2;
  if (name === "completed" && d.kind !== "greeting") turn.id = d.message_id;
  draw(key);
}

function fresh(turn) {
  return { tools: [], percent: -1, message: "", payloads: [], painted: -1, ...turn };
}

/** The elements message `key` draws into, once mounted. */
export function mount(key, work, rich) {
  rich.textContent = "";
  views.set(key, [work, el(rich, "div"), el(rich, "div", "cw-foot")]);
  const turn = turns.get(key);
  if (turn) turn.painted = -1;
  draw(key);
}

function draw(key) {
  const view = views.get(key);
  const turn = turns.get(key);
  if (!view || !turn) return;
  const [work, rich] = view;
  work.textContent = "";
  if (turn.tools.length) {
    const list = el(work, "ul", "cw-tools");
    for (const { name, state } of turn.tools) {
      el(list, "li", "cw-tool", `${toolWords(name)}: ${words[state]}`).dataset.state = ["working", "done", "failed"][state];
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
  }
}

// ---- feedback and copy ------------------------------------------------------------------

/** Once the answer is stored: thumbs up/down (pressed: the visitor's vote), copy, and
 * after a vote an optional comment. */
function footer(key) {
  const foot = views.get(key)[2];
  const turn = turns.get(key);
  foot.textContent = "";
  if (!turn.id) return;
  const rating = turn.feedback && turn.feedback.rating;
  ["up", "down"].forEach((r, i) => {
    const b = button(foot, "cw-vote", words[13 + i], words[11 + i]);
    b.setAttribute("aria-pressed", String(rating === r));
    b.onclick = () => vote(key, r);
  });
  const copy = button(foot, "cw-copy", words[15]);
  copy.onclick = () => {
    const body = foot.closest(".cw-msg").querySelector(".cw-body");
    navigator.clipboard.writeText(body.textContent).then(() => { copy.textContent = words[16]; }, () => {});
  };
  if (turn.thanked) {
    el(foot, "p", "cw-note", words[19]).setAttribute("role", "status");
  } else if (rating) {
    const box = el(foot, "textarea", "cw-comment");
    box.rows = 1;
    box.maxLength = 1000;
    box.setAttribute("aria-label", words[17]);
    box.placeholder = words[17];
    box.value = (turn.feedback && turn.feedback.comment) || "";
    button(foot, "cw-send-comment", words[18]).onclick = () => vote(key, rating, box.value);
  }
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

/** Store the visitor's vote (and comment) through the API; show it once stored. */
async function vote(key, rating, comment) {
  const turn = turns.get(key);
  const headers = { "content-type": "application/json", "x-api-key": session.key, "x-embedder-origin": session.embedder };
  if (session.token) headers["x-user-token"] = session.token;
  const path = `/conversations/${encodeURIComponent(session.id)}/messages/${encodeURIComponent(turn.id)}/feedback`;
  try {
    const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(comment == null ? { rating } : { rating, comment }) });
    if (!response.ok) return;
    turn.feedback = (await response.json()).feedback;
    turn.thanked = comment != null;
    footer(key);
  } catch (_) {
    // Offline: the vote is not shown as stored.
  }
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

/** `search_products` → "Search products". */
function toolWords(name) {
  const w = str(name).replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_\-.:\s]+/g, " ").trim().toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
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
    if (item && item.subtitle) el(li, "small", "", str(item.subtitle));
  }
  const total = typeof data.total === "number" ? data.total : 0;
  shown(out, Math.min(items.length, MAX_ITEMS), Math.max(total, items.length));
}

function table(out, data) {
  const columns = arr(data.columns).map((c) => ({ key: str(c && c.key), label: str(c && c.label), number: c && c.type === "number" }));
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
      if (typeof cell === "number") td.textContent = num(cell);
      else if (cell && typeof cell === "object") link(td, cell.text, cell.href);
      else td.textContent = str(cell);
    }
  }
  shown(out, Math.min(rows.length, MAX_ROWS), rows.length);
}

function chart(out, data) {
  const kind = data.chart;
  const labels = arr(data.labels).slice(0, MAX_LABELS).map(str);
  const series = arr(data.series).slice(0, MAX_SERIES);
  if (!["bar", "line", "pie"].includes(kind) || !labels.length || !series.length) return;
  // Missing, negative and non-finite values count as 0.
  const values = series.map((s) => labels.map((_, i) => {
    const v = arr(s && s.values)[i];
    return typeof v === "number" && isFinite(v) && v > 0 ? v : 0;
  }));
  const figure = el(out, "figure", "cw-chart");
  if (data.title) el(figure, "figcaption", "", str(data.title));
  const canvas = svg(figure, "svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": str(data.alt) });
  const legend = [];
  const colour = (k) => "cw-s" + (k % MAX_SERIES);
  if (kind === "pie") {
    const v = values[0];
    const total = v.reduce((a, b) => a + b, 0);
    const [cx, cy, r] = [W / 2, H / 2, H / 2 - SIDE];
    const at = (t) => [cx + r * Math.cos(t * 2 * Math.PI - Math.PI / 2), cy + r * Math.sin(t * 2 * Math.PI - Math.PI / 2)].map(Math.round);
    let start = 0;
    v.forEach((x, i) => {
      legend.push([i, `${labels[i]}: ${num(x)}`]);
      if (!x) return;
      const end = start + x / total;
      const [x0, y0] = at(start);
      const [x1, y1] = at(end);
      const d = x / total > 0.9999
        ? `M${cx},${cy - r}a${r},${r} 0 1,1 0,${2 * r}a${r},${r} 0 1,1 0,-${2 * r}Z`
        : `M${cx},${cy}L${x0},${y0}A${r},${r} 0 ${end - start > 0.5 ? 1 : 0},1 ${x1},${y1}Z`;
      svg(canvas, "path", { class: colour(i), d });
      start = end;
    });
  } else {
    const max = Math.max(...values.flat()) || 1;
    const n = labels.length;
    const plot = H - TOP - BOTTOM;
    const slot = (W - 2 * SIDE) / n;
    const y = (v) => Math.round(TOP + plot - (v / max) * plot);
    values.forEach((s, k) => {
      if (kind === "bar") {
        const w = (slot * 0.8) / values.length;
        s.forEach((v, i) => svg(canvas, "rect", {
          class: colour(k), x: Math.round(SIDE + slot * i + slot * 0.1 + w * k), y: y(v),
          width: Math.max(1, Math.round(w)), height: TOP + plot - y(v),
        }));
      } else {
        svg(canvas, "polyline", { class: colour(k), points: s.map((v, i) => `${Math.round(SIDE + slot * (i + 0.5))},${y(v)}`).join(" ") });
      }
    });
    // Every label while they fit, else every k-th.
    for (let i = 0; i < n; i += Math.ceil(n / 8)) {
      svg(canvas, "text", { x: Math.round(SIDE + slot * (i + 0.5)), y: H - 16 }).textContent = labels[i].slice(0, 12);
    }
    if (series.length > 1) series.forEach((s, k) => legend.push([k, str(s && s.name)]));
  }
  if (legend.length) {
    const ul = el(figure, "ul", "cw-legend");
    for (const [k, text] of legend) el(el(ul, "li"), "i", colour(k)).after(text);
  }
}

function sources(out, items) {
  const section = el(out, "section", "cw-sources");
  el(section, "h3", "", words[7]);
  const ol = el(section, "ol");
  for (const s of items.slice(0, MAX_ITEMS)) {
    const li = el(ol, "li");
    link(li, s && s.title, s && s.url);
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
