// Concierge console: conversations as the visitor saw them — the list (only conversations
// with a visitor message), its search and filters, CSV/JSON export, and each message drawn
// by the chat panel's own renderer (`/console/rich.js`, built from widget/js/rich.js): the
// text as the panel's markdown (GFM tables, no rental role label), then tool rows, lists,
// tables, charts, sources…, fed the stored message and its tool calls, in the panel's
// words (`rich.WORDS`, generated at build time from widget/src/i18n/ in the order
// rich.js takes them: scripts/console-words.mjs).
// A module (deferred like the other console scripts, run after them).
import * as rich from "/console/rich.js";

const app = window.ConciergeConsole;
const { $, el, when, api, show } = app;
const t = (text, values) => window.ConsoleI18n.t(text, values);

// The template that answered a conversation, in the console's words (the filter's labels);
// none recorded: created before templates were recorded.
const TEMPLATES = { shop: "Shop", guarded: "Support with guardrails", rental: "Room rental", knowledge: "Knowledge base", analyst: "Data analyst" };
const templateName = (name) => t(TEMPLATES[name] || "Not recorded (older conversations)");
// A message's kind in words, after who wrote it (" · Answer"); nothing for a visitor's
// text or a person's reply (who says it all).
const KINDS = { greeting: "Greeting", clarify: "Clarifying question", warranty: "Warranty lookup", answer: "Answer", refusal: "Refusal", handoff: "Handoff notice" };
const kindWord = (m) => (KINDS[m.kind] ? " · " + t(KINDS[m.kind]) : "");

let feedback = []; // GET /admin/feedback's rows
let current = null; // the conversation shown
let shown = []; // the listed conversations

/** The filter as query parameters, or throws a message for the form. */
function filterQuery() {
  const params = new URLSearchParams();
  const q = $("cf-q").value.trim();
  if (q) params.set("q", q);
  if ($("cf-template").value) params.set("template", $("cf-template").value);
  if ($("cf-votes").value) params.set("votes", $("cf-votes").value);
  if ($("cf-unanswered").checked) params.set("unanswered", "1");
  // Dates are the merchant's local days: from its first millisecond to the next day's.
  const day = (value, next) => {
    const [y, m, d] = value.split("-").map(Number);
    return new Date(y, m - 1, d + (next ? 1 : 0)).getTime();
  };
  const from = $("cf-from").value ? day($("cf-from").value, false) : null;
  const to = $("cf-to").value ? day($("cf-to").value, true) : null;
  if (from != null && to != null && from >= to) throw new Error(t("The start date is after the end date."));
  if (from != null) params.set("from", String(from));
  if (to != null) params.set("to", String(to));
  return params;
}

async function loadConversations(event) {
  if (event) event.preventDefault();
  const list = $("conv-list");
  show($("conv-filter-error"), "");
  let params;
  try {
    params = filterQuery();
  } catch (e) {
    show($("conv-filter-error"), e.message);
    return;
  }
  params.set("limit", "100");
  let rows;
  try {
    const answers = await Promise.all([api("GET", "/admin/conversations?" + params), api("GET", "/admin/feedback?limit=500")]);
    rows = answers[0].conversations || [];
    feedback = answers[1].feedback || [];
  } catch (e) {
    show($("conv-filter-error"), e.message);
    return;
  }
  shown = rows;
  list.textContent = "";
  const filtered = [...params.keys()].some((k) => k !== "limit");
  $("conv-count").textContent = rows.length ? t("{n} conversation(s).", { n: rows.length })
    : filtered ? t("No conversation matches these filters.") : t("No conversations yet.");
  for (const c of rows) {
    const up = feedback.filter((f) => f.conversation_id === c.id && f.rating === "up").length;
    const label = el("button", { type: "button", "data-conversation": c.id },
      el("strong", { text: c.first_question || "" }),
      el("span", { class: "meta", "data-template": c.template || "unknown",
        text: " " + when(c.updated_at) + " · " + templateName(c.template) + " · " + t("{n} messages", { n: c.messages }) + (c.user_id ? " · " + c.user_id : "") }),
      c.user_id && !c.user_id_verified ? el("span", { class: "badge", "data-unverified": "", title: t("A label the visitor's browser sent; no signed token proved it."), text: t("unverified label") }) : null,
      c.last_role === "user" ? el("span", { class: "badge bad", "data-badge": "no-answer", text: t("no answer") }) : null,
      c.incomplete ? el("span", { class: "badge bad", text: t("{n} incomplete", { n: c.incomplete }) }) : null,
      c.down_votes ? el("span", { class: "badge bad", "data-down": String(c.down_votes), text: t("{n} down", { n: c.down_votes }) }) : null,
      up ? el("span", { class: "badge", text: t("{n} up", { n: up }) }) : null);
    label.addEventListener("click", () => openConversation(c.id));
    if (c.id === current) label.setAttribute("aria-current", "true");
    list.appendChild(el("li", {}, label));
  }
  if (current && shown.some((c) => c.id === current)) openConversation(current);
}

