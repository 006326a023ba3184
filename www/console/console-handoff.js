// Concierge console: visitors who asked for a person. The waiting count is a badge on the
// tab (GET /admin/handoffs every few seconds while signed in: the true count, however many
// wait); the tab lists the waiting conversations newest request first, then those a person
// holds, a page of 50 at a time ("Older" / "Newer"). Each row shows what the visitor
// wants (their question, not the notice), who they are (a proven user id, a label no signed
// token proved — marked "unverified label" —, or anonymous) and how long they have waited
// (kept current). While someone waits the page title starts "(N)"; a visitor who starts
// waiting is also announced by a desktop notification when the merchant turned them on
// (the permission is asked only on their click). Opening one shows its messages
// (GET /admin/conversations/{id}) and follows it live (GET /conversations/{id}/events, read
// with fetch: the key goes in a header; its first event is who holds the conversation), with "Take over", a reply box (a person's
// messages, POST /admin/conversations/{id}/messages/human) and "Hand back to the assistant"
// (POST /admin/conversations/{id}/handoff). Everything from the API is set as text or
// drawn by the chat panel's own safe markdown renderer. A row also names the page the
// visitor asked from (text, never a link: the visitor's to say). Below, the follow-ups:
// visitors who left a number or e-mail when nobody was free (issue 45).
// A module (deferred like the other console scripts, run after them).
import * as rich from "/console/rich.js";

const app = window.ConciergeConsole;
const { $, el, when, api, show } = app;
const t = (text, values) => window.ConsoleI18n.t(text, values);
const AGENT = "concierge.console.agent"; // the merchant's name, a preference (not a secret)
const POLL_MS = 4000;

let rows = []; // GET /admin/handoffs' conversations (one page)
let listed = { waiting: 0, total: 0, offset: 0 }; // that page's counts and place
let offset = 0; // the page asked for
const PAGE = 50;
let current = null; // { id, state, agent, live: AbortController, known: Set, answer }

/** The waiting count on the tab, and the list when the tab is open. */
async function poll() {
  if (!app.site) {
    if (current && current.live) current.live.abort();
    current = null;
    return;
  }
  let body;
  try {
    body = await api("GET", "/admin/handoffs?limit=" + PAGE + "&offset=" + offset);
  } catch (e) {
    if (!$("tab-handoff").hidden) show($("handoff-error"), e.message);
    return;
  }
  show($("handoff-error"), "");
  rows = body.conversations || [];
  const waiting = Number(body.waiting) || 0;
  listed = { waiting, total: Number(body.total) || rows.length, offset: Number(body.offset) || 0 };
  if (!rows.length && offset > 0) { offset = 0; return poll(); }
  const badge = $("handoff-badge");
  badge.textContent = waiting ? String(waiting) : "";
  badge.hidden = waiting === 0;
  badge.setAttribute("aria-label", t("{n} waiting", { n: waiting }));
  title(waiting);
  if (offset === 0) announce(rows.filter((r) => r.state === "waiting"));
  if (!$("tab-handoff").hidden) drawList();
}

/** "(2) Concierge console" while two visitors wait. */
function title(waiting) {
  const base = document.title.replace(/^\(\d+\) /, "");
  document.title = waiting ? "(" + waiting + ") " + base : base;
}

// The conversations seen waiting (null before the first list since signing in: those
// already waiting then are not announced).
let seenWaiting = null;
const notifications = () => "Notification" in window;

/** A desktop notification, when the merchant allowed them, for each visitor who started
 * waiting since the last poll. */
function announce(waitingRows) {
  const ids = new Set(waitingRows.map((r) => r.id));
  const fresh = seenWaiting ? waitingRows.filter((r) => !seenWaiting.has(r.id)) : [];
  seenWaiting = ids;
  if (!fresh.length || !notifications() || Notification.permission !== "granted") return;
  const first = fresh[0];
  try {
    const note = new Notification(t("A visitor is waiting for a person"), {
      body: (fresh.length > 1 ? t("{n} new visitors are waiting.", { n: fresh.length }) + " " : "") + (first.question || ""),
      tag: "concierge-handoff",
    });
    note.onclick = () => {
      window.focus();
      app.openTab("handoff");
      open(first.id, first.state, first.agent);
    };
  } catch (e) { /* not shown (some browsers only notify from a service worker) */ }
}

/** The "notify me" control: shown when the browser can notify; permission asked only on
 * its click. */
