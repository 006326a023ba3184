// The merchant console's review and testing tools in real headless Chromium (issue 26,
// items 10–15): the Overview dashboard's charts, the console in Vietnamese and English,
// conversations drawn as the visitor saw them with search, filters and export, the
// records entity from the site's schema, and Try it as a chosen user. Every tab is
// audited with axe-core (0 critical, 0 serious), desktop and phone.
//
// Usage: node console_ux.mjs <scenario> <console_url> <artifact_dir> <profile_dir>
// Scenarios and their environment:
//   overview       SECRET_KEY, TOP_QUESTION (asked twice), DOWN_VOTES, UNANSWERED
//   language       SECRET_KEY
//   conversations  SECRET_KEY, RICH (the rich conversation's id), RICH_QUESTION, VOTED,
//                  UNANSWERED_ID, GREETING_ONLY (a conversation nobody asked in)
//   records        SECRET_KEY (a rental site)
//   try_as         SECRET_KEY, USER, QUESTION, ANSWER (what the data path answers),
//                  NO_DATA (what an anonymous visitor is told)
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const [scenario, consoleUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const TIMEOUT = 30000;
const AXE = fs.readFileSync(path.join(process.cwd(), "node_modules/axe-core/axe.min.js"), "utf8");
const TABS = ["overview", "assistant", "knowledge", "try", "conversations", "install", "keys"];

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: DESKTOP,
  locale: scenario === "language" ? "vi-VN" : "en-US",
  acceptDownloads: true,
});
context.setDefaultTimeout(TIMEOUT);

async function openConsole() {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("dialog", (d) => d.accept());
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(consoleUrl, { waitUntil: "load" });
  return { page, errors };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `console-ux-${name}.png`), fullPage: true });
}

async function signIn(page) {
  await page.fill("#signin-key", env.SECRET_KEY);
  await page.click('#signin-form button[type="submit"]');
  await page.waitForSelector("#app:not([hidden])");
}

async function tab(page, name) {
  await page.click(`.tabs button[data-tab="${name}"]`);
  await page.waitForSelector(`#tab-${name}:not([hidden])`);
}

/** axe-core over the page (not the chat panel's frame): no critical or serious violation. */
async function audit(page, name) {
  if (!(await page.evaluate(() => typeof window.axe === "object"))) await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, { iframes: false, resultTypes: ["violations"] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) }));
  });
  const bad = violations.filter((v) => v.impact === "critical" || v.impact === "serious");
  console.log(`axe ${name}: ${violations.length} violation(s), ${bad.length} critical/serious`);
  assert.deepEqual(bad, [], `axe on ${name}: ${JSON.stringify(bad)}`);
}