async function openConversation(id) {
  current = id;
  proposed = null;
  $("test-form").hidden = true;
  document.querySelectorAll("#conv-list button").forEach((b) => b.setAttribute("aria-current", String(b.dataset.conversation === id)));
  const out = $("conv-messages");
  out.textContent = "";
  $("conv-title").textContent = t("Conversation {id}", { id });
  $("conv-delete").hidden = false;
  let messages;
  let lang;
  try {
    const view = await api("GET", "/admin/conversations/" + encodeURIComponent(id));
    messages = view.messages || [];
    // Drawn in the conversation's language, as the visitor saw it.
    lang = view.language === "en" ? "en" : "vi";
  } catch (e) {
    out.appendChild(el("li", { class: "error", text: e.message }));
    return;
  }
  rich.setup(rich.WORDS[lang] || rich.WORDS.vi, lang, "");
  rich.conversation(id, "", "", "");
  messages.forEach((m, i) => {
    const next = messages[i + 1];
    const failed = m.role === "user" && (!next || next.role === "user");
    const incomplete = m.role === "assistant" && m.metadata && m.metadata.incomplete === true;
    const votes = feedback.filter((f) => f.message_id === m.id);
    const body = el("div", { class: "body" });
    // The visitor's words as typed; the assistant's as the panel drew them.
    if (m.role === "assistant") rich.markdown(body, m.content || "");
    else body.textContent = m.content || "";
    // A person's reply names them, as the visitor saw it (kind `human`, `author`).
    const human = m.kind === "human";
    const name = (m.author && m.author.name) || (m.metadata && m.metadata.author && m.metadata.author.name) || "";
    const who = human ? t("Staff") + (name ? " · " + name : "") : m.role === "user" ? t("Visitor") : t("Assistant");
    // A line a handoff change left in the log is not the assistant's.
    const line = m.kind === "handoff" && ["requested", "joined", "released"].includes(m.metadata && m.metadata.handoff);
    if (line) {
      body.textContent = m.content || "";
      out.appendChild(el("li", { class: "line", "data-message": m.id, "data-kind": m.kind }, el("span", { class: "meta", text: when(m.created_at) }), body));
      return;
    }
    const item = el("li", { class: m.role + (human ? " human" : "") + (failed ? " failed" : "") + (incomplete ? " incomplete" : ""), "data-message": m.id, "data-kind": m.kind || "" },
      el("span", { class: "meta", text: who + kindWord(m) + " · " + when(m.created_at) +
        (failed ? " · " + t("no answer (the turn failed or is still running)") : "") + (incomplete ? " · " + t("incomplete answer") : "") }));
    if (m.role === "assistant") {
      // The widget's renderer: tool rows above the text, payloads below it.
      const work = el("div", { class: "work" });
      const payloads = el("div", { class: "rich" });
      item.appendChild(work);
      item.appendChild(body);
      item.appendChild(payloads);
      const key = i + 1;
      rich.stored(key, { id: m.id, kind: m.kind, payloads: m.payloads || [] });
      for (const tool of m.tools || []) {
        rich.event(key, "tool_start", JSON.stringify({ call_id: tool.id, name: tool.name }));
        rich.event(key, "tool_end", JSON.stringify({ call_id: tool.id, name: tool.name, ok: tool.ok }));
      }
      rich.mount(key, work, payloads);
      // The panel's vote and copy row: the console shows the votes cast, it casts none.
      for (const foot of payloads.querySelectorAll(".cw-foot")) foot.remove();
    } else {
      item.appendChild(body);
    }
    // A test case from any answer, in one click (issue 42): its checks proposed, to edit.
    if (m.role === "assistant" && !human && m.kind !== "greeting" && m.content) {
      const make = app.button(t("Make a test"), () => proposeTest(m.id), "small quiet");
      make.setAttribute("aria-label", t("Make a test from this answer"));
      make.dataset.makeTest = m.id;
      item.appendChild(make);
    }
    for (const v of votes) {
      item.appendChild(el("span", { class: "vote", "data-vote": v.rating,
        text: t(v.rating === "up" ? "Voted up by {voter}" : "Voted down by {voter}", { voter: v.voter }) + (v.comment ? ": “" + v.comment + "”" : "") }));
    }
    out.appendChild(item);
  });
}