function drawNotify() {
  const button = $("handoff-notify");
  const status = $("handoff-notify-status");
  if (!notifications()) {
    button.hidden = true;
    show(status, "");
    return;
  }
  const permission = Notification.permission;
  button.hidden = permission !== "default";
  show(status, permission === "granted"
    ? t("Desktop notifications are on: you are told when a visitor starts waiting.")
    : permission === "denied" ? t("Desktop notifications are blocked in this browser's site settings.") : "");
}

/** How long since `ms`, in words: "3 minutes", "1 h 5 min". */
function waited(ms) {
  const minutes = Math.floor(Math.max(0, Date.now() - Number(ms)) / 60000);
  if (minutes < 1) return t("under a minute");
  if (minutes < 60) return t("{n} min", { n: minutes });
  return t("{h} h {m} min", { h: Math.floor(minutes / 60), m: minutes % 60 });
}

/** Who the visitor is: a proven user id, a label their browser sent, or nobody said. */
function visitor(row) {
  if (!row.user_id) return { text: t("Anonymous visitor") };
  return row.user_id_verified
    ? { text: row.user_id, badge: el("span", { class: "badge ok", "data-verified": "", title: t("Proved by a signed user token or stated with the secret key."), text: t("verified") }) }
    : { text: row.user_id, badge: el("span", { class: "badge", "data-unverified": "", title: t("A label the visitor's browser sent; no signed token proved it."), text: t("unverified label") }) };
}

/** Keep every "waiting N min" in the list current. */
function tick() {
  for (const span of document.querySelectorAll("#handoff-list [data-waited]")) {
    span.textContent = t("waiting {time}", { time: waited(span.dataset.waited) });
  }
}

function stateText(state, agent) {
  if (state === "waiting") return t("Waiting for a person");
  if (state === "held") return agent ? t("{agent} is answering", { agent }) : t("A person is answering");
  return t("The assistant is answering");
}

function drawList() {
  const list = $("handoff-list");
  list.textContent = "";
  const waiting = listed.waiting;
  $("handoff-count").textContent = (waiting
    ? t("{n} waiting, newest request first; then the conversations a person holds.", { n: waiting })
    : rows.length ? t("Nobody is waiting; the conversations a person holds:") : t("Nobody is waiting for a person."))
    + (listed.total > rows.length ? " " + t("Showing {from}–{to} of {total}.", { from: listed.offset + 1, to: listed.offset + rows.length, total: listed.total }) : "");
  drawPager();
  for (const row of rows) {
    const who = visitor(row);
    const start = row.requested_at || row.since;
    const waitingRow = row.state === "waiting" && start;
    const button = el("button", { type: "button", "data-conversation": row.id, "data-state": row.state },
      el("strong", { class: "question", "data-question": "", text: row.question || t("(no question written)") }),
      el("span", { class: "who" }, el("span", { "data-visitor": "", text: who.text }), who.badge ? " " : null, who.badge || null),
      row.page ? el("span", { class: "page", "data-page": "", title: row.page, text: t("on {page}", { page: cut(row.page) }) }) : null,
      el("span", { class: "meta" },
        waitingRow
          ? el("span", { class: "badge bad", "data-waited": String(start), title: t("since {time}", { time: when(start) }), text: t("waiting {time}", { time: waited(start) }) })
          : el("span", { text: stateText(row.state, row.agent) + (start ? " · " + t("since {time}", { time: when(start) }) : "") })));
    button.addEventListener("click", () => open(row.id, row.state, row.agent));
    if (current && current.id === row.id) button.setAttribute("aria-current", "true");
    list.appendChild(el("li", {}, button));
  }
}

/** A page the visitor named (path and query: theirs to say, shown as text, never a link),
 * cut to fit a row. */
const cut = (page) => (page.length > 80 ? page.slice(0, 79) + "…" : page);

/** "Newer" / "Older" under the list when it holds more than one page. */
function drawPager() {
  let pager = $("handoff-pager");
  if (!pager) {
    pager = el("div", { id: "handoff-pager", class: "pager" });
    $("handoff-list").after(pager);
  }
  pager.textContent = "";
  if (listed.total <= PAGE) return;
  const go = (to) => { offset = Math.max(0, to); poll(); };
  if (listed.offset > 0) pager.appendChild(el("button", { type: "button", text: t("Newer") }));
  if (listed.offset + rows.length < listed.total) pager.appendChild(el("button", { type: "button", "data-older": "", text: t("Older") }));
  for (const button of pager.querySelectorAll("button")) {
    button.addEventListener("click", () => go(button.hasAttribute("data-older") ? listed.offset + PAGE : listed.offset - PAGE));
  }
}