async function fitsPhone(page, name) {
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name} fits a phone (${overflow}px too wide)`);
}

async function clean(page, errors) {
  assert.deepEqual(await page.evaluate(() => window.__csp), [], "no CSP violation");
  assert.deepEqual(errors, [], "no page error");
}

const scenarios = {
  // Item 15: the first tab is a dashboard of charts, not tables; and every tab passes axe.
  async overview() {
    const { page, errors } = await openConsole();
    await signIn(page);
    await page.waitForSelector("#tab-overview:not([hidden])");
    assert.equal(await page.getAttribute('.tabs button[role="tab"]:first-child', "data-tab"), "overview", "the first tab");
    await page.waitForSelector("#dash-activity svg rect");
    for (const id of ["dash-activity", "dash-outcomes", "dash-votes", "dash-top"]) {
      assert.ok(await page.isVisible(`#${id} svg[role="img"]`), `${id} is a chart`);
      const label = await page.getAttribute(`#${id} svg`, "aria-label");
      assert.ok(label && label.length > 5, `${id} has a text alternative`);
    }
    assert.equal(await page.$$eval("#tab-overview table", (t) => t.length), 0, "charts, not tables");
    const votes = await page.getAttribute("#dash-votes svg", "aria-label");
    assert.match(votes, new RegExp(`Down-votes: ${env.DOWN_VOTES}\\b`), votes);
    const outcomes = await page.getAttribute("#dash-outcomes svg", "aria-label");
    assert.match(outcomes, new RegExp(`Unanswered \\(\\d+%\\): ${env.UNANSWERED}\\b`), outcomes);
    const top = await page.$$eval("#dash-top svg text", (ts) => ts.map((x) => x.textContent));
    assert.equal(top[0], env.TOP_QUESTION, `the most asked question first: ${top}`);
    assert.equal(top[1], "2", `asked twice: ${top}`);
    // Readable: chart text is at least 12 px on screen.
    const smallest = await page.$$eval("#tab-overview svg text", (ts) => Math.min(...ts.map((x) => x.getBoundingClientRect().height)));
    assert.ok(smallest >= 12, `chart text ≥ 12 px (smallest ${smallest})`);
    await shot(page, "overview");
    for (const name of TABS) {
      await tab(page, name);
      await page.waitForTimeout(300);
      await audit(page, `${name} (desktop)`);
    }
    await page.setViewportSize(PHONE);
    for (const name of TABS) {
      await tab(page, name);
      await page.waitForTimeout(300);
      await audit(page, `${name} (phone)`);
      await fitsPhone(page, name);
    }
    await tab(page, "overview");
    await page.waitForSelector("#dash-activity svg rect");
    const phoneText = await page.$$eval("#tab-overview svg text", (ts) => Math.min(...ts.map((x) => x.getBoundingClientRect().height)));
    assert.ok(phoneText >= 12, `chart text ≥ 12 px on a phone (smallest ${phoneText})`);
    await shot(page, "overview-phone");
    await clean(page, errors);
  },

  // Item 14: Vietnamese for a Vietnamese browser, English on request, the choice remembered.
  async language() {
    const { page, errors } = await openConsole();
    assert.equal(await page.getAttribute("html", "lang"), "vi");
    assert.equal((await page.textContent("#signin-title")).trim(), "Đăng nhập");
    assert.equal((await page.textContent('#signin-form button[type="submit"]')).trim(), "Đăng nhập");
    await signIn(page);
    await page.waitForSelector("#tab-overview:not([hidden])");
    const tabs = await page.$$eval(".tabs button", (bs) => bs.map((b) => b.textContent.trim()));
    assert.deepEqual(tabs, ["Tổng quan", "Trợ lý", "Tri thức & dữ liệu", "Dùng thử", "Hội thoại", "Khách chờ nhân viên", "Cài đặt", "Khóa"]);
    await tab(page, "assistant");
    assert.equal((await page.textContent('label[for="f-name"]')).trim(), "Tên trang");
    await page.click('#assistant-form button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#assistant-saved").textContent === "Đã lưu.");
    await shot(page, "vietnamese");
    await audit(page, "assistant (vi)");
    // Switch to English: the page, its tabs and new messages.
    await page.selectOption("#lang", "en");
    assert.equal(await page.getAttribute("html", "lang"), "en");
    assert.equal((await page.textContent('.tabs button[data-tab="assistant"]')).trim(), "Assistant");
    assert.equal((await page.textContent('label[for="f-name"]')).trim(), "Site name");
    await page.click('#assistant-form button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#assistant-saved").textContent === "Saved.");
    // Remembered: a reload (still a Vietnamese browser) stays English.
    await page.reload({ waitUntil: "load" });
    await page.waitForSelector("#app:not([hidden])");
    assert.equal(await page.getAttribute("html", "lang"), "en");
    assert.equal((await page.textContent('.tabs button[data-tab="overview"]')).trim(), "Overview");
    await shot(page, "english");
    // And back.
    await page.selectOption("#lang", "vi");
    assert.equal((await page.textContent('.tabs button[data-tab="overview"]')).trim(), "Tổng quan");
    await clean(page, errors);
  },

  // Item 11: conversations as the visitor saw them, only those with a question, filters, export.
  async conversations() {
    const { page, errors } = await openConsole();
    await signIn(page);
    await tab(page, "conversations");
    const item = (id) => `#conv-list button[data-conversation="${id}"]`;
    await page.waitForSelector(item(env.RICH));
    const listed = await page.$$eval("#conv-list button", (bs) => bs.map((b) => b.dataset.conversation));
    assert.ok(!listed.includes(env.GREETING_ONLY), "a conversation without a question is not listed");
    assert.ok(!(await page.textContent("#conv-list")).includes("(no question yet)"));
    // The rich conversation: markdown and payloads drawn, not raw.
    await page.click(item(env.RICH));
    await page.waitForSelector("#conv-messages li.assistant .cw-chart svg");
    const answer = "#conv-messages li.assistant:last-child";
    assert.equal(await page.textContent(`${answer} .body strong`), "RTX 4060");
    assert.ok(!(await page.textContent(`${answer} .body`)).includes("**"), "no raw markdown");
    assert.equal(await page.$$eval(`${answer} .body li`, (l) => l.length), 2, "a markdown list");
    assert.deepEqual(await page.$$eval(`${answer} .body .cw-table th`, (t) => t.map((x) => x.textContent)), ["Mẫu", "Giá"],
      "a GFM table, drawn by the panel's markdown");
    assert.equal(await page.getAttribute(`${answer} .body .cw-table`, "aria-label"), "Bảng dữ liệu", "the panel's words for a table");
    assert.ok(!(await page.textContent(`${answer} .body`)).includes("|---"), "no raw table rule");
    assert.ok(await page.isVisible(`${answer} .cw-table table`), "the table payload");
    // In the conversation's language (Vietnamese), whatever the console's (English here).
    assert.ok((await page.textContent(`${answer} .cw-table`)).includes("20.990.000"), "Vietnamese number format");
    assert.ok(await page.isVisible(`${answer} .cw-list a`), "the list payload");
    assert.ok(await page.isVisible(`${answer} .cw-sources li`), "the sources");
    assert.equal(await page.$$eval("#conv-messages .cw-foot button", (b) => b.length), 0, "no vote buttons in the console");
    // The panel's words, all of them, in the panel's order: the chart's kind and a number in
    // its text alternative, as the visitor's panel says them.
    const chartLabel = await page.getAttribute(`${answer} .cw-chart svg`, "aria-label");
    assert.match(chartLabel, /^Biểu đồ cột: Giá\. /, chartLabel);
    assert.ok(chartLabel.includes("A: 20.990.000 đ"), `a price with the panel's currency: ${chartLabel}`);
    assert.ok(!/undefined/.test(await page.textContent(answer)), "no missing word");
    // The visitor's message is shown as typed, not as markdown.
    assert.equal(await page.textContent("#conv-messages li.user .body"), env.RICH_QUESTION);
    await shot(page, "conversation-rich");
    // Search.
    await page.fill("#cf-q", env.RICH_QUESTION.slice(4, 16));
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForFunction((ids) => {
      const shown = [...document.querySelectorAll("#conv-list button")].map((b) => b.dataset.conversation);
      return shown.length === 1 && shown[0] === ids;
    }, env.RICH);
    await page.fill("#cf-q", "");
    // Template: the one that answered each conversation, named in the list.
    assert.equal(await page.getAttribute(`${item(env.RICH)} .meta`, "data-template"), "shop");
    assert.match(await page.textContent(`${item(env.RICH)} .meta`), / · Shop · /);
    await page.selectOption("#cf-template", "analyst");
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForFunction(() => document.querySelectorAll("#conv-list button").length === 0);
    assert.match(await page.textContent("#conv-count"), /No conversation matches/);
    await page.selectOption("#cf-template", "shop");
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForSelector(item(env.RICH));
    await audit(page, "conversations filtered by template");
    await page.selectOption("#cf-template", "");
    // Votes down.
    await page.selectOption("#cf-votes", "down");
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForFunction((id) => {
      const shown = [...document.querySelectorAll("#conv-list button")].map((b) => b.dataset.conversation);
      return shown.length === 1 && shown[0] === id;
    }, env.VOTED);
    await page.selectOption("#cf-votes", "");
    // Without an answer.
    await page.check("#cf-unanswered");
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForFunction((id) => {
      const shown = [...document.querySelectorAll("#conv-list button")].map((b) => b.dataset.conversation);
      return shown.length === 1 && shown[0] === id;
    }, env.UNANSWERED_ID);
    await page.uncheck("#cf-unanswered");
    // Dates: tomorrow on finds nothing; a start after the end is refused with a message.
    const day = (offset) => new Date(Date.now() + offset * 86400000).toLocaleDateString("en-CA");
    await page.fill("#cf-from", day(1));
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForFunction(() => document.querySelectorAll("#conv-list button").length === 0);
    assert.match(await page.textContent("#conv-count"), /No conversation matches/);
    await page.fill("#cf-to", day(-1));
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForSelector("#conv-filter-error:not([hidden])");
    await page.fill("#cf-from", day(-1));
    await page.fill("#cf-to", day(0));
    await page.click('#conv-filter button[type="submit"]');
    await page.waitForSelector(item(env.RICH));
    // Export: CSV and JSON of what the filter takes.
    const [csv] = await Promise.all([page.waitForEvent("download"), page.click("#conv-export-csv")]);
    assert.equal(csv.suggestedFilename(), "conversations.csv");
    const csvText = fs.readFileSync(await csv.path(), "utf8");
    assert.ok(csvText.includes(env.RICH_QUESTION), "the CSV holds the question");
    assert.match(csvText, /"conversation_id","user_id","seq","role"/);
    const [json] = await Promise.all([page.waitForEvent("download"), page.click("#conv-export-json")]);
    const exported = JSON.parse(fs.readFileSync(await json.path(), "utf8"));
    assert.ok(exported.messages.some((m) => m.content === env.RICH_QUESTION && m.conversation_id === env.RICH));
    assert.ok(!exported.messages.some((m) => m.conversation_id === env.GREETING_ONLY), "never the unasked one");
    // Phone.
    await page.setViewportSize(PHONE);
    await page.click(item(env.RICH));
    await page.waitForSelector("#conv-messages .cw-chart svg");
    await fitsPhone(page, "conversations");
    await audit(page, "conversations with a rich answer (phone)");
    await shot(page, "conversation-phone");
    await clean(page, errors);
  },

  // Item 12: a rental site's records go under the schema's first entity by default.
  async records() {
    const { page, errors } = await openConsole();
    await signIn(page);
    await tab(page, "knowledge");
    await page.waitForFunction(() => document.querySelector("#r-kind").value === "rental");
    await page.waitForFunction(() => document.querySelector("#r-entity").value !== "");
    assert.equal(await page.inputValue("#r-entity"), "room");
    await page.fill("#r-body", JSON.stringify({ rows: [{ id: "p1", title: "Phòng 1", price: 2500000, district: "Quận 3", city: "TP.HCM", status: "available" }] }));
    await page.click('#records-form button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#records-done").textContent === "Uploaded 1 record.");
    assert.equal(await page.isHidden("#records-error"), true, "no error");
    await shot(page, "records");
    await clean(page, errors);
  },

  // Item 10: Try it as a user: the panel speaks for that user, so their data is found.
  async try_as() {
    const { page, errors } = await openConsole();
    await signIn(page);
    await tab(page, "try");
    await page.waitForSelector("#try-blocked:not([hidden])");
    await page.click("#try-allow");
    const handle = await page.waitForSelector("#try-panel iframe", { state: "attached" });
    let frame = await handle.contentFrame();
    await frame.waitForSelector('.cw-panel[data-status="ready"]');
    // As the user: no user-token secret yet, so the console offers to create one.
    await page.fill("#as-user", env.USER);
    await page.click('#try-as button[type="submit"]');
    await page.waitForSelector("#try-secret:not([hidden])");
    await page.click("#try-secret-create");
    await page.waitForFunction((user) => document.querySelector("#try-as-state").textContent.includes(user), env.USER);
    assert.match(await page.textContent("#try-secret-value"), /^uts_/);
    // The panel restarted as that user; the question reaches their data.
    // identify() restarted the panel's conversation as that user (the old one was anonymous).
    await page.waitForTimeout(1500);
    await frame.waitForSelector('.cw-panel[data-status="ready"]');
    await frame.waitForFunction(() => document.querySelectorAll(".cw-bot").length === 1);
    await frame.fill("#cw-input", env.QUESTION);
    await frame.press("#cw-input", "Enter");
    await frame.waitForFunction(() => {
      const bots = document.querySelectorAll(".cw-bot");
      return bots.length > 1 && bots[bots.length - 1].dataset.state === "done";
    });
    const text = await frame.$$eval(".cw-bot .cw-body", (els) => els.map((e) => e.textContent).pop());
    assert.ok(text.includes(env.ANSWER), `the user's data answered: ${text}`);
    assert.ok(!text.includes(env.NO_DATA), "not the no-data sentence");
    // The token is the panel's only credential beyond the public key: no secret in the frame.
    const secret = await page.textContent("#try-secret-value");
    const frameHtml = await frame.content();
    assert.ok(!frameHtml.includes(env.SECRET_KEY) && !frameHtml.includes(secret), "no secret in the panel");
    await shot(page, "try-as-user");
    // The conversation, reviewed: its user and its tool calls as rows.
    await tab(page, "conversations");
    await page.waitForFunction((user) => [...document.querySelectorAll("#conv-list button .meta")].some((m) => m.textContent.includes(user)), env.USER);
    const convo = page.locator("#conv-list button", { hasText: env.QUESTION }).first();
    await convo.click();
    await page.waitForSelector("#conv-messages .cw-tool");
    const tools = await page.$$eval("#conv-messages .cw-tool", (ts) => ts.map((x) => `${x.textContent}|${x.dataset.state}`));
    // The answer's two tool calls (get_data_schema, aggregate_data), both succeeded.
    assert.equal(tools.length, 2, `tool rows: ${tools}`);
    assert.ok(tools.every((x) => x.endsWith("|done")), `tool rows: ${tools}`);
    await shot(page, "conversation-tools");
    // Back to anonymous: the no-data answer again.
    await tab(page, "try");
    await page.click("#as-anonymous");
    await page.waitForFunction(() => /anonymous/.test(document.querySelector("#try-as-state").textContent));
    await clean(page, errors);
  },
};

try {
  await scenarios[scenario]();
  console.log(`ok ${scenario}`);
} finally {
  await context.close();
}
