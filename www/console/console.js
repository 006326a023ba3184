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
  var t = window.ConsoleI18n.t;
  /** What the other console scripts share: helpers, the signed-in site, tab loaders. */
  // `site`: the live configuration (what visitors get); `draft`: the draft the Assistant tab
  // edits (GET /admin/site/draft: the live configuration when none is pending).
  var app = (window.ConciergeConsole = { site: null, draft: null, draftPending: false, loaders: {} });

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
    return ms ? new Date(Number(ms)).toLocaleString(window.ConsoleI18n.locale()) : "";
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
      if (response.status === 401 && path !== "/admin/site") signOut(t("Your key is no longer valid: sign in again."));
      throw failure;
    }
    return json;
  }

  // ---- Sign in / out -------------------------------------------------------------------
  async function signIn(key) {
    sessionStorage.setItem(KEY, key);
    try {
      app.site = (await api("GET", "/admin/site")).site;
    } catch (e) {
      sessionStorage.removeItem(KEY);
      var message = e.status === 401
        ? t("This key was refused. Paste the site's secret key (sk_…) exactly as it was shown; after a key rotation only the new one works.")
        : e.status === 403
          ? t("That is not a secret key: the console needs the site's secret key (sk_…), not its public key.")
          : t("Could not sign in: {message}", { message: e.message });
      show($("signin-error"), message);
      return false;
    }
    if (app.site.config.public_key) sessionStorage.setItem(PK, app.site.config.public_key);
    try {
      await loadDraft();
    } catch (e) {
      app.draft = null; // the form shows the live configuration
    }
    $("signin").hidden = true;
    $("app").hidden = false;
    $("sign-out").hidden = false;
    show($("site-line"), app.site.name + " · " + templateName(app.site.template));
    $("site-line").title = app.site.id;
    fillAssistant();
    openTab(location.hash.slice(1) || "overview");
    return true;
  }

  function signOut(message) {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(PK);
    app.site = null;
    app.draft = null;
    $("app").hidden = true;
    $("sign-out").hidden = true;
    $("site-line").hidden = true;
    $("signin").hidden = false;
    $("signin-key").value = "";
    show($("signin-error"), message || "");
    var panel = $("try-panel");
    while (panel.firstChild) panel.removeChild(panel.firstChild);
    // The next sign-in starts on the first tab, not where this one left off.
    currentTab = null;
    history.replaceState(null, "", location.pathname + location.search);
    document.dispatchEvent(new CustomEvent("console:signed-out"));
  }

  // ---- Tabs ----------------------------------------------------------------------------
  var currentTab = null;
  function openTab(name) {
    if (!$("tab-" + name)) name = "overview";
    currentTab = name;
    document.querySelectorAll(".tabs button").forEach(function (b) {
      b.setAttribute("aria-selected", String(b.dataset.tab === name));
    });
    document.querySelectorAll(".tab").forEach(function (t) { t.hidden = t.id !== "tab-" + name; });
    history.replaceState(null, "", "#" + name);
    if (app.loaders[name]) app.loaders[name]();
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

  // The templates in the console's words (the Conversations filter's).
  var TEMPLATE_NAMES = { shop: "Shop", guarded: "Support with guardrails", rental: "Room rental", knowledge: "Knowledge base", analyst: "Data analyst" };
  function templateName(name) {
    return TEMPLATE_NAMES[name] ? t(TEMPLATE_NAMES[name]) : name;
  }

  /** The copy buttons (`data-copy`: the id of the element whose text they copy). */
  async function copyText(button) {
    var source = $(button.dataset.copy);
    // What happened, beside the button (its name stays its label).
    var status = button.nextElementSibling && button.nextElementSibling.hasAttribute("data-copied")
      ? button.nextElementSibling : null;
    if (!status) {
      status = el("span", { class: "ok", role: "status", "data-copied": "" });
      button.after(status);
    }
    try {
      await navigator.clipboard.writeText(source.textContent);
      status.textContent = t("Copied.");
    } catch (e) {
      // No clipboard (permission, insecure page): select it for the merchant to copy.
      var range = document.createRange();
      range.selectNodeContents(source);
      var selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      status.textContent = t("Selected: press Ctrl+C.");
    }
    setTimeout(function () { status.textContent = ""; }, 4000);
  }

  // ---- Assistant -----------------------------------------------------------------------
  var TEMPLATE_SETTINGS = ["guarded", "knowledge", "rental", "analyst"];
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

  /** The draft from the Worker; the form and the draft bar show it. */
  async function loadDraft() {
    useDraft(await api("GET", "/admin/site/draft"));
  }
  /** A draft view (`{site, draft_pending, live_version}`) as the one shown. */
  function useDraft(view) {
    app.draft = view.site;
    app.draftPending = !!view.draft_pending;
    if (view.live_version != null && app.site) app.site.version = view.live_version;
    document.dispatchEvent(new CustomEvent("console:draft"));
  }

  function fillAssistant() {
    var shown = app.draft || app.site;
    var c = shown.config;
    var llm = c.llm || {};
    var persona = splitPersona(c.persona);
    loaded = {
      name: shown.name, template: shown.template, title: c.title || "", language: c.language || "vi",
      greeting: persona.greeting, persona: persona.body,
      starters: (c.starter_prompts || []).join("\n"), origins: (c.allowed_origins || []).join("\n"),
      provider: llm.provider || "", model: llm.model || "", base_url: llm.base_url || "",
      embed_base_url: llm.embed_base_url || "", embed_model: llm.embed_model || "",
      max_tokens: llm.max_tokens == null ? "" : String(llm.max_tokens),
      ftt: llm.first_token_timeout_ms == null ? "" : String(llm.first_token_timeout_ms),
      guarded: c.guarded ? JSON.stringify(guardedPatchShape(c.guarded), null, 2) : "",
      knowledge: c.knowledge ? JSON.stringify(c.knowledge, null, 2) : "",
      rental: c.rental ? JSON.stringify(c.rental, null, 2) : "",
      analyst: c.analyst ? JSON.stringify(c.analyst, null, 2) : "",
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
    $("api-key-state").textContent = shown.llm_api_key_set ? t("A key is stored (it is never shown).") : t("No key stored.");
    TEMPLATE_SETTINGS.forEach(function (t) { $("f-" + t).value = loaded[t]; });
    showTemplateSettings();
    showDefaults();
    if (app.handoffSettings) app.handoffSettings.fill(c.handoff);
  }
  // Each template's settings as a site without its own reads them
  // (GET /admin/template-defaults, read once): under each JSON box, and its placeholder.
  var defaults = null;
  async function showDefaults() {
    if (!defaults) {
      try {
        defaults = await api("GET", "/admin/template-defaults");
      } catch (e) {
        return; // the boxes work without them
      }
    }
    TEMPLATE_SETTINGS.forEach(function (name) {
      var text = defaults && defaults[name] ? JSON.stringify(defaults[name], null, 2) : "";
      var box = document.querySelector('details[data-defaults="' + name + '"]');
      box.querySelector("pre").textContent = text;
      box.hidden = !text;
      $("f-" + name).placeholder = text;
    });
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
    if (!patch.name) ok = !fieldError(form, "name", t("The site needs a name."));
    if (patch.starter_prompts.length > 6) ok = !fieldError(form, "starter_prompts", t("At most 6 starter prompts."));
    if ($("f-template").value !== loaded.template) patch.template = $("f-template").value;
    var greeting = $("f-greeting").value.trim();
    var persona = $("f-persona").value.trim();
    if (/\n/.test(greeting)) ok = !fieldError(form, "greeting", t("The greeting is one line."));
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
        if (!/^\d+$/.test(v)) ok = !fieldError(form, "llm." + k, t("A whole number."));
        else llm[k] = Number(v);
      });
      if ($("f-api-key").value) llm.api_key = $("f-api-key").value.trim();
      else if ($("f-clear-key").checked) llm.api_key = "";
      patch.llm = llm;
    }
    var template = $("f-template").value;
    TEMPLATE_SETTINGS.forEach(function (name) {
      var text = $("f-" + name).value.trim();
      if (name !== template || text === loaded[name].trim() || !text) return;
      try {
        var value = JSON.parse(text);
        if (!value || typeof value !== "object" || Array.isArray(value)) throw new Error("a JSON object");
        patch[name] = value;
      } catch (e) {
        ok = !fieldError(form, name, t("Not valid JSON ({message}).", { message: e.message }));
      }
    });
    // "Talk to a person" (www/console/console-handoff.js): sent whole, when changed.
    if (app.handoffSettings && !app.handoffSettings.patch(form, patch)) ok = false;
    if (!ok) return;
    try {
      // Saved to the draft: Try it runs it; visitors get it once it is published.
      useDraft(await api("PATCH", "/admin/site/draft", patch));
      fillAssistant();
      $("assistant-saved").textContent = t("Saved.");
    } catch (e) {
      serverError(form, e, $("assistant-error"));
    }
  }

  function button(label, onClick, cls) {
    var b = el("button", { type: "button", class: cls || "", text: label });
    b.addEventListener("click", onClick);
    return b;
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
    } catch (e) {
      show($("rotate-error"), e.message);
    }
  }


  Object.assign(app, { t: t, $: $, el: el, show: show, when: when, lines: lines, api: api, button: button,
    clearErrors: clearErrors, fieldError: fieldError, serverError: serverError, fillAssistant: fillAssistant,
    loadDraft: loadDraft, useDraft: useDraft, PK: PK, openTab: openTab, templateName: templateName });

  // ---- Wiring (after every console script ran: they are deferred) ----------------------
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
    document.querySelectorAll("button[data-copy]").forEach(function (b) {
      b.addEventListener("click", function () { copyText(b); });
    });
    document.querySelectorAll(".tabs button").forEach(function (b) {
      b.addEventListener("click", function () { openTab(b.dataset.tab); });
    });
    $("assistant-form").addEventListener("submit", saveAssistant);
    $("f-template").addEventListener("change", showTemplateSettings);
    $("rotate-confirm").addEventListener("change", function () { $("rotate").disabled = !$("rotate-confirm").checked; });
    $("rotate").addEventListener("click", rotateKeys);
    // Another language: the open tab is drawn again in it.
    document.addEventListener("console:language", function () {
      if (!app.site) return;
      $("api-key-state").textContent = (app.draft || app.site).llm_api_key_set ? t("A key is stored (it is never shown).") : t("No key stored.");
      if (currentTab && app.loaders[currentTab]) app.loaders[currentTab]();
    });
    var key = sessionStorage.getItem(KEY);
    if (key) signIn(key);
  });
})();