/** One message in the open conversation; a line a handoff change left in the log (`line`:
 * the wait began, a person joined, the assistant is back) is a line, not the assistant's. */
function item(role, kind, content, author, at, line) {
  const human = kind === "human";
  const who = human ? t("Staff") + (author ? " · " + author : "") : role === "user" ? t("Visitor") : t("Assistant");
  const body = el("div", { class: "body" });
  if (role === "assistant" && !line) rich.markdown(body, content || "");
  else body.textContent = content || "";
  const li = el("li", { class: line ? "line" : role + (human ? " human" : ""), "data-kind": kind || "" },
    line ? null : el("span", { class: "meta", text: who + (at ? " · " + when(at) : "") }), body);
  $("handoff-messages").appendChild(li);
  return li;
}

function drawState() {
  const { state, agent } = current;
  $("handoff-state").textContent = stateText(state, agent);
  $("handoff-take").disabled = state === "held";
  $("handoff-release").disabled = state !== "held";
  $("handoff-text").disabled = state !== "held";
  $("handoff-send").disabled = state !== "held";
}

async function open(id, state, agent) {
  if (current && current.live) current.live.abort();
  current = { id, state: state || "none", agent, live: new AbortController(), known: new Set(), answer: null };
  const mine = current;
  document.querySelectorAll("#handoff-list button").forEach((b) => b.setAttribute("aria-current", String(b.dataset.conversation === id)));
  $("handoff-view").hidden = false;
  const row = rows.find((r) => r.id === id);
  $("handoff-title").textContent = row ? t("Conversation with {who}", { who: visitor(row).text }) : t("Conversation {id}", { id });
  $("handoff-title").title = id;
  show($("handoff-reply-error"), "");
  const out = $("handoff-messages");
  out.textContent = "";
  drawState();
  let view;
  try {
    view = await api("GET", "/admin/conversations/" + encodeURIComponent(id));
  } catch (e) {
    out.appendChild(el("li", { class: "error", text: e.message }));
    return;
  }
  if (mine !== current) return;
  // The conversation's own handoff, newer than the list's.
  if (view.handoff && view.handoff.state) {
    mine.state = view.handoff.state;
    mine.agent = view.handoff.agent || mine.agent;
    drawState();
  }
  const lang = view.language === "en" ? "en" : "vi";
  rich.setup(rich.WORDS[lang] || rich.WORDS.vi, lang, "");
  for (const m of view.messages || []) {
    mine.known.add(m.id);
    item(m.role, m.kind, m.content, author(m), m.created_at, line(m));
  }
  follow(mine);
}

const author = (m) => (m.author && m.author.name) || (m.metadata && m.metadata.author && m.metadata.author.name) || "";
/** Whether `m` is a line a handoff change left in the log (kind `handoff`, metadata
 * `handoff` `requested`, `joined` or `released`). */
const line = (m) => m.kind === "handoff" && ["requested", "joined", "released"].includes(m.metadata && m.metadata.handoff);

/** Read the conversation's live events until another one is opened; reconnect after the
 * last event id seen. */
async function follow(mine) {
  let last = null;
  let delay = 1000;
  while (mine === current) {
    try {
      const headers = { "x-api-key": sessionStorage.getItem("concierge.console.key") || "", accept: "text/event-stream" };
      if (last != null) headers["last-event-id"] = last;
      const response = await fetch("/conversations/" + encodeURIComponent(mine.id) + "/events",
        { headers, signal: mine.live.signal, credentials: "omit", cache: "no-store" });
      if (!response.ok || response.status === 204) return;
      delay = 1000;
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      let frame = { data: [] };
      for (;;) {
        const { value, done } = await reader.read();
        if (done || mine !== current) break;
        buffer += decoder.decode(value, { stream: true });
        const lines = buffer.split(/\r\n|\r|\n/);
        buffer = lines.pop();
        for (const line of lines) {
          if (!line) {
            if (frame.id != null) last = frame.id;
            if (frame.data.length) event(mine, frame.event || "message", frame.data.join("\n"));
            frame = { data: [] };
            continue;
          }
          const i = line.indexOf(":");
          const field = i < 0 ? line : line.slice(0, i);
          const text = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
          if (field === "data") frame.data.push(text);
          else if (field === "event") frame.event = text;
          else if (field === "id") frame.id = text;
        }
      }
    } catch (e) {
      if (mine.live.signal.aborted) return;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, 15000);
  }
}

