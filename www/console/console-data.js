// Concierge console: knowledge documents, data sets (analyst), learned queries (rental) and
// records uploads.
// Loaded after console.js, whose helpers it uses (window.ConciergeConsole).
(function () {
  "use strict";
  var app = window.ConciergeConsole;
  var t = app.t, $ = app.$, el = app.el, show = app.show, when = app.when, lines = app.lines, api = app.api,
    button = app.button, clearErrors = app.clearErrors, fieldError = app.fieldError, serverError = app.serverError;

  // ---- Storage: the site's usage against its caps (GET /admin/usage) --------------------
  var USAGE_LABELS = {
    data_sets: "Data sets", data_rows: "Rows in data sets", data_bytes: "Size of data sets",
    documents: "Knowledge documents", document_bytes: "Size of documents",
    warranty_records: "Warranty records", listings: "Listings: {table}"
  };
  var BYTE_KINDS = { data_bytes: true, document_bytes: true };
  function number(n, digits) {
    return new Intl.NumberFormat(window.ConsoleI18n.locale(), { maximumFractionDigits: digits || 0 }).format(n);
  }
  /** Bytes as the merchant reads them: KB under 1 MB, else MB (one decimal at most). */
  function bytes(n) {
    return n < 1048576 ? number(n / 1024, 1) + " KB" : number(n / 1048576, 1) + " MB";
  }
  async function loadUsage() {
    var body = $("usage-table").tBodies[0];
    var usage;
    try {
      usage = (await api("GET", "/admin/usage")).usage || [];
    } catch (e) {
      $("usage-status").textContent = t("Could not read the storage use: {error}", { error: e.message });
      return;
    }
    while (body.firstChild) body.removeChild(body.firstChild);
    var full = 0;
    usage.forEach(function (u) {
      var shown = BYTE_KINDS[u.kind] ? bytes : function (n) { return number(n); };
      var share = u.cap ? Math.min(100, (u.used / u.cap) * 100) : 0;
      if (u.cap && u.used >= u.cap) full++;
      body.appendChild(el("tr", { "data-usage": u.kind + (u.entity ? ":" + u.entity : "") },
        el("td", { "data-label": t("What"), text: t(USAGE_LABELS[u.kind] || u.kind, { table: u.entity || "" }) }),
        el("td", { "data-label": t("Used"), text: shown(u.used) }),
        el("td", { "data-label": t("Cap"), text: shown(u.cap) }),
        el("td", { "data-label": t("Share") },
          el("meter", { min: "0", max: "100", value: String(share), "aria-label": t(USAGE_LABELS[u.kind] || u.kind, { table: u.entity || "" }) }),
          " " + number(share, 1) + " %")));
    });
    $("usage-status").textContent = full
      ? t("{n} cap(s) reached: delete something before adding more.", { n: full })
      : "";
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
        el("td", { "data-label": "Id", text: d.id }), el("td", { "data-label": "Title", text: d.title || "" }),
        el("td", { "data-label": "Scope", text: d.scope || "" }),
        el("td", { "data-label": "Department", text: d.department || "" }),
        el("td", { "data-label": "Status" }, el("span", { class: "status " + status, "data-status": status, text: t(status) })),
        el("td", { "data-label": "Updated", text: when(d.updated_at) }),
        el("td", { class: "actions-cell" },
          button(t("Edit"), function () { editDocument(d.id); }, "quiet small"),
          " ", button(t("Re-index"), function () { reindex(d.id); }, "quiet small"),
          " ", button(t("Delete"), function () { deleteDocument(d.id); }, "danger small")));
      body.appendChild(row);
    });
    var pending = documents.filter(function (d) { return d.index_status === "pending"; }).length;
    $("docs-status").textContent = pending
      ? t("{n} document(s), {pending} being indexed…", { n: documents.length, pending: pending })
      : t("{n} document(s).", { n: documents.length });
    if (pending && !$("tab-knowledge").hidden) docsTimer = setTimeout(loadDocuments, 1500);
  }
  async function editDocument(id) {
    var d;
    try {
      d = (await api("GET", "/admin/knowledge/" + encodeURIComponent(id))).document;
    } catch (e) {
      $("docs-status").textContent = e.message;
      return;
    }
    $("d-id").value = d.id;
    $("d-title").value = d.title || "";
    $("d-scope").value = d.scope || "public";
    $("d-department").value = d.department || "general";
    $("d-url").value = d.url || "";
    $("d-content").value = d.content || "";
    $("d-content").focus();
  }
  /** Queue indexing again: one document (`id`), or all of them. */
  async function reindex(id) {
    try {
      var queued = (await api("POST", "/admin/index" + (id ? "?id=" + encodeURIComponent(id) : ""))).queued;
      $("docs-status").textContent = t("{n} document(s) queued for indexing.", { n: queued });
      setTimeout(loadDocuments, 1000);
    } catch (e) {
      $("docs-status").textContent = e.message;
    }
  }
  async function deleteDocument(id) {
    if (!window.confirm("Delete the document " + id + " and its index entries?")) return;
    try {
      await api("DELETE", "/admin/knowledge/" + encodeURIComponent(id));
    } catch (e) {
      $("docs-status").textContent = e.message;
    }
    loadDocuments();
    loadUsage();
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
      loadUsage();
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
      body.appendChild(el("tr", { "data-set": d.name, "data-user": d.user_id || "" },
        el("td", { "data-label": "Name", text: d.name }), el("td", { "data-label": "User", text: d.user_id || "" }),
        el("td", { "data-label": "Rows", text: String(d.row_count == null ? "" : d.row_count) }),
        el("td", { "data-label": "Columns", class: "columns", text: columns }),
        el("td", {}, button(t("Delete"), function () { deleteData(d.name, d.user_id); }, "danger small"))));
    });
    $("data-status").textContent = t("{n} data set(s).", { n: sets.length });
  }
  async function deleteData(name, user) {
    if (!window.confirm("Delete the data set " + name + " of " + user + "?")) return;
    var path = "/admin/data/" + encodeURIComponent(name) + "?user_id=" + encodeURIComponent(user || "");
    try { await api("DELETE", path); } catch (e) { $("data-status").textContent = e.message; }
    loadData();
    loadUsage();
  }
  async function uploadData(event) {
    event.preventDefault();
    var form = $("data-form");
    clearErrors(form);
    var name = $("ds-name").value.trim();
    var file = $("ds-file").files[0];
    var ok = true;
    if (!name) ok = !fieldError(form, "name", t("Name the data set."));
    if (!$("ds-user").value.trim()) ok = !fieldError(form, "user_id", t("Whose data this is (the user id)."));
    if (!file) ok = !fieldError(form, "file", t("Choose a CSV file."));
    if (!ok) return;
    var query = "?user_id=" + encodeURIComponent($("ds-user").value.trim());
    if ($("ds-description").value.trim()) query += "&description=" + encodeURIComponent($("ds-description").value.trim());
    try {
      await api("PUT", "/admin/data/" + encodeURIComponent(name) + query, await file.text(), "text/csv");
      form.reset();
      loadData();
      loadUsage();
    } catch (e) {
      serverError(form, e, $("data-error"));
    }
  }

  // ---- Learned queries (rental) --------------------------------------------------------
  var learnedNext = null;
  /** The site's learned questions and their SQL, newest first; `more` appends the next page. */
  async function loadLearned(more) {
    var card = $("learned-card");
    card.hidden = !app.site || app.site.template !== "rental";
    if (card.hidden) return;
    var body = $("learned-table").tBodies[0];
    var path = "/admin/rental/qa?limit=50" + (more && learnedNext ? "&before=" + encodeURIComponent(learnedNext) : "");
    var answer;
    try {
      answer = await api("GET", path);
    } catch (e) {
      $("learned-status").textContent = "Could not list the learned queries: " + e.message;
      return;
    }
    if (!more) while (body.firstChild) body.removeChild(body.firstChild);
    (answer.qa || []).forEach(function (q) {
      var status = q.context_free ? null
        : el("span", { class: "status failed", text: "not reused (learned before review)" });
      body.appendChild(el("tr", { "data-qa": q.id },
        el("td", { "data-label": "Question", class: "question", text: q.question }),
        el("td", { "data-label": "SQL" }, el("code", { class: "sql", text: q.sql })),
        el("td", { "data-label": "Role", text: q.role || "" }, status ? " " : null, status),
        el("td", { "data-label": "Learned", text: when(q.created_at) }),
        el("td", { "data-label": "Reused", text: String(q.hits || 0) }),
        el("td", { class: "actions-cell" }, button(t("Delete"), function () { deleteLearned(q); }, "danger small"))));
    });
    learnedNext = answer.next || null;
    $("learned-more").hidden = !learnedNext;
    var n = body.rows.length;
    $("learned-status").textContent = n ? n + " learned quer" + (n === 1 ? "y" : "ies") + (learnedNext ? " shown." : ".")
      : "Nothing learned yet: valid answers to questions asked on their own are learned.";
  }
  async function deleteLearned(q) {
    if (!window.confirm("Forget the learned query for \u201c" + q.question + "\u201d? The next visitor asking it is answered by the model again.")) return;
    try {
      await api("DELETE", "/admin/rental/qa/" + encodeURIComponent(q.id));
    } catch (e) {
      if (e.status !== 404) {
        $("learned-status").textContent = e.message;
        return;
      }
    }
    var row = $("learned-table").querySelector('tr[data-qa="' + q.id.replace(/[^A-Za-z0-9_-]/g, "") + '"]');
    if (row) row.parentNode.removeChild(row);
    var n = $("learned-table").tBodies[0].rows.length;
    $("learned-status").textContent = "Deleted. " + n + " learned quer" + (n === 1 ? "y" : "ies") + " shown.";
  }

  // ---- Records -------------------------------------------------------------------------
  function parseWarranty(text) {
    return lines(text).filter(function (l, i) { return !(i === 0 && /^serial\s*,/i.test(l)); }).map(function (l, i) {
      var cells = l.split(",").map(function (c) { return c.trim(); });
      if (cells.length !== 3) throw new Error(t("Line {n}: write serial,product,warranty_until.", { n: i + 1 }));
      return { serial: cells[0], product: cells[1], warranty_until: cells[2] };
    });
  }
  /** The records as a JSON array: a plain array, or the API's body (`{"rows": […]}`,
   * `{"pages": […]}`) as well; a Vietnamese-first message for anything else. */
  function parseArray(text, wrapper, needsId) {
    var value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new Error(t("This is not valid JSON ({detail}). Paste a JSON array like the example.", { detail: e.message }));
    }
    if (value && !Array.isArray(value) && Array.isArray(value[wrapper])) value = value[wrapper];
    if (!Array.isArray(value)) throw new Error(t("Paste a JSON array of records, like the example."));
    value.forEach(function (row, i) {
      if (!row || typeof row !== "object" || Array.isArray(row)) throw new Error(t("Record {n} is not a JSON object.", { n: i + 1 }));
      if (needsId && (row.id == null || row.id === "")) throw new Error(t("Record {n} has no id.", { n: i + 1 }));
    });
    return value;
  }
  function checkLogLines(text) {
    lines(text).forEach(function (line, i) {
      try { JSON.parse(line); } catch (e) { throw new Error(t("Line {n} is not JSON.", { n: i + 1 })); }
    });
  }
  /** An example of what each kind takes (the rental one from the schema's columns). */
  function recordsExample() {
    var kind = $("r-kind").value;
    if (kind === "warranty") return "serial,product,warranty_until\nSN-001,Laptop Dell XPS 13,2026-12-31";
    if (kind === "pages") return JSON.stringify([{ title: "Giờ làm việc", url: "https://example.com/gio-lam-viec", content: "Phòng khám mở cửa 8:00–20:00 từ thứ Hai đến thứ Bảy." }], null, 1);
    if (kind === "logs") return '{"ts": "2026-12-01T08:00:00Z", "level": "ERROR", "source": "vpn", "message": "login failed"}';
    var row = { id: "p101" };
    var entity = (schema || []).filter(function (e) { return e.entity === $("r-entity").value.trim(); })[0] || (schema || [])[0];
    ((entity && entity.columns) || []).slice(0, 3).forEach(function (c) {
      row[c.name] = /int|real|num|float|price|area/i.test((c.type || "") + " " + c.name) ? 1 : "…";
    });
    return JSON.stringify([row], null, 1);
  }
  function showExample() {
    var example = recordsExample();
    $("r-body").placeholder = example;
    $("r-example").textContent = t("Example:") + " " + example.replace(/\n\s*/g, " ");
  }
  async function uploadRecords(event) {
    event.preventDefault();
    var kind = $("r-kind").value;
    var text = $("r-body").value;
    show($("records-error"), "");
    $("records-done").textContent = "";
    if (!text.trim()) {
      show($("records-error"), t("Nothing to upload: paste the records first."));
      return;
    }
    var answer;
    try {
      if (kind === "warranty") answer = await api("POST", "/admin/warranty", { records: parseWarranty(text) });
      else if (kind === "rental") answer = await api("PUT", "/admin/rental/" + encodeURIComponent($("r-entity").value.trim()), { rows: parseArray(text, "rows", true) });
      else if (kind === "pages") answer = await api("PUT", "/admin/search-pages", { pages: parseArray(text, "pages", false) });
      else {
        checkLogLines(text);
        answer = await api("PUT", "/admin/logs", text, "application/x-ndjson");
      }
    } catch (e) {
      // A message of the console's own is already in the console's language; the
      // Worker's says what it refused.
      show($("records-error"), e.status ? t("The Worker refused the records: {message}", { message: e.message }) : e.message);
      return;
    }
    var n = Number((answer && (answer.upserted != null ? answer.upserted : answer.pages != null ? answer.pages : answer.lines)) || 0);
    $("records-done").textContent = n === 1 ? t("Uploaded 1 record.") : t("Uploaded {n} records.", { n: n });
    loadUsage();
  }


  // ---- Records: the rental entity defaults to the site's schema's first entity ---------
  var entities = null; // the schema's entity names, once read
  var schema = null; // the schema's entities, once read
  async function showEntities() {
    var rental = $("r-kind").value === "rental";
    $("r-entity-field").hidden = !rental;
    showExample();
    if (!rental) return;
    if (!entities) {
      try {
        schema = (await api("GET", "/admin/rental-schema")).schema.entities || [];
        entities = schema.map(function (e) { return e.entity; });
      } catch (e) {
        show($("records-error"), e.message);
        return;
      }
    }
    var list = $("r-entities");
    while (list.firstChild) list.removeChild(list.firstChild);
    entities.forEach(function (name) { list.appendChild(el("option", { value: name })); });
    if (!$("r-entity").value.trim() || entities.indexOf($("r-entity").value.trim()) < 0) $("r-entity").value = entities[0] || "";
    $("r-entity-hint").textContent = t("The schema's entities: {names}.", { names: entities.join(", ") });
    showExample();
  }

  var KIND_OF_TEMPLATE = { shop: "warranty", rental: "rental", guarded: "pages", knowledge: "logs" };
  var kindChosen = false;
  app.loaders.knowledge = function () {
    loadUsage();
    loadDocuments();
    loadData();
    loadLearned(false);
    // The records the site's template uses, until the merchant picks another kind.
    if (!kindChosen && KIND_OF_TEMPLATE[app.site.template]) $("r-kind").value = KIND_OF_TEMPLATE[app.site.template];
    entities = null;
    showEntities();
  };
  $("doc-form").addEventListener("submit", saveDocument);
  $("reindex-all").addEventListener("click", function () { reindex(null); });
  $("data-form").addEventListener("submit", uploadData);
  $("records-form").addEventListener("submit", uploadRecords);
  $("learned-refresh").addEventListener("click", function () { loadLearned(false); });
  $("learned-more").addEventListener("click", function () { loadLearned(true); });
  $("r-kind").addEventListener("change", function () { kindChosen = true; showEntities(); });
  $("r-entity").addEventListener("change", showExample);
})();
