// What a visitor reads in the panel, in the conversation's language (issue 26, items 2–5):
// markdown tables, localised labels and formatted numbers, readable charts, no raw role
// label. Real headless Chromium on a merchant's page, desktop (1280×800) and phone
// (390×844), scripted turns through the real Worker (POST /debug/conversations/{id}/script),
// axe-core over the panel in every state (0 critical, 0 serious), again after a reload.
//
// Usage: node ux_render.mjs <scenario> <page_url> <artifact_dir> <profile_dir>
// Scenarios: md-table, labels, chart, role, wide. Environment: WORKER, SECRET_KEY, SCRIPT_FILE
// (JSON {"turns": [script, …]}), LANG (vi or en: the embed tag's data-lang).
// Screenshots: <artifact_dir>/ux-render-<scenario>-<lang>-{desktop,phone}[-reloaded].png, and
// each chart alone: ux-render-chart-<lang>-<viewport>-<n>.png.
// Prints "ok <scenario>" on success.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const [scenario, pageUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const LANG = env.LANG === "en" ? "en" : "vi";
const TURNS = JSON.parse(readFileSync(env.SCRIPT_FILE, "utf8")).turns;
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");
const vi = LANG === "vi";

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: VIEWPORTS.desktop,
});
context.setDefaultTimeout(30000);

async function openPanel(page) {
  await page.locator("[data-concierge] button").click();
  const handle = await page.waitForSelector("[data-concierge] iframe", { state: "attached" });
  const frame = await handle.contentFrame();
  await frame.waitForSelector('.cw-panel[data-status="ready"]');
  return frame;
}

const conversationId = (frame) => frame.evaluate(() => {
  const key = Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."));
  return key && localStorage.getItem(key);
});

async function freshConversation(frame) {
  const old = await conversationId(frame);
  await frame.click(".cw-new");
  await frame.waitForFunction((old) => {
    const key = Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."));
    return key && localStorage.getItem(key) !== old && document.querySelector(".cw-panel").dataset.status === "ready" &&
      document.querySelectorAll(".cw-msg").length === 1;
  }, old);
  return conversationId(frame);
}

async function stage(conversation, script) {
  const response = await fetch(`${env.WORKER}/debug/conversations/${conversation}/script`, {
    method: "POST",
    headers: { "x-api-key": env.SECRET_KEY, "content-type": "application/json" },
    body: JSON.stringify(script),
  });
  assert.equal(response.status, 204, `stage: ${response.status} ${await response.text()}`);
}

const answered = (frame, n) => frame.waitForFunction((n) => {
  const bots = document.querySelectorAll(".cw-bot");
  return bots.length >= n && bots[bots.length - 1].dataset.state === "done"
      // Charts load on demand (widget/js/chart.js): drawn once no box is busy.
      && !bots[bots.length - 1].querySelector("[aria-busy]");
}, n);