function event(mine, name, data) {
  if (mine !== current) return;
  let d;
  try {
    d = JSON.parse(data);
  } catch (e) {
    return;
  }
  if (name === "handoff") {
    // The stream starts with the current state (also after a reconnection), then changes.
    mine.state = d.state || "none";
    mine.agent = d.agent || null;
    drawState();
    poll();
  } else if (name === "message" && d.role) {
    if (d.id && mine.known.has(d.id)) return;
    mine.known.add(d.id);
    item(d.role, d.kind, d.content, author(d), d.created_at, line(d));
  } else if (name === "started") {
    mine.answer = { li: item("assistant", "answer", ""), text: "" };
  } else if (name === "message" && typeof d.chunk === "string") {
    if (!mine.answer) mine.answer = { li: item("assistant", "answer", ""), text: "" };
    mine.answer.text += d.chunk;
    mine.answer.li.querySelector(".body").textContent = mine.answer.text;
  } else if ((name === "completed" || name === "failed") && mine.answer) {
    const { li, text } = mine.answer;
    mine.answer = null;
    // A held conversation's turn has no answer (`reply.kind` "held").
    const held = d.reply && d.reply.kind === "held";
    if (name === "completed" && (held || (d.message_id && mine.known.has(d.message_id)))) {
      li.remove();
      return;
    }
    if (d.message_id) mine.known.add(d.message_id);
    if (name === "failed") li.classList.add("failed");
    const body = li.querySelector(".body");
    body.textContent = "";
    rich.markdown(body, text);
  }
}

async function handoff(action) {
  if (!current) return;
  show($("handoff-reply-error"), "");
  const name = $("handoff-agent").value.trim();
  if (action === "take" && !name) {
    app.fieldError($("handoff-form"), "agent", t("Enter your name: the visitor sees it."));
    $("handoff-agent").focus();
    return;
  }
  app.clearErrors($("handoff-form"));
  try {
    localStorage.setItem(AGENT, name);
  } catch (e) { /* not remembered */ }
  try {
    await api("POST", "/admin/conversations/" + encodeURIComponent(current.id) + "/handoff", { action, agent: name });
    current.state = action === "take" ? "held" : "none";
    current.agent = action === "take" ? name : null;
    drawState();
    if (action === "take") $("handoff-text").focus();
    poll();
  } catch (e) {
    show($("handoff-reply-error"), e.message);
  }
}

async function reply(event) {
  event.preventDefault();
  if (!current) return;
  const text = $("handoff-text").value.trim();
  if (!text) return;
  show($("handoff-reply-error"), "");
  try {
    const body = await api("POST", "/admin/conversations/" + encodeURIComponent(current.id) + "/messages/human", { content: text });
    $("handoff-text").value = "";
    const m = (body && (body.message || body)) || {};
    if (m.id && !current.known.has(m.id)) {
      current.known.add(m.id);
      item("assistant", "human", m.content || text, author(m) || $("handoff-agent").value.trim(), m.created_at);
    }
  } catch (e) {
    show($("handoff-reply-error"), e.status === 409 ? t("Take the conversation over before replying.") : e.message);
  }
}

// ---- Settings (the Assistant tab's "Talk to a person"; console.js calls these) ----------
let loadedSettings = "";

/** `1-5 08:00-17:30` lines as office hours; throws a message for the field. */
function parseHours(text) {
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  if (!lines.length) return null;
  return lines.map((line) => {
    const m = /^([1-7](?:\s*[-,]\s*[1-7])*)\s+(\d{1,2}:\d{2})\s*[-–]\s*(\d{1,2}:\d{2})$/.exec(line);
    if (!m) throw new Error(t("Not office hours: “{line}”. Write days and hours, like 1-5 08:00-17:30.", { line }));
    const days = [];
    for (const part of m[1].replace(/\s/g, "").split(",")) {
      const [from, to] = part.split("-").map(Number);
      for (let d = from; d <= (to || from); d++) if (!days.includes(d)) days.push(d);
    }
    const pad = (hm) => hm.padStart(5, "0");
    return { days, start: pad(m[2]), end: pad(m[3]) };
  });
}

function formatHours(hours) {
  return (hours || []).map((h) => {
    const days = h.days || [];
    const run = days.length > 1 && days.every((d, i) => i === 0 || d === days[i - 1] + 1);
    return (run ? days[0] + "-" + days[days.length - 1] : days.join(",")) + " " + h.start + "-" + h.end;
  }).join("\n");
}

const settingsFields = () => [$("f-handoff-enabled").checked, $("f-handoff-wait").value.trim(), $("f-handoff-zone").value.trim(), $("f-handoff-hours").value.trim()].join("|");

