// Concierge console: the Overview tab — conversations and visitor messages per day,
// answered vs unanswered, votes, top questions, requests for a person (GET /admin/stats), drawn as inline SVG
// charts sized to their box (one SVG unit = one CSS pixel, so text stays ≥ 12 px on a
// phone), each with a text alternative that states its figures.
(function () {
  "use strict";
  var app = window.ConciergeConsole;
  var $ = app.$, t = app.t;
  var SVG = "http://www.w3.org/2000/svg";
  var FONT = 13;
  var stats = null;

  function num(n) {
    return new Intl.NumberFormat(window.ConsoleI18n.locale()).format(n);
  }
  function svg(parent, tag, attrs, text) {
    var e = parent.appendChild(document.createElementNS(SVG, tag));
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text != null) e.textContent = text;
    return e;
  }
  /** A fresh SVG filling `figure`'s plot box: [svg, width]. */
  function canvas(figure, height, label) {
    var plot = figure.querySelector(".plot");
    while (plot.firstChild) plot.removeChild(plot.firstChild);
    var width = Math.max(260, Math.floor(plot.clientWidth || 320));
    var root = svg(plot, "svg", { viewBox: "0 0 " + width + " " + height, width: width, height: height,
      role: "img", "aria-label": label, class: "dash-svg" });
    return [root, width];
  }
  function empty(figure) {
    var plot = figure.querySelector(".plot");
    while (plot.firstChild) plot.removeChild(plot.firstChild);
    var p = document.createElement("p");
    p.className = "hint";
    p.textContent = t("Nothing yet in this period.");
    plot.appendChild(p);
  }
  function legend(root, x, y, items) {
    items.forEach(function (item) {
      svg(root, "rect", { x: x, y: y - 10, width: 12, height: 12, class: item[0] });
      var label = svg(root, "text", { x: x + 16, y: y, "font-size": FONT, class: "dash-text" }, item[1]);
      x += 16 + Math.ceil(label.getComputedTextLength ? label.getComputedTextLength() : item[1].length * 7) + 18;
    });
  }

  /** Every day of the period, with its figures (0 when nothing happened). */
  function days() {
    var byDay = {};
    (stats.per_day || []).forEach(function (d) { byDay[d.day] = d; });
    var out = [];
    var offset = -new Date().getTimezoneOffset() * 60000;
    for (var i = 0; i < stats.days; i++) {
      var key = new Date(stats.since + offset + i * 86400000 + 43200000).toISOString().slice(0, 10);
      var d = byDay[key] || { conversations: 0, messages: 0 };
      out.push({ day: key, conversations: d.conversations, messages: d.messages });
    }
    return out;
  }

  function activity() {
    var figure = $("dash-activity");
    var rows = days();
    var total = rows.reduce(function (a, d) { return [a[0] + d.conversations, a[1] + d.messages]; }, [0, 0]);
    if (!total[1]) return empty(figure);
    var label = t("{conversations} conversations and {messages} visitor messages in the last {days} days.",
      { conversations: num(total[0]), messages: num(total[1]), days: stats.days });
    var height = 250;
    var made = canvas(figure, height, label);
    var root = made[0], width = made[1];
    var left = 40, right = 8, top = 34, bottom = 40;
    var plotW = width - left - right, plotH = height - top - bottom;
    var max = Math.max.apply(null, rows.map(function (d) { return Math.max(d.conversations, d.messages); })) || 1;
    var y = function (v) { return top + plotH - (v / max) * plotH; };
    legend(root, left, 16, [["dash-a", t("Conversations")], ["dash-b", t("Visitor messages")]]);
    [0, max / 2, max].forEach(function (v) {
      var value = Math.round(v);
      svg(root, "line", { x1: left, x2: width - right, y1: y(value), y2: y(value), class: "dash-grid" });
      svg(root, "text", { x: left - 6, y: y(value) + 4, "font-size": FONT, "text-anchor": "end", class: "dash-text" }, num(value));
    });
    var slot = plotW / rows.length;
    var bar = Math.max(2, Math.min(22, slot * 0.38));
    var every = Math.ceil(rows.length / Math.max(1, Math.floor(plotW / 46)));
    rows.forEach(function (d, i) {
      var x = left + slot * i + slot / 2;
      [[d.conversations, "dash-a", -bar], [d.messages, "dash-b", 0]].forEach(function (s) {
        if (!s[0]) return;
        svg(root, "rect", { x: (x + s[2]).toFixed(1), y: y(s[0]).toFixed(1), width: bar.toFixed(1), height: (top + plotH - y(s[0])).toFixed(1), class: s[1] },
          null).appendChild(document.createElementNS(SVG, "title")).textContent = d.day + ": " + num(s[0]);
        if (bar >= 12) svg(root, "text", { x: (x + s[2] + bar / 2).toFixed(1), y: (y(s[0]) - 4).toFixed(1), "font-size": 12, "text-anchor": "middle", class: "dash-text" }, num(s[0]));
      });
      if ((rows.length - 1 - i) % every === 0) {
        svg(root, "text", { x: x.toFixed(1), y: height - bottom + 18, "font-size": FONT, "text-anchor": "middle", class: "dash-text" },
          d.day.slice(8, 10) + "/" + d.day.slice(5, 7));
      }
    });
    svg(root, "line", { x1: left, x2: width - right, y1: top + plotH, y2: top + plotH, class: "dash-axis" });
  }

  /** Labelled horizontal bars: rows of [label, value, class]. */
  function bars(figure, rows, label, wide) {
    if (!rows.some(function (r) { return r[1] > 0; })) return empty(figure);
    var lineH = wide ? 46 : 34;
    var height = rows.length * lineH + 8;
    var made = canvas(figure, height, label);
    var root = made[0], width = made[1];
    var max = Math.max.apply(null, rows.map(function (r) { return r[1]; })) || 1;
    rows.forEach(function (r, i) {
      var top = 4 + i * lineH;
      var labelW = wide ? 0 : Math.min(130, width * 0.35);
      var text = r[0];
      if (wide && text.length > Math.floor(width / 7.5)) text = text.slice(0, Math.floor(width / 7.5) - 1) + "…";
      svg(root, "text", { x: 0, y: top + 15, "font-size": FONT, class: "dash-text" }, text);
      var barTop = wide ? top + 22 : top + 3;
      var room = width - labelW - 60;
      var w = Math.max(2, (r[1] / max) * room);
      svg(root, "rect", { x: labelW, y: barTop, width: w.toFixed(1), height: 16, rx: 3, class: r[2] });
      svg(root, "text", { x: (labelW + w + 6).toFixed(1), y: barTop + 13, "font-size": FONT, class: "dash-text dash-value" }, num(r[1]));
    });
  }

  function draw() {
    if (!stats) return;
    activity();
    var asked = stats.answered + stats.unanswered;
    var pct = function (n) { return asked ? " (" + Math.round((n / asked) * 100) + "%)" : ""; };
    var outcomes = [[t("Answered") + pct(stats.answered), stats.answered, "dash-ok"], [t("Unanswered") + pct(stats.unanswered), stats.unanswered, "dash-bad"]];
    bars($("dash-outcomes"), outcomes, outcomes.map(function (r) { return t("{label}: {value}", { label: r[0], value: num(r[1]) }); }).join("; "));
    var votes = [[t("Up-votes"), stats.up_votes, "dash-ok"], [t("Down-votes"), stats.down_votes, "dash-bad"]];
    bars($("dash-votes"), votes, votes.map(function (r) { return t("{label}: {value}", { label: r[0], value: num(r[1]) }); }).join("; "));
    var top = (stats.top_questions || []).map(function (q) { return [q.question, q.count, "dash-b"]; });
    bars($("dash-top"), top, top.map(function (r) { return r[0] + ": " + t("Asked {n} times", { n: num(r[1]) }); }).join("; "), true);
    var h = stats.handoff || { requested: 0, taken: 0, timed_out: 0 };
    var handoff = [[t("Asked for a person"), h.requested, "dash-b"], [t("Taken by a person"), h.taken, "dash-ok"], [t("Nobody took it in time"), h.timed_out, "dash-bad"]];
    bars($("dash-handoff"), handoff, handoff.map(function (r) { return t("{label}: {value}", { label: r[0], value: num(r[1]) }); }).join("; "));
    $("dash-handoff-median").textContent = h.median_take_ms == null ? "" : t("Median time before a person took over: {time}.", { time: duration(h.median_take_ms) });
  }

  /** A duration in words: "45 s", "3 min", "1 h 5 min". */
  function duration(ms) {
    var s = Math.round(ms / 1000);
    if (s < 60) return t("{n} s", { n: s });
    var m = Math.round(s / 60);
    if (m < 60) return t("{n} min", { n: m });
    return t("{h} h {m} min", { h: Math.floor(m / 60), m: m % 60 });
  }

  async function load() {
    var status = $("dash-status");
    var offset = -new Date().getTimezoneOffset();
    try {
      stats = await app.api("GET", "/admin/stats?days=" + encodeURIComponent($("dash-days").value) + "&tz=" + offset);
    } catch (e) {
      status.textContent = t("Could not load the figures: {message}", { message: e.message });
      return;
    }
    var messages = (stats.per_day || []).reduce(function (a, d) { return a + d.messages; }, 0);
    var conversations = (stats.per_day || []).reduce(function (a, d) { return a + d.conversations; }, 0);
    status.textContent = t("{conversations} conversations and {messages} visitor messages in the last {days} days.",
      { conversations: num(conversations), messages: num(messages), days: stats.days });
    draw();
  }

  app.loaders.overview = load;
  $("dash-days").addEventListener("change", load);
  var resizing = null;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () { if (!$("tab-overview").hidden) draw(); }, 150);
  });
})();
