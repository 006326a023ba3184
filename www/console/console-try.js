// Concierge console: try the assistant inline (anonymously or as a chosen user), install
// the widget. (Conversations: console-review.js.)
// Loaded after console.js, whose helpers it uses (window.ConciergeConsole).
(function () {
  "use strict";
  var app = window.ConciergeConsole;
  var t = app.t, $ = app.$, el = app.el, show = app.show, when = app.when, lines = app.lines, api = app.api,
    button = app.button, clearErrors = app.clearErrors, fieldError = app.fieldError, serverError = app.serverError;
  var asUser = null; // {user_id, role, permissions, department} Try it speaks for, or null

  // ---- Try it --------------------------------------------------------------------------
  function publicKey() {
    return (app.site && app.site.config.public_key) || sessionStorage.getItem(app.PK) || "";
  }
  async function setUpTry() {
    var origins = app.site.config.allowed_origins || [];
    var key = publicKey();
    var blocked = $("try-blocked");
    if (!origins.includes(location.origin)) {
      blocked.hidden = false;
      $("try-allow").hidden = false;
      $("try-key-field").hidden = true;
      $("try-blocked-text").textContent = t("The chat panel runs only on pages of the site's allowed origins. To try it here, allow this console's origin ({origin}): its pages can then use the site's public key too.", { origin: location.origin });
      return;
    }
    if (!key) {
      blocked.hidden = false;
      $("try-allow").hidden = true;
      $("try-key-field").hidden = false;
      $("try-blocked-text").textContent = t("This site was created before the console kept its public key: paste it (or rotate the keys).");
      return;
    }
    blocked.hidden = true;
    if (window.Concierge || document.querySelector('script[data-console-embed]')) return;
    // Try it runs the draft: the panel gets a draft key (a public key for the draft, from
    // the secret key; never the secret key itself). Visitors' panels have the public key.
    var draftKey;
    try {
      draftKey = (await api("POST", "/admin/site/draft/key")).draft_key;
    } catch (e) {
      $("try-blocked-text").textContent = e.message;
      blocked.hidden = false;
      return;
    }
    if (window.Concierge || document.querySelector('script[data-console-embed]')) return;
    var tag = el("script", { src: "/embed.js", "data-site-key": draftKey, "data-inline": "#try-panel",
      "data-lang": (app.draft || app.site).config.language || "vi", "data-console-embed": "" });
    tag.async = true;
    document.body.appendChild(tag);
    window.addEventListener("concierge:message", onTryMessage);
  }
  async function allowConsoleOrigin() {
    var origins = (app.site.config.allowed_origins || []).concat([location.origin]);
    try {
      // The live origins (the panel needs them to run at all); a pending draft takes the
      // same change.
      app.site = (await api("PATCH", "/admin/site", { allowed_origins: origins })).site;
      await app.loadDraft();
      app.fillAssistant();
      await setUpTry();
    } catch (e) {
      $("try-blocked-text").textContent = e.message;
    }
  }
  async function onTryMessage(event) {
    var detail = event.detail || {};
    if (detail.role !== "user" || !$("show-retrieval").checked) return;
    var out = $("retrieval");
    while (out.firstChild) out.removeChild(out.firstChild);
    out.appendChild(el("p", { class: "hint", text: t("Retrieval for: {text}", { text: detail.content }) }));
    try {
      var results = (await api("POST", "/admin/search", { query: detail.content })).results || [];
      if (!results.length) out.appendChild(el("p", { text: t("Nothing found.") }));
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

  // ---- Try it as a user -----------------------------------------------------------------
  // The Worker signs a short-lived user token with the site's user-token secret (which
  // never leaves it); the panel gets only that token, through the loader's identify().
  function identify(token) {
    if (window.Concierge && window.Concierge.identify) window.Concierge.identify(token || "");
  }
  async function mintToken() {
    if (!asUser) return;
    var answer;
    try {
      answer = await api("POST", "/admin/try-token", asUser);
    } catch (e) {
      if (e.status === 409) $("try-secret").hidden = false;
      else serverError($("try-as"), e, $("try-as-error"));
      $("try-as-state").textContent = "";
      return;
    }
    $("try-secret").hidden = true;
    identify(answer.user_token);
    var until = new Date(answer.expires_at * 1000).toLocaleTimeString(window.ConsoleI18n.locale());
    $("try-as-state").textContent = t("Speaking as {user} until {time}.", { user: answer.user_id, time: until });
  }
  async function useUser(event) {
    event.preventDefault();
    var form = $("try-as");
    clearErrors(form);
    var user = $("as-user").value.trim();
    if (!user) { useAnonymous(); return; }
    if (user.length > 128) { fieldError(form, "user_id", t("The user id, 1 to 128 characters.")); return; }
    asUser = { user_id: user };
    if ($("as-role").value.trim()) asUser.role = $("as-role").value.trim();
    var permissions = $("as-permissions").value.split(",").map(function (p) { return p.trim(); }).filter(Boolean);
    if (permissions.length) asUser.permissions = permissions;
    if ($("as-department").value.trim()) asUser.department = $("as-department").value.trim();
    await mintToken();
  }
  function useAnonymous() {
    clearErrors($("try-as"));
    asUser = null;
    $("as-user").value = "";
    $("try-secret").hidden = true;
    identify("");
    $("try-as-state").textContent = t("Speaking as an anonymous visitor.");
  }
  async function createSecret() {
    try {
      var answer = await api("POST", "/admin/site/user-token-secret");
      $("try-secret-value").textContent = answer.user_token_secret;
      $("try-secret-shown").hidden = false;
      $("try-secret-intro").hidden = true;
      $("try-secret-create").hidden = true;
      app.site.user_token_secret_set = true;
      await mintToken();
      $("try-secret").hidden = false; // keep the one-time secret in view
    } catch (e) {
      show($("try-as-error"), e.message);
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
      out.textContent = t("Not a web page URL (https://…).");
      return;
    }
    var allowed = (app.site.config.allowed_origins || []).includes(origin);
    out.className = allowed ? "ok" : "error";
    out.textContent = allowed
      ? t("Allowed: the widget works on pages of {origin}.", { origin: origin })
      : t("Not allowed: add {origin} to the allowed origins (Assistant tab), or the widget refuses to run there.", { origin: origin });
  }


  app.loaders.try = setUpTry;
  app.loaders.install = fillInstall;
  $("try-allow").addEventListener("click", allowConsoleOrigin);
  $("try-as").addEventListener("submit", useUser);
  $("as-anonymous").addEventListener("click", useAnonymous);
  $("try-secret-create").addEventListener("click", createSecret);
  $("try-key-use").addEventListener("click", function () {
    var key = $("try-key").value.trim();
    if (/^pk_[0-9a-f]+$/.test(key)) { sessionStorage.setItem(app.PK, key); setUpTry(); }
  });
  // Ticked with nothing found yet: say what will show there.
  function retrievalEmpty() {
    $("retrieval-empty").hidden = !$("show-retrieval").checked || $("retrieval").childNodes.length > 0;
  }
  $("show-retrieval").addEventListener("change", retrievalEmpty);
  new MutationObserver(retrievalEmpty).observe($("retrieval"), { childList: true });
  $("copy-snippet").addEventListener("click", async function () {
    try {
      await navigator.clipboard.writeText(snippet());
      $("copied").textContent = t("Copied.");
    } catch (e) {
      $("copied").textContent = t("Select the tag and copy it.");
    }
  });
  $("origin-check").addEventListener("submit", checkOrigin);
  $("i-color").addEventListener("input", fillInstall);
  $("i-position").addEventListener("change", fillInstall);
})();
