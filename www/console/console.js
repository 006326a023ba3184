// Concierge console: the merchant's page over the Worker's admin routes.
//
// The site's secret key is kept in this tab's sessionStorage only (never localStorage, a
// cookie or a URL) and sent as the `X-API-Key` header to this Worker's own origin. The
// page is served under a strict CSP: no inline script or style, so everything here builds
// DOM nodes and sets text (never HTML from the API).
(function () {
  "use strict";
  var KEY = "concierge.console.key";
  var PK = "concierge.console.public_key";
  var $ = function (id) { return document.getElementById(id); };
  var site = null; // GET /admin/site's `site`
  var feedback = []; // GET /admin/feedback's rows
  var current = null; // the conversation shown

  // ---- DOM helpers ---------------------------------------------------------------------
  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (name) {
      if (name === "text") node.textContent = attrs[name];
      else if (name === "class") node.className = attrs[name];
      else node.setAttribute(name, attrs[name]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child == null) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  function show(node, text) {
    node.textContent = text || "";
    node.hidden = !text;
  }
  function when(ms) {
    return ms ? new Date(Number(ms)).toLocaleString() : "";
  }
  function lines(text) {
    return text.split("\n").map(function (l) { return l.trim(); }).filter(Boolean);
  }

  // ---- API -----------------------------------------------------------------------------
  function ApiError(status, code, message) {
    this.status = status;
    this.code = code;
    this.message = message;
  }
  async function api(method, path, body, type) {
    var headers = { "x-api-key": sessionStorage.getItem(KEY) || "" };
    var init = { method: method, headers: headers, credentials: "omit", cache: "no-store" };
    if (body !== undefined) {
      headers["content-type"] = type || "application/json";
      init.body = type ? body : JSON.stringify(body);
    }
    var response = await fetch(path, init);
    var text = await response.text();
    var json = null;
    try { json = text ? JSON.parse(text) : null; } catch (e) { json = null; }
    if (!response.ok) {
      var error = (json && json.error) || {};
      var failure = new ApiError(response.status, error.code || "http_" + response.status,
        error.message || "The Worker answered " + response.status + ".");
      if (response.status === 401 && path !== "/admin/site") signOut("Your key is no longer valid: sign in again.");
      throw failure;
    }
    return json;
  }

  // ---- Sign in / out -------------------------------------------------------------------
  async function signIn(key) {
    sessionStorage.setItem(KEY, key);
    try {
      site = (await api("GET", "/admin/site")).site;
    } catch (e) {
      sessionStorage.removeItem(KEY);
      var message = e.status === 401
        ? "This key was refused. Paste the site's secret key (sk_…) exactly as it was shown; after a key rotation only the new one works."
        : e.status === 403
          ? "That is not a secret key: the console needs the site's secret key (sk_…), not its public key."
          : "Could not sign in: " + e.message;
      show($("signin-error"), message);
      return false;
    }
    if (site.config.public_key) sessionStorage.setItem(PK, site.config.public_key);
    $("signin").hidden = true;
    $("app").hidden = false;
    $("sign-out").hidden = false;
    show($("site-line"), site.name + " · " + site.template + " · " + site.id);
    fillAssistant();
    openTab(location.hash.slice(1) || "assistant");
    return true;
  }

  function signOut(message) {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(PK);
    site = null;
    $("app").hidden = true;
    $("sign-out").hidden = true;
    $("site-line").hidden = true;
    $("signin").hidden = false;
    $("signin-key").value = "";
    show($("signin-error"), message || "");
    var panel = $("try-panel");
    while (panel.firstChild) panel.removeChild(panel.firstChild);
  }

  // ---- Tabs ----------------------------------------------------------------------------
  var loaders = {
    knowledge: function () { loadDocuments(); loadData(); },
    try: setUpTry,
    conversations: loadConversations,
    install: fillInstall,
  };
  function openTab(name) {
    if (!$("tab-" + name)) name = "assistant";
    document.querySelectorAll(".tabs button").forEach(function (b) {
      b.setAttribute("aria-selected", String(b.dataset.tab === name));
    });
    document.querySelectorAll(".tab").forEach(function (t) { t.hidden = t.id !== "tab-" + name; });
    history.replaceState(null, "", "#" + name);
    if (loaders[name]) loaders[name]();
  }

  // ---- Field errors --------------------------------------------------------------------
  function clearErrors(form) {
    form.querySelectorAll(".field").forEach(function (f) {
      f.classList.remove("invalid");
      var p = f.querySelector(".ferr");
      if (p) p.textContent = "";
    });
    form.querySelectorAll(".error").forEach(function (e) { show(e, ""); });
  }
  function fieldError(form, field, message) {
    var node = form.querySelector('.field[data-field="' + field + '"]');
    if (!node) return false;
    node.classList.add("invalid");
    node.querySelector(".ferr").textContent = message;
    var input = node.querySelector("input, textarea, select");
    if (input) input.setAttribute("aria-invalid", "true");
    return true;
  }
  /** Put a server error next to the field its message names (`` `field` ``), else on top. */
  function serverError(form, e, general) {
    var named = /`([a-z_.]+)/.exec(e.message || "");
    var field = named && named[1];
    if (/^Not an origin/.test(e.message || "")) field = "allowed_origins";
    if (field && (fieldError(form, field, e.message) || fieldError(form, field.split(".")[0], e.message))) return;
    show(general, e.message);
  }

  // ---- Assistant -----------------------------------------------------------------------
  var TEMPLATE_SETTINGS = ["guarded", "knowledge", "rental"];
  var loaded = {};

  function splitPersona(persona) {
    var greeting = "";
    var rest = (persona || "").split("\n").filter(function (line) {
      var m = /^\s*Greeting:\s*(.*)$/.exec(line);
      if (m && !greeting) { greeting = m[1].trim(); return false; }
      return true;
    });
    return { greeting: greeting, body: rest.join("\n").trim() };
  }
  function guardedPatchShape(settings) {
    var copy = JSON.parse(JSON.stringify(settings || {}));
    if (copy.search) {
      var s = copy.search;
      copy.search = {};
      ["provider", "url", "timeout_ms"].forEach(function (k) { if (s[k] != null) copy.search[k] = s[k]; });
    }
    return copy;
  }

  function fillAssistant() {
    var c = site.config;
    var llm = c.llm || {};
    var persona = splitPersona(c.persona);
    loaded = {
      name: site.name, template: site.template, title: c.title || "", language: c.language || "vi",
      greeting: persona.greeting, persona: persona.body,
      starters: (c.starter_prompts || []).join("\n"), origins: (c.allowed_origins || []).join("\n"),
      provider: llm.provider || "", model: llm.model || "", base_url: llm.base_url || "",
      embed_base_url: llm.embed_base_url || "", embed_model: llm.embed_model || "",
      max_tokens: llm.max_tokens == null ? "" : String(llm.max_tokens),
      ftt: llm.first_token_timeout_ms == null ? "" : String(llm.first_token_timeout_ms),
      guarded: c.guarded ? JSON.stringify(guardedPatchShape(c.guarded), null, 2) : "",
      knowledge: c.knowledge ? JSON.stringify(c.knowledge, null, 2) : "",
      rental: c.rental ? JSON.stringify(c.rental, null, 2) : "",
    };
    $("f-name").value = loaded.name;
    $("f-template").value = loaded.template;
    $("f-title").value = loaded.title;
    $("f-language").value = loaded.language;
    $("f-greeting").value = loaded.greeting;
    $("f-persona").value = loaded.persona;
    $("f-starters").value = loaded.starters;
    $("f-origins").value = loaded.origins;
    $("f-provider").value = loaded.provider;
    $("f-model").value = loaded.model;
    $("f-base-url").value = loaded.base_url;
    $("f-embed-url").value = loaded.embed_base_url;
    $("f-embed-model").value = loaded.embed_model;
    $("f-max-tokens").value = loaded.max_tokens;
    $("f-ftt").value = loaded.ftt;
    $("f-api-key").value = "";
    $("f-clear-key").checked = false;
    $("api-key-state").textContent = site.llm_api_key_set ? "A key is stored (it is never shown)." : "No key stored.";
    TEMPLATE_SETTINGS.forEach(function (t) { $("f-" + t).value = loaded[t]; });
    showTemplateSettings();
  }
  function showTemplateSettings() {
    var template = $("f-template").value;
    var any = false;
    document.querySelectorAll("#template-settings .field").forEach(function (f) {
      f.hidden = f.dataset.template !== template;
      any = any || !f.hidden;
    });
    $("no-template-settings").hidden = any;
  }

  async function saveAssistant(event) {
    event.preventDefault();
    var form = $("assistant-form");
    clearErrors(form);
    $("assistant-saved").textContent = "";
    var patch = {
      name: $("f-name").value.trim(),
      title: $("f-title").value.trim(),
      language: $("f-language").value,
      starter_prompts: lines($("f-starters").value),
      allowed_origins: lines($("f-origins").value),
    };
    var ok = true;
    if (!patch.name) ok = !fieldError(form, "name", "The site needs a name.");
    if (patch.starter_prompts.length > 6) ok = !fieldError(form, "starter_prompts", "At most 6 starter prompts.");
    if ($("f-template").value !== loaded.template) patch.template = $("f-template").value;
    var greeting = $("f-greeting").value.trim();
    var persona = $("f-persona").value.trim();
    if (/\n/.test(greeting)) ok = !fieldError(form, "greeting", "The greeting is one line.");
    patch.persona = (greeting ? "Greeting: " + greeting + (persona ? "\n" : "") : "") + persona;
    // The LLM settings are replaced whole: sent only when one of them changed.
    var llmFields = { provider: "f-provider", model: "f-model", base_url: "f-base-url",
      embed_base_url: "f-embed-url", embed_model: "f-embed-model", max_tokens: "f-max-tokens", ftt: "f-ftt" };
    var llmChanged = $("f-api-key").value !== "" || $("f-clear-key").checked ||
      Object.keys(llmFields).some(function (k) { return $(llmFields[k]).value.trim() !== loaded[k]; });
    if (llmChanged) {
      var llm = {};
      ["provider", "model", "base_url", "embed_base_url", "embed_model"].forEach(function (k) {
        var v = $(llmFields[k]).value.trim();
        if (v) llm[k] = v;
      });
      var numbers = { max_tokens: "max_tokens", first_token_timeout_ms: "ftt" };
      Object.keys(numbers).forEach(function (k) {
        var v = $(llmFields[numbers[k]]).value.trim();
        if (!v) return;
        if (!/^\d+$/.test(v)) ok = !fieldError(form, "llm." + k, "A whole number.");
        else llm[k] = Number(v);
      });
      if ($("f-api-key").value) llm.api_key = $("f-api-key").value.trim();
      else if ($("f-clear-key").checked) llm.api_key = "";
      patch.llm = llm;
    }
    var template = $("f-template").value;
    TEMPLATE_SETTINGS.forEach(function (t) {
      var text = $("f-" + t).value.trim();
      if (t !== template || text === loaded[t].trim() || !text) return;
      try {
        var value = JSON.parse(text);
        if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("a JSON object");
        patch[t] = value;
      } catch (e) {
        ok = !fieldError(form, t, "Not valid JSON (" + e.message + ").");
      }
    });
    if (!ok) return;
    try {
      site = (await api("PATCH", "/admin/site", patch)).site;
      fillAssistant();
      show($("site-line"), site.name + " · " + site.template + " · " + site.id);
      $("assistant-saved").textContent = "Saved.";
    } catch (e) {
      serverError(form, e, $("assistant-error"));
    }
  }

  // ---- Knowledge documents -------------------------------------------------------------
  var docsTimer = null;
  async function loadDocuments() {
    clearTimeout(docsTimer);
    var body = $("docs-table").tBodies[0];
    var documents;
    try {
      documents = (await api("GET", "/admin/knowledge")).documents || [];
    } catch (e) {
      $("docs-status").textContent = "Could not list the documents: " + e.message;
      return;
    }
    while (body.firstChild) body.removeChild(body.firstChild);
    documents.forEach(function (d) {
      // The API says `done`; merchants read "indexed".
      var status = d.index_status === "done" ? "indexed" : d.index_status || "pending";
      var row = el("tr", { "data-doc": d.id },
        el("td", { text: d.id }), el("td", { text: d.title || "" }), el("td", { text: d.scope || "" }),
        el("td", { text: d.department || "" }),
        el("td", {}, el("span", { class: "status " + status, "data-status": status, text: status })),
        el("td", { text: when(d.updated_at) }),
        el("td", { class: "actions-cell" },
          button("Edit", function () { editDocument(d); }, "quiet small"),
          " ", button("Delete", function () { deleteDocument(d.id); }, "danger small")));
      body.appendChild(row);
    });
    var pending = documents.filter(function (d) { return d.index_status === "pending"; }).length;
    $("docs-status").textContent = documents.length + " document(s)" + (pending ? ", " + pending + " being indexed…" : ".");
    if (pending && !$("tab-knowledge").hidden) docsTimer = setTimeout(loadDocuments, 1500);
  }
  function button(label, onClick, cls) {
    var b = el("button", { type: "button", class: cls || "", text: label });
    b.addEventListener("click", onClick);
    return b;
  }
  function editDocument(d) {
    $("d-id").value = d.id;
    $("d-title").value = d.title || "";
    $("d-scope").value = d.scope || "public";
    $("d-department").value = d.department || "general";
    $("d-url").value = d.url || "";
    $("d-content").value = "";
    $("d-content").placeholder = "Paste the document's full text: saving replaces it and indexes it again.";
    $("d-content").focus();
  }
  async function deleteDocument(id) {
    if (!window.confirm("Delete the document " + id + " and its index entries?")) return;
    try {
      await api("DELETE", "/admin/knowledge/" + encodeURIComponent(id));
    } catch (e) {
      $("docs-status").textContent = e.message;
    }
    loadDocuments();
  }
  async function saveDocument(event) {
    event.preventDefault();
    var form = $("doc-form");
    clearErrors(form);
    var id = $("d-id").value.trim();
    if (!/^[A-Za-z0-9_.-]{1,40}$/.test(id)) {
      fieldError(form, "id", "1 to 40 letters, digits, '_', '-' or '.'.");
      return;
    }
    var doc = { title: $("d-title").value.trim(), content: $("d-content").value,
      scope: $("d-scope").value, department: $("d-department").value.trim() || "general" };
    if ($("d-url").value.trim()) doc.url = $("d-url").value.trim();
    if (!doc.content.trim()) {
      fieldError(form, "content", "The document needs content.");
      return;
    }
    try {
      await api("PUT", "/admin/knowledge/" + encodeURIComponent(id), doc);
      form.reset();
      $("d-department").value = "general";
      loadDocuments();
    } catch (e) {
      serverError(form, e, $("doc-error"));
    }
  }

  // ---- Data sets (analyst) -------------------------------------------------------------
  async function loadData() {
    var body = $("data-table").tBodies[0];
    var sets;
    try {
      var answer = await api("GET", "/admin/data");
      sets = (answer && (answer.data || answer.datasets || answer.connections)) || [];
    } catch (e) {
      $("data-status").textContent = e.status === 404
        ? "Data sets are not available on this Worker yet."
        : "Could not list the data sets: " + e.message;
      return;
    }
    while (body.firstChild) body.removeChild(body.firstChild);
    sets.forEach(function (d) {
      var columns = (d.columns || []).map(function (c) {
        return typeof c === "string" ? c : c.name + " (" + c.type + ")";
      }).join(", ");
      body.appendChild(el("tr", { "data-set": d.name },
        el("td", { text: d.name }), el("td", { text: d.user_id || "" }),
        el("td", { text: String(d.row_count == null ? "" : d.row_count) }),
        el("td", { class: "columns", text: columns }),
        el("td", {}, button("Delete", function () { deleteData(d.name); }, "danger small"))));
    });
    $("data-status").textContent = sets.length + " data set(s).";
  }
  async function deleteData(name) {
    if (!window.confirm("Delete the data set " + name + "?")) return;
    try { await api("DELETE", "/admin/data/" + encodeURIComponent(name)); } catch (e) { $("data-status").textContent = e.message; }
    loadData();
  }
  async function uploadData(event) {
    event.preventDefault();
    var form = $("data-form");
    clearErrors(form);
    var name = $("ds-name").value.trim();
    var file = $("ds-file").files[0];
    var ok = true;
    if (!name) ok = !fieldError(form, "name", "Name the data set.");
    if (!$("ds-user").value.trim()) ok = !fieldError(form, "user_id", "Whose data this is (the user id).");
    if (!file) ok = !fieldError(form, "file", "Choose a CSV file.");
    if (!ok) return;
    var query = "?user_id=" + encodeURIComponent($("ds-user").value.trim());
    if ($("ds-description").value.trim()) query += "&description=" + encodeURIComponent($("ds-description").value.trim());
    try {
      await api("PUT", "/admin/data/" + encodeURIComponent(name) + query, await file.text(), "text/csv");
      form.reset();
      loadData();
    } catch (e) {
      serverError(form, e, $("data-error"));
    }
  }

  // ---- Records -------------------------------------------------------------------------
  function parseWarranty(text) {
    return lines(text).filter(function (l, i) { return !(i === 0 && /^serial\s*,/i.test(l)); }).map(function (l, i) {
      var cells = l.split(",").map(function (c) { return c.trim(); });
      if (cells.length !== 3) throw new Error("Line " + (i + 1) + ": serial,product,warranty_until");
      return { serial: cells[0], product: cells[1], warranty_until: cells[2] };
    });
  }
  async function uploadRecords(event) {
    event.preventDefault();
    var kind = $("r-kind").value;
    var text = $("r-body").value;
    show($("records-error"), "");
    $("records-done").textContent = "";
    try {
      var answer;
      if (kind === "warranty") answer = await api("POST", "/admin/warranty", { records: parseWarranty(text) });
      else if (kind === "rental") answer = await api("PUT", "/admin/rental/" + encodeURIComponent($("r-entity").value.trim()), JSON.parse(text));
      else if (kind === "pages") answer = await api("PUT", "/admin/search-pages", JSON.parse(text));
      else answer = await api("PUT", "/admin/logs", text, "application/x-ndjson");
      $("records-done").textContent = "Uploaded: " + JSON.stringify(answer);
    } catch (e) {
      show($("records-error"), e.message);
    }
  }

  // ---- Try it --------------------------------------------------------------------------
  function publicKey() {
    return (site && site.config.public_key) || sessionStorage.getItem(PK) || "";
  }
  function setUpTry() {
    var origins = site.config.allowed_origins || [];
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
      "data-lang": site.config.language || "vi", "data-console-embed": "" });
    tag.async = true;
    document.body.appendChild(tag);
    window.addEventListener("concierge:message", onTryMessage);
  }
  async function allowConsoleOrigin() {
    var origins = (site.config.allowed_origins || []).concat([location.origin]);
    try {
      site = (await api("PATCH", "/admin/site", { allowed_origins: origins })).site;
      fillAssistant();
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
    return '<script src="' + location.origin + '/embed.js" data-site-key="' + (publicKey() || "pk_…") + '" async></script>';
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
    var allowed = (site.config.allowed_origins || []).includes(origin);
    out.className = allowed ? "ok" : "error";
    out.textContent = allowed
      ? "Allowed: the widget works on pages of " + origin + "."
      : "Not allowed: add " + origin + " to the allowed origins (Assistant tab), or the widget refuses to run there.";
  }

  // ---- Keys ----------------------------------------------------------------------------
  async function rotateKeys() {
    show($("rotate-error"), "");
    try {
      var keys = await api("POST", "/admin/site/rotate-keys");
      signOut("");
      $("new-public-key").textContent = keys.public_key;
      $("new-secret-key").textContent = keys.secret_key;
      $("new-keys").hidden = false;
      show($("signin-error"), "Keys rotated: you are signed out.");
    } catch (e) {
      show($("rotate-error"), e.message);
    }
  }

  // ---- Wiring --------------------------------------------------------------------------
  document.addEventListener("DOMContentLoaded", function () {
    $("signin-form").addEventListener("submit", function (event) {
      event.preventDefault();
      $("new-keys").hidden = true;
      show($("signin-error"), "");
      var key = $("signin-key").value.trim();
      if (!key) return;
      signIn(key);
    });
    $("sign-out").addEventListener("click", function () { signOut(""); });
    document.querySelectorAll(".tabs button").forEach(function (b) {
      b.addEventListener("click", function () { openTab(b.dataset.tab); });
    });
    $("assistant-form").addEventListener("submit", saveAssistant);
    $("f-template").addEventListener("change", showTemplateSettings);
    $("doc-form").addEventListener("submit", saveDocument);
    $("reindex-all").addEventListener("click", async function () {
      try {
        var queued = (await api("POST", "/admin/index")).queued;
        $("docs-status").textContent = queued + " document(s) queued for indexing.";
        setTimeout(loadDocuments, 1000);
      } catch (e) { $("docs-status").textContent = e.message; }
    });
    $("data-form").addEventListener("submit", uploadData);
    $("records-form").addEventListener("submit", uploadRecords);
    $("r-kind").addEventListener("change", function () { $("r-entity-field").hidden = $("r-kind").value !== "rental"; });
    $("try-allow").addEventListener("click", allowConsoleOrigin);
    $("try-key-use").addEventListener("click", function () {
      var key = $("try-key").value.trim();
      if (/^pk_[0-9a-f]+$/.test(key)) { sessionStorage.setItem(PK, key); setUpTry(); }
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
    $("rotate-confirm").addEventListener("change", function () { $("rotate").disabled = !$("rotate-confirm").checked; });
    $("rotate").addEventListener("click", rotateKeys);
    var key = sessionStorage.getItem(KEY);
    if (key) signIn(key);
  });
})();