app.handoffSettings = {
  fill(h) {
    h = h || {};
    $("f-handoff-enabled").checked = !!h.enabled;
    $("f-handoff-wait").value = h.wait_seconds == null ? "" : String(h.wait_seconds);
    $("f-handoff-zone").value = h.time_zone || "";
    $("f-handoff-hours").value = formatHours(h.office_hours);
    loadedSettings = settingsFields();
  },
  /** Add `handoff` to `patch` when changed; false (with the field's error) when invalid. */
  patch(form, patch) {
    if (settingsFields() === loadedSettings) return true;
    const handoff = { enabled: $("f-handoff-enabled").checked };
    const wait = $("f-handoff-wait").value.trim();
    if (wait) {
      if (!/^\d+$/.test(wait) || Number(wait) < 10 || Number(wait) > 3600) {
        app.fieldError(form, "handoff.wait_seconds", t("A whole number of seconds, 10 to 3600."));
        return false;
      }
      handoff.wait_seconds = Number(wait);
    }
    const zone = $("f-handoff-zone").value.trim();
    if (zone) handoff.time_zone = zone;
    try {
      handoff.office_hours = parseHours($("f-handoff-hours").value);
    } catch (e) {
      app.fieldError(form, "handoff", e.message);
      return false;
    }
    patch.handoff = handoff;
    return true;
  },
};
if (app.site) app.handoffSettings.fill(app.site.config.handoff);

// ---- Follow-ups: visitors who left a phone number or e-mail when nobody was free ----------
// GET /admin/follow-ups (open ones oldest first, then the latest done), each with its
// contact, question, page (text), when; "Open the conversation" shows it beside, "Contacted"
// marks it done (POST /admin/follow-ups/{id}/done).

async function followUps() {
  if (!app.site || $("tab-handoff").hidden) return;
  let body;
  try {
    body = await api("GET", "/admin/follow-ups?limit=100");
  } catch (e) {
    show($("follow-up-error"), e.message);
    return;
  }
  show($("follow-up-error"), "");
  const list = $("follow-up-list");
  list.textContent = "";
  const items = body.follow_ups || [];
  const open = Number(body.open) || 0;
  $("follow-up-count").textContent = open
    ? t("{n} to call back, who waited longest first.", { n: open })
    : t("Nobody to call back.");
  for (const f of items) {
    const done = f.done_at != null;
    const item = el("li", { "data-follow-up": f.id, "data-done": String(done) },
      el("strong", { class: "contact", "data-contact": "", text: f.contact }),
      el("span", { class: "question", text: f.question }),
      f.page ? el("span", { class: "page", title: f.page, text: t("on {page}", { page: cut(f.page) }) }) : null,
      el("span", { class: "meta", text: done ? t("contacted {time}", { time: when(f.done_at) }) : t("left {time}", { time: when(f.created_at) }) }));
    const actions = el("span", { class: "actions" });
    const view = el("button", { type: "button", class: "quiet", text: t("Open the conversation") });
    view.addEventListener("click", () => open(f.conversation_id, null, null));
    actions.appendChild(view);
    if (!done) {
      const mark = el("button", { type: "button", "data-done-button": "", text: t("Contacted") });
      mark.addEventListener("click", async () => {
        mark.disabled = true;
        try {
          await api("POST", "/admin/follow-ups/" + encodeURIComponent(f.id) + "/done", {});
        } catch (e) {
          mark.disabled = false;
          show($("follow-up-error"), e.message);
          return;
        }
        await followUps();
        $("follow-up-count").focus();
      });
      actions.appendChild(mark);
    }
    item.appendChild(actions);
    list.appendChild(item);
  }
}
$("follow-up-refresh").addEventListener("click", () => followUps());

app.loaders.handoff = () => {
  drawNotify();
  drawList();
  poll();
  followUps();
};
try {
  $("handoff-agent").value = localStorage.getItem(AGENT) || "";
} catch (e) { /* no storage */ }
$("handoff-take").addEventListener("click", () => handoff("take"));
$("handoff-release").addEventListener("click", () => handoff("release"));
$("handoff-reply").addEventListener("submit", reply);
$("handoff-refresh").addEventListener("click", () => poll());
$("handoff-text").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    $("handoff-reply").requestSubmit();
  }
});
$("handoff-notify").addEventListener("click", async () => {
  try {
    await Notification.requestPermission();
  } catch (e) { /* refused or not supported */ }
  drawNotify();
});
document.addEventListener("console:signed-out", () => {
  seenWaiting = null;
  title(0);
});
drawNotify();
setInterval(poll, POLL_MS);
setInterval(tick, 15000);
poll();
