// Concierge console: the draft and the live configuration (issue 42). The Assistant tab
// edits the draft (console.js); this card says whether it differs from what is live,
// publishes it, and lists the versions that went live, each with Restore.
// Loaded after console.js, whose helpers it uses (window.ConciergeConsole).
(function () {
  "use strict";
  var app = window.ConciergeConsole;
  var t = app.t, $ = app.$, el = app.el, show = app.show, when = app.when, api = app.api;

  function fillState() {
    var state = $("draft-state");
    if (!app.site) return;
    var version = app.site.version;
    if (app.draftPending) {
      state.className = "status draft";
      state.textContent = t("Draft: not published (live: version {n})", { n: version });
    } else {
      state.className = "status live";
      state.textContent = t("Live: version {n}, no unpublished changes", { n: version });
    }
    $("publish").disabled = !app.draftPending;
    $("discard-draft").disabled = !app.draftPending;
  }

  function describe(v) {
    var how = {
      created: t("created"), edited: t("changed directly"), published: t("published"),
      restored: t("restored from version {n}", { n: v.restored_from }), migrated: t("before versions"),
    }[v.source] || v.source;
    return t("Version {n}", { n: v.version }) + " · " + how + " · " + when(v.published_at) +
      (v.note ? " · " + v.note : "");
  }

  async function loadVersions() {
    var list = $("versions");
    var answer;
    try {
      answer = await api("GET", "/admin/versions");
    } catch (e) {
      show($("publish-error"), e.message);
      return;
    }
    app.site.version = answer.live_version;
    app.draftPending = answer.draft_pending;
    fillState();
    while (list.firstChild) list.removeChild(list.firstChild);
    answer.versions.forEach(function (v) {
      var item = el("li", { "data-version": String(v.version) }, el("span", { class: "meta", text: describe(v) }));
      if (v.live) {
        item.appendChild(el("span", { class: "status live", text: t("Live") }));
      } else {
        var restore = app.button(t("Restore"), function () { restoreVersion(v.version); }, "small quiet");
        restore.setAttribute("aria-label", t("Restore version {n}", { n: v.version }));
        item.appendChild(restore);
      }
      list.appendChild(item);
    });
  }

  async function refresh() {
    await app.loadDraft();
    app.fillAssistant();
    await loadVersions();
  }

  async function publish() {
    show($("publish-error"), "");
    $("publish-result").textContent = "";
    try {
      var note = $("publish-note").value.trim();
      var answer = await api("POST", "/admin/publish", note ? { note: note } : {});
      app.site = answer.site;
      $("publish-note").value = "";
      await refresh();
      $("publish-result").textContent = t("Published: version {n} is live.", { n: answer.version });
    } catch (e) {
      show($("publish-error"), e.message);
    }
  }

  async function discard() {
    show($("publish-error"), "");
    $("publish-result").textContent = "";
    try {
      app.useDraft(await api("DELETE", "/admin/site/draft"));
      app.fillAssistant();
      await loadVersions();
      $("publish-result").textContent = t("The draft was discarded.");
    } catch (e) {
      show($("publish-error"), e.message);
    }
  }

  async function restoreVersion(n) {
    show($("publish-error"), "");
    $("publish-result").textContent = "";
    try {
      var answer = await api("POST", "/admin/versions/" + n + "/restore", {});
      app.site = answer.site;
      await refresh();
      $("publish-result").textContent = t("Version {n} restored: live as version {m}.", { n: n, m: answer.version });
    } catch (e) {
      show($("publish-error"), e.message);
    }
  }

  var fillAssistantTab = app.loaders.assistant;
  app.loaders.assistant = function () {
    if (fillAssistantTab) fillAssistantTab();
    fillState();
    loadVersions();
  };
  document.addEventListener("console:draft", fillState);
  $("publish").addEventListener("click", publish);
  $("discard-draft").addEventListener("click", discard);
})();
