// Concierge console: try the assistant inline, read conversations, install the widget.
// Loaded after console.js, whose helpers it uses (window.ConciergeConsole).
(function () {
  "use strict";
  var app = window.ConciergeConsole;
  var $ = app.$, el = app.el, show = app.show, when = app.when, lines = app.lines, api = app.api,
    button = app.button, clearErrors = app.clearErrors, fieldError = app.fieldError, serverError = app.serverError;
  var feedback = []; // GET /admin/feedback's rows
  var current = null; // the conversation shown

  // ---- Try it --------------------------------------------------------------------------
  function publicKey() {
    return (app.site && app.site.config.public_key) || sessionStorage.getItem(app.PK) || "";
  }
  function setUpTry() {
    var origins = app.site.config.allowed_origins || [];
    var key = publicKey();
    var blocked = $("try-blocked");
    if (!origins.includes(location.origin)) {
      blocked.hidden = false;
      $("try-allow").hidden = false;
      $("try-key-field").hidden = true;
      $("try-blocked-text").textContent = "The chat panel runs only on pages of the site's allowed origins. To try it here, allow this console's origin (" +
        location.origin + "): its pages can then use the site's public key too.";
      return;
    }
    if (!key) {
      blocked.hidden = false;
      $("try-allow").hidden = true;
      $("try-key-field").hidden = false;
      $("try-blocked-text").textContent = "This site was created before the console kept its public key: paste it (or rotate the keys).";
      return;
    }
    blocked.hidden = true;
    if (window.Concierge || document.querySelector('script[data-console-embed]')) return;
    var tag = el("script", { src: "/embed.js", "data-site-key": key, "data-inline": "#try-panel",
      "data-lang": app.site.config.language || "vi", "data-console-embed": "" });
    tag.async = true;
    document.body.appendChild(tag);
    window.addEventListener("concierge:message", onTryMessage);
  }
  async function allowConsoleOrigin() {
    var origins = (app.site.config.allowed_origins || []).concat([location.origin]);
    try {
      app.site = (await api("PATCH", "/admin/site", { allowed_origins: origins })).site;
      app.fillAssistant();
      setUpTry();
    } catch (e) {
      $("try-blocked-text").textContent = e.message;
    }
  }
  async function onTryMessage(event) {
    var detail = event.detail || {};
    if (detail.role !== "user" || !$("show-retrieval").checked) return;
    var out = $("retrieval");
    while (out.firstChild) out.removeChild(out.firstChild);
    out.appendChild(el("p", { class: "hint", text: "Retrieval for: " + detail.content }));
    try {
      var results = (await api("POST", "/admin/search", { query: detail.content })).results || [];
      if (!results.length) out.appendChild(el("p", { text: "Nothing found." }));
      results.forEach(function (r) {
        out.appendChild(el("div", { class: "hit", "data-hit": r.id },
          el("strong", { text: (r.title || r.id) + " " }),
          el("span", { class: "badge", text: r.source + " · " + Number(r.score).toFixed(3) }),
          el("p", { text: r.text })));
      });
    } catch (e) {
      out.appendChild(el("p", { class: "error", text: e.message }));
    }
  }

  // ---- Conversations -------------------------------------------------------------------
  async function loadConversations() {
    var list = $("conv-list");
    var rows;
    try {
      var answers = await Promise.all([api("GET", "/admin/conversations?limit=100"), api("GET", "/admin/feedback?limit=500")]);
      rows = answers[0].conversations || [];
      feedback = answers[1].feedback || [];
    } catch (e) {
      list.textContent = e.message;
      return;
    }
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!rows.length) list.appendChild(el("li", { class: "hint", text: "No conversations yet." }));
    rows.forEach(function (c) {
      var votes = feedback.filter(function (f) { return f.conversation_id === c.id; });
      var up = votes.filter(function (f) { return f.rating === "up"; }).length;
      var label = el("button", { type: "button", "data-conversation": c.id },
        el("strong", { text: c.first_question || "(no question yet)" }),
        el("span", { class: "meta", text: " " + when(c.updated_at) + " · " + c.messages + " messages" + (c.user_id ? " · " + c.user_id : "") }),
        c.last_role === "user" ? el("span", { class: "badge bad", text: "no answer" }) : null,
        c.incomplete ? el("span", { class: "badge bad", text: c.incomplete + " incomplete" }) : null,
        c.down_votes ? el("span", { class: "badge bad", "data-down": String(c.down_votes), text: c.down_votes + " down" }) : null,
        up ? el("span", { class: "badge", text: up + " up" }) : null);
      label.addEventListener("click", function () { openConversation(c.id); });
      list.appendChild(el("li", {}, label));
    });
  }
  async function openConversation(id) {
    current = id;
    document.querySelectorAll("#conv-list button").forEach(function (b) {
      b.setAttribute("aria-current", String(b.dataset.conversation === id));
    });
    var out = $("conv-messages");
    while (out.firstChild) out.removeChild(out.firstChild);
    $("conv-title").textContent = "Conversation " + id;
    $("conv-delete").hidden = false;
    var messages;
    try {
      messages = (await api("GET", "/conversations/" + encodeURIComponent(id) + "/history")).messages || [];
    } catch (e) {
      out.appendChild(el("li", { class: "error", text: e.message }));
      return;
    }
    messages.forEach(function (m, i) {
      var next = messages[i + 1];
      var failed = m.role === "user" && (!next || next.role === "user");
      var incomplete = m.role === "assistant" && m.metadata && m.metadata.incomplete === true;
      var votes = feedback.filter(function (f) { return f.message_id === m.id; });
      var item = el("li", { class: m.role + (failed ? " failed" : "") + (incomplete ? " incomplete" : ""), "data-message": m.id },
        el("span", { class: "meta", text: (m.role === "user" ? "Visitor" : "Assistant") + " · " + m.kind + " · " + when(m.created_at) +
          (failed ? " · no answer (the turn failed or is still running)" : "") + (incomplete ? " · incomplete answer" : "") }),
        m.content);
      votes.forEach(function (v) {
        item.appendChild(el("span", { class: "vote", "data-vote": v.rating,
          text: (v.rating === "up" ? "Voted up" : "Voted down") + " by " + v.voter + (v.comment ? ": “" + v.comment + "”" : "") }));
      });
      out.appendChild(item);
    });
  }
  async function deleteConversation() {
    if (!current || !window.confirm("Delete this conversation and its messages?")) return;
    try {
      await api("DELETE", "/conversations/" + encodeURIComponent(current));
      current = null;
      $("conv-delete").hidden = true;
      var out = $("conv-messages");
      while (out.firstChild) out.removeChild(out.firstChild);
      $("conv-title").textContent = "Messages";
      loadConversations();
    } catch (e) {
      $("conv-messages").appendChild(el("li", { class: "error", text: e.message }));
    }
  }

  // ---- Install -------------------------------------------------------------------------
  function snippet() {
    var extra = "";
    var color = $("i-color").value;
    if (/^#[0-9a-f]{6}$/i.test(color) && color.toLowerCase() !== "#0b3d91") extra += ' data-color="' + color + '"';
    if ($("i-position").value === "left") extra += ' data-position="left"';
    return '<script src="' + location.origin + '/embed.js" data-site-key="' + (publicKey() || "pk_…") + '"' + extra + ' async></script>';
  }
  function fillInstall() {
    $("snippet").textContent = snippet();
  }
  function checkOrigin(event) {
    event.preventDefault();
    var out = $("check-result");
    var origin;
    try {
      var url = new URL($("check-url").value.trim());
      if (!/^https?:$/.test(url.protocol)) throw new Error();
      origin = url.origin;
    } catch (e) {
      out.className = "error";
      out.textContent = "Not a web page URL (https://…).";
      return;
    }
    var allowed = (app.site.config.allowed_origins || []).includes(origin);
    out.className = allowed ? "ok" : "error";
    out.textContent = allowed
      ? "Allowed: the widget works on pages of " + origin + "."
      : "Not allowed: add " + origin + " to the allowed origins (Assistant tab), or the widget refuses to run there.";
  }


  app.loaders.try = setUpTry;
  app.loaders.conversations = loadConversations;
  app.loaders.install = fillInstall;
  $("try-allow").addEventListener("click", allowConsoleOrigin);
  $("try-key-use").addEventListener("click", function () {
    var key = $("try-key").value.trim();
    if (/^pk_[0-9a-f]+$/.test(key)) { sessionStorage.setItem(app.PK, key); setUpTry(); }
  });
  $("try-reset").addEventListener("click", function () {
    if (window.Concierge) window.Concierge.reset();
    var out = $("retrieval");
    while (out.firstChild) out.removeChild(out.firstChild);
  });
  $("conv-refresh").addEventListener("click", loadConversations);
  $("conv-delete").addEventListener("click", deleteConversation);
  $("copy-snippet").addEventListener("click", async function () {
    try {
      await navigator.clipboard.writeText(snippet());
      $("copied").textContent = "Copied.";
    } catch (e) {
      $("copied").textContent = "Select the tag and copy it.";
    }
  });
  $("origin-check").addEventListener("submit", checkOrigin);
  $("i-color").addEventListener("input", fillInstall);
  $("i-position").addEventListener("change", fillInstall);
})();