let proposed = null; // the case proposed by POST /admin/tests/propose, being edited

const lines = (id) => $(id).value.split("\n").map((x) => x.trim()).filter(Boolean);

/** The proposal for answer `messageId` of the conversation shown, in the form to edit. */
async function proposeTest(messageId) {
  const form = $("test-form");
  show($("tf-error"), "");
  $("tf-result").textContent = "";
  try {
    const answer = await api("POST", "/admin/tests/propose", { conversation_id: current, message_id: messageId });
    proposed = answer.case;
  } catch (e) {
    form.hidden = false;
    show($("tf-error"), e.message);
    return;
  }
  const checks = proposed.checks || {};
  $("tf-question").value = proposed.question;
  $("tf-contains").value = (checks.contains || []).join("\n");
  $("tf-not-contains").value = (checks.not_contains || []).join("\n");
  $("tf-tools").value = (checks.tools_used || []).join(", ");
  $("tf-language").value = checks.language || "";
  $("tf-payload").value = checks.payload || "";
  form.hidden = false;
  $("tf-question").focus();
}

/** Save the edited proposal with `POST /admin/tests`. */
async function saveTest(event) {
  event.preventDefault();
  show($("tf-error"), "");
  $("tf-result").textContent = "";
  if (!proposed) return;
  const checks = Object.assign({}, proposed.checks);
  delete checks.contains;
  delete checks.not_contains;
  delete checks.tools_used;
  delete checks.language;
  delete checks.payload;
  if (lines("tf-contains").length) checks.contains = lines("tf-contains");
  if (lines("tf-not-contains").length) checks.not_contains = lines("tf-not-contains");
  const tools = $("tf-tools").value.split(",").map((x) => x.trim()).filter(Boolean);
  if (tools.length) checks.tools_used = tools;
  if ($("tf-language").value) checks.language = $("tf-language").value;
  if ($("tf-payload").value) checks.payload = $("tf-payload").value;
  const body = Object.assign({}, proposed, { question: $("tf-question").value, checks });
  try {
    await api("POST", "/admin/tests", body);
    const list = await api("GET", "/admin/tests");
    $("tf-result").textContent = t("Test saved: the site has {n} of {max}.", { n: list.count, max: list.max });
  } catch (e) {
    show($("tf-error"), e.message);
  }
}

async function deleteConversation() {
  if (!current || !window.confirm(t("Delete this conversation and its messages?"))) return;
  try {
    await api("DELETE", "/conversations/" + encodeURIComponent(current));
    current = null;
    $("conv-delete").hidden = true;
    $("conv-messages").textContent = "";
    $("conv-title").textContent = t("Messages");
    loadConversations();
  } catch (e) {
    $("conv-messages").appendChild(el("li", { class: "error", text: e.message }));
  }
}

/** Download the filtered conversations' messages (the key goes in a header, so a fetch). */
async function exportAs(format) {
  show($("conv-filter-error"), "");
  let params;
  try {
    params = filterQuery();
  } catch (e) {
    show($("conv-filter-error"), e.message);
    return;
  }
  params.set("format", format);
  try {
    const response = await fetch("/admin/conversations/export?" + params, {
      headers: { "x-api-key": sessionStorage.getItem("concierge.console.key") || "" },
      credentials: "omit", cache: "no-store",
    });
    if (!response.ok) {
      const json = await response.json().catch(() => null);
      throw new Error((json && json.error && json.error.message) || "HTTP " + response.status);
    }
    const blob = await response.blob();
    const file = "conversations." + format;
    const a = el("a", { href: URL.createObjectURL(blob), download: file });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    $("conv-count").textContent = t("Downloaded {file}.", { file });
  } catch (e) {
    show($("conv-filter-error"), e.message);
  }
}

app.loaders.conversations = loadConversations;
$("conv-filter").addEventListener("submit", loadConversations);
$("conv-refresh").addEventListener("click", () => loadConversations());
$("conv-delete").addEventListener("click", deleteConversation);
$("test-form").addEventListener("submit", saveTest);
$("tf-cancel").addEventListener("click", () => {
  proposed = null;
  $("test-form").hidden = true;
});
$("conv-export-csv").addEventListener("click", () => exportAs("csv"));
$("conv-export-json").addEventListener("click", () => exportAs("json"));
// Signed in before this module ran, on the Conversations tab: draw it now.
if (app.site && !$("tab-conversations").hidden) loadConversations();