/** axe-core over the panel: no critical or serious violation. */
async function axe(frame, what) {
  await frame.evaluate(AXE + ";0");
  const found = await frame.evaluate(async () => {
    const result = await window.axe.run(document.querySelector(".cw-panel"), { resultTypes: ["violations"] });
    return result.violations.filter((v) => v.impact === "critical" || v.impact === "serious")
      .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  assert.deepEqual(found, [], `axe (${what})`);
}

/** Every text a visitor sees in the last answer (body, work rows, payloads, SVG text and
 * the chart's name), one string. */
const lastText = (frame) => frame.evaluate(() => {
  const bot = [...document.querySelectorAll(".cw-bot")].pop();
  const parts = [bot.querySelector(".cw-body").innerText, bot.querySelector(".cw-work").innerText, bot.querySelector(".cw-rich").innerText];
  for (const s of bot.querySelectorAll("svg")) parts.push(s.getAttribute("aria-label"), [...s.querySelectorAll("text")].map((t) => t.textContent).join(" "));
  return parts.join("\n");
});

const last = (frame, selector) => frame.locator(".cw-bot").last().locator(selector);

async function run(viewport, check) {
  const page = await context.newPage();
  await page.setViewportSize(VIEWPORTS[viewport]);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(pageUrl, { waitUntil: "load" });
  let frame = await openPanel(page);
  assert.equal(await frame.evaluate(() => document.documentElement.lang), LANG);
  const conversation = await freshConversation(frame);
  await stage(conversation, TURNS[0]);
  await frame.evaluate(() => {
    window.__seen = new Set();
    new MutationObserver(() => {
      const bot = [...document.querySelectorAll(".cw-bot")].pop();
      if (!bot) return;
      for (const el of bot.querySelectorAll(".cw-work, .cw-activity, .cw-body")) if (el.innerText.trim()) window.__seen.add(el.innerText.trim());
      for (const p of bot.querySelectorAll("progress")) window.__seen.add(`bar: ${p.getAttribute("aria-label")}`);
    }).observe(document.querySelector(".cw-log"), { subtree: true, childList: true, characterData: true, attributes: true });
  });
  await frame.fill("#cw-input", vi ? "Cho em xem kết quả" : "Show me the results");
  await frame.press("#cw-input", "Enter");
  await answered(frame, 2);
  const seen = await frame.evaluate(() => [...window.__seen]);
  await check(frame, { seen, viewport });
  await axe(frame, `${scenario} ${LANG} ${viewport}`);
  await page.screenshot({ path: `${artifacts}/ux-render-${scenario}-${LANG}-${viewport}.png` });
  const count = await frame.locator(".cw-msg").count();

  await page.reload({ waitUntil: "load" });
  frame = await openPanel(page);
  await frame.waitForFunction((n) => document.querySelectorAll(".cw-msg").length >= n, count);
  await answered(frame, 2);
  await check(frame, { seen: null, viewport });
  await axe(frame, `${scenario} ${LANG} ${viewport} reloaded`);
  await page.screenshot({ path: `${artifacts}/ux-render-${scenario}-${LANG}-${viewport}-reloaded.png` });
  assert.deepEqual(errors, []);
  await page.close();
}

// ---- scenarios -----------------------------------------------------------------------

const scenarios = {
  /** A GFM table in the answer's text is a table: header cells, body cells with their
   * inline markdown, numbers right-aligned, inside the same scrolling region as a table
   * payload; no pipe rows left as text. */
  async "md-table"(frame) {
    const body = last(frame, ".cw-body");
    const text = await body.innerText();
    assert.doesNotMatch(text, /\|\s*-{3,}|\|\s*:?-{3,}/, "no delimiter row left as text");
    const tables = await body.locator("table").evaluateAll((ts) => ts.map((t) => {
      const region = t.closest(".cw-table");
      return {
        region: region && [region.getAttribute("role"), region.tabIndex, !!region.getAttribute("aria-label")],
        head: [...t.querySelectorAll("thead th")].map((th) => [th.textContent, th.scope]),
        rows: [...t.querySelectorAll("tbody tr")].map((tr) => [...tr.children].map((td) => td.textContent)),
        align: [...t.querySelectorAll("tbody tr:first-child td")].map((td) => getComputedStyle(td).textAlign),
        strong: t.querySelectorAll("tbody strong").length,
        links: [...t.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href"), a.rel]),
        font: parseFloat(getComputedStyle(t).fontSize),
      };
    }));
    const expected = JSON.parse(env.EXPECT);
    assert.equal(tables.length, expected.length, `tables in the answer: ${text}`);
    tables.forEach((t, i) => {
      const e = expected[i];
      assert.deepEqual(t.region, ["region", 0, true], "a named, focusable scrolling region");
      assert.deepEqual(t.head, e.head.map((h) => [h, "col"]));
      assert.deepEqual(t.rows, e.rows);
      assert.deepEqual(t.align, e.align);
      assert.equal(t.strong, e.strong);
      assert.deepEqual(t.links, e.links);
      assert.ok(t.font >= 12, `table text ${t.font}px`);
    });
    // The text around the tables is still there.
    for (const words of JSON.parse(env.EXPECT_TEXT)) assert.ok(text.includes(words), `"${words}" in ${text}`);
  },

  /** Tool rows, progress, table headers, numbers, list subtitles, sources: all in the
   * conversation's language, no raw keys, numbers formatted. */
  async labels(frame, { seen }) {
    const expect = JSON.parse(env.EXPECT);
    if (seen) {
      for (const s of expect.seen) assert.ok(seen.some((x) => x.includes(s)), `"${s}" while working; seen: ${JSON.stringify(seen)}`);
      for (const s of expect.never) assert.ok(!seen.some((x) => x.includes(s)), `"${s}" must not show; seen: ${JSON.stringify(seen)}`);
      const tools = await last(frame, ".cw-tool").evaluateAll((els) => els.map((el) => el.textContent));
      assert.deepEqual(tools, expect.tools);
    }
    const heads = await last(frame, ".cw-rich th").evaluateAll((els) => els.map((th) => th.textContent));
    assert.deepEqual(heads, expect.heads);
    const cells = await last(frame, ".cw-rich tbody tr:first-child td").evaluateAll((els) => els.map((td) => td.textContent));
    assert.deepEqual(cells, expect.cells);
    const subtitles = await last(frame, ".cw-list small").evaluateAll((els) => els.map((el) => el.textContent));
    assert.deepEqual(subtitles, expect.subtitles);
    const sources = await last(frame, ".cw-sources li").evaluateAll((els) => els.map((li) => [li.firstChild.textContent, li.querySelector(".cw-tag")?.textContent ?? null]));
    assert.deepEqual(sources, expect.sources);
    const all = await lastText(frame);
    for (const s of expect.never) assert.ok(!all.includes(s), `"${s}" must not show in:\n${all}`);
  },

  /** Charts a visitor can read: a title, the values (labels or an axis) formatted, a
   * legend for several series, text at least 12 px on screen, a text alternative in the
   * conversation's language with the values. */
  async chart(frame, { viewport }) {
    const expect = JSON.parse(env.EXPECT);
    const figures = last(frame, ".cw-chart");
    for (let i = 0; i < (await figures.count()); i++) {
      await figures.nth(i).screenshot({ path: `${artifacts}/ux-render-chart-${LANG}-${viewport}-${i + 1}.png` });
    }
    const charts = await last(frame, ".cw-chart").evaluateAll((figs) => figs.map((f) => {
      const svg = f.querySelector("svg");
      const scale = svg.getScreenCTM().a;
      return {
        tag: svg.namespaceURI,
        title: f.querySelector("figcaption")?.textContent ?? "",
        name: svg.getAttribute("aria-label") ?? "",
        texts: [...svg.querySelectorAll("text")].map((t) => t.textContent),
        smallest: Math.min(...[...svg.querySelectorAll("text")].map((t) => parseFloat(getComputedStyle(t).fontSize) * scale)),
        legend: [...f.querySelectorAll(".cw-legend li")].map((li) => li.textContent),
        overflow: f.scrollWidth > f.clientWidth + 1,
      };
    }));
    assert.equal(charts.length, expect.length);
    charts.forEach((c, i) => {
      const e = expect[i];
      assert.equal(c.tag, "http://www.w3.org/2000/svg", "inline SVG");
      assert.equal(c.title, e.title);
      for (const t of e.texts) assert.ok(c.texts.includes(t), `chart ${i}: "${t}" drawn; texts: ${JSON.stringify(c.texts)}`);
      for (const t of e.name) assert.ok(c.name.includes(t), `chart ${i}: "${t}" in its name "${c.name}"`);
      for (const t of e.never) {
        assert.ok(!c.name.includes(t) && !c.texts.includes(t) && !c.title.includes(t), `chart ${i}: "${t}" must not show`);
      }
      assert.deepEqual(c.legend, e.legend);
      assert.ok(c.smallest >= 12, `chart ${i}: smallest text ${c.smallest.toFixed(1)}px on screen`);
      assert.ok(!c.overflow, `chart ${i} fits its bubble`);
    });
  },

  /** The rental role label is not shown; the answer's words are. */
  /** A wide table on a phone (issue 45, item 8): its first column (a rental's title,
   * linked to the room's page) stays in view while the rest scrolls sideways, and the
   * region shows a shadow at the edge it scrolls towards. */
  async wide(frame, { viewport }) {
    const expect = JSON.parse(env.EXPECT);
    const region = last(frame, ".cw-table");
    const links = await region.locator("a").evaluateAll((as) => as.map((a) => [a.textContent, new URL(a.href).pathname, a.closest("td").cellIndex]));
    assert.deepEqual(links, expect.links, "the title links to the room, not the id");
    const before = await region.evaluate((r) => ({ scroll: r.scrollWidth - r.clientWidth, hint: getComputedStyle(r).backgroundImage }));
    assert.match(before.hint, /radial-gradient/, "a shadow says the table scrolls");
    if (viewport === "phone") assert.ok(before.scroll > 40, `the table is wider than a phone: ${before.scroll}`);
    const after = await region.evaluate(async (r) => {
      r.scrollLeft = r.scrollWidth;
      await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      const box = r.getBoundingClientRect();
      const first = [...r.querySelectorAll("tr > :first-child")].map((c) => c.getBoundingClientRect());
      const price = r.querySelector("tbody tr td:nth-child(3)").getBoundingClientRect();
      return { left: box.left, right: box.right, first: first.map((c) => [c.left, c.right]), price: [price.left, price.right], scrolled: r.scrollLeft };
    });
    for (const [left, right] of after.first) {
      assert.ok(Math.abs(left - after.left) < 2 && right > left + 40, `the first column stays in view: ${JSON.stringify(after)}`);
    }
    if (viewport === "phone") {
      assert.ok(after.scrolled > 0, "scrolled sideways");
      assert.ok(after.price[0] >= after.first[0][1] - 1 || after.price[1] <= after.first[0][1], "the price is not drawn over the title");
      await frame.page().screenshot({ path: `${artifacts}/ux-render-wide-${LANG}-${viewport}-scrolled.png` });
    }
  },

  async role(frame) {
    const expect = JSON.parse(env.EXPECT);
    const bodies = await frame.locator(".cw-bot .cw-body").evaluateAll((els) => els.map((el) => el.innerText));
    const answer = bodies[bodies.length - 1];
    assert.equal(answer, expect.text);
    for (const s of ["[GUEST]", "[TENANT]", "[LANDLORD]"]) assert.ok(!bodies.some((b) => b.includes(s)), `${s} shown`);
  },
};

try {
  assert.ok(scenarios[scenario], `unknown scenario ${scenario}`);
  for (const viewport of Object.keys(VIEWPORTS)) await run(viewport, scenarios[scenario]);
  console.log(`ok ${scenario}`);
} finally {
  await context.close();
}
