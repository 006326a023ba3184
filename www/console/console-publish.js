// Concierge console: the draft and the live configuration (issue 42). The Assistant tab
// edits the draft (console.js); this card says whether it differs from what is live,
// publishes it — past the publish gate when the site has test cases: both runs with their
// progress, the pass rates, and the cases that regress named before a confirmation — and
// lists the versions that went live, each with Restore.
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
    var over = v.regressions && v.regressions.regressions ? v.regressions.regressions.length : 0;
    return t("Version {n}", { n: v.version }) + " · " + how + " · " + when(v.published_at) +
      (over ? " · " + t("published over {n} failing cases", { n: over }) : "") +
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

  function sleep(ms) { return new Promise(function (done) { setTimeout(done, ms); }); }

  // The publish gate: both runs started, their progress shown until both are finished,
  // then the comparison (pass rates, the cases that regress).
  async function runGate() {
    var gate = await api("POST", "/admin/publish/check");
    $("gate-rates").textContent = "";
    var bar = $("gate-progress");
    for (;;) {
      var runs = await Promise.all([
        api("GET", "/admin/tests/runs/" + gate.draft_run),
        api("GET", "/admin/tests/runs/" + gate.live_run),
      ]);
      var done = runs[0].done + runs[1].done, total = runs[0].total + runs[1].total;
      bar.max = total;
      bar.value = done;
      $("gate-status").textContent = t("Running the tests: {done} of {total}", { done: done, total: total });
      $("gate").hidden = false;
      if (runs[0].finished && runs[1].finished) break;
      await sleep(500);
    }
    var url = "/admin/tests/compare?draft_run=" + encodeURIComponent(gate.draft_run) +
      "&live_run=" + encodeURIComponent(gate.live_run);
    gate.compared = await api("GET", url);
    var c = gate.compared;
    $("gate-rates").textContent = t("Draft passes {d} of {n}; live passes {l} of {m}.",
      { d: c.draft.passed, n: c.draft.total, l: c.live.passed, m: c.live.total });
    return gate;
  }

  var pendingGate = null;

  async function publish(confirmed) {
    show($("publish-error"), "");
    $("publish-result").textContent = "";
    $("gate-regressions").hidden = true;
    try {
      var note = $("publish-note").value.trim();
      var body = note ? { note: note } : {};
      var gate = confirmed === true ? pendingGate : null;
      if (!gate && (await api("GET", "/admin/tests")).count > 0) gate = await runGate();
      if (gate) {
        body.draft_run = gate.draft_run;
        body.live_run = gate.live_run;
        if (gate.compared.regressions.length && confirmed !== true) {
          pendingGate = gate;
          var list = $("gate-regression-list");
          while (list.firstChild) list.removeChild(list.firstChild);
          gate.compared.regressions.forEach(function (r) { list.appendChild(el("li", { text: r.name })); });
          $("gate-regressions").hidden = false;
          $("gate-confirm").focus();
          return;
        }
        if (confirmed === true) body.confirm_regressions = true;
      }
      pendingGate = null;
      var answer = await api("POST", "/admin/publish", body);
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

  // The test cases: how many, and a run against the draft or live with its progress and
  // each case's result (the failed check, the rubric's verdict).
  async function countTests() {
    try {
      var list = await api("GET", "/admin/tests");
      $("tests-count").textContent = t("{n} test cases (at most 100). Make one from any answer in Conversations.", { n: list.count });
      $("run-draft").disabled = $("run-live").disabled = list.count === 0;
    } catch (e) {
      show($("tests-error"), e.message);
    }
  }

  async function runTests(target) {
    show($("tests-error"), "");
    var results = $("run-results");
    $("run-draft").disabled = $("run-live").disabled = true;
    try {
      var run = await api("POST", "/admin/tests/runs", { target: target });
      for (;;) {
        $("run-progress").max = run.total;
        $("run-progress").value = run.done;
        $("run-status").textContent = t("{done} of {total} done: {passed} passed", run);
        $("run-line").hidden = false;
        while (results.firstChild) results.removeChild(results.firstChild);
        run.results.forEach(function (r) {
          if (r.status === "pending") return;
          var status = { passed: "Passed", failed: "Failed" }[r.status] || "Not run (error)";
          var text = r.name + " · " + t(status) + (r.failed ? " · " + r.failed : "") + (r.verdict ? " · " + r.verdict : "");
          results.appendChild(el("li", { "data-status": r.status, text: text }));
        });
        if (run.finished) break;
        await sleep(500);
        run = await api("GET", "/admin/tests/runs/" + run.id);
      }
    } catch (e) {
      show($("tests-error"), e.message);
    }
    $("run-draft").disabled = $("run-live").disabled = false;
  }

  var fillAssistantTab = app.loaders.assistant;
  app.loaders.assistant = function () {
    if (fillAssistantTab) fillAssistantTab();
    fillState();
    loadVersions();
    countTests();
  };
  $("run-draft").addEventListener("click", function () { runTests("draft"); });
  $("run-live").addEventListener("click", function () { runTests("live"); });
  document.addEventListener("console:draft", fillState);
  $("publish").addEventListener("click", function () { publish(false); });
  $("gate-confirm").addEventListener("click", function () { publish(true); });
  $("gate-cancel").addEventListener("click", function () {
    pendingGate = null;
    $("gate-regressions").hidden = true;
    $("publish").focus();
  });
  $("discard-draft").addEventListener("click", discard);
})();
