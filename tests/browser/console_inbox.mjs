// The merchant console's waiting list and rough edges (issue 45, items 3 and 9) in real
// headless Chromium. axe-core audits every state touched (0 critical, 0 serious), desktop
// and phone.
//
// Usage: node console_inbox.mjs <scenario> <console_url> <artifact_dir> <profile_dir>
// Scenarios and their environment:
//   inbox  SECRET_KEY; VERIFIED, LABELLED, ANONYMOUS (waiting conversations' ids) and
//          VERIFIED_QUESTION, LABEL_QUESTION, ANON_QUESTION (what each one wants)
//   rough  SECRET_KEY (a rental site)
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const [scenario, consoleUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const TIMEOUT = 30000;
const AXE = fs.readFileSync(path.join(process.cwd(), "node_modules/axe-core/axe.min.js"), "utf8");
const origin = new URL(consoleUrl).origin;

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: DESKTOP,
  locale: "vi-VN",
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
    // A stand-in for the Notification API that records what the console does with it:
    // permission "default" until asked, granted when asked.
    window.__notes = [];
    window.__asked = 0;
    class FakeNotification {
      constructor(title, options) {
        window.__notes.push({ title, body: (options && options.body) || "" });
      }
      static requestPermission() {
        window.__asked += 1;
        FakeNotification.permission = "granted";
        return Promise.resolve("granted");
      }
    }
    FakeNotification.permission = "default";
    window.Notification = FakeNotification;
  });
  // A clock the test can move forward (it runs on its own meanwhile).
  await page.clock.install();
  await page.goto(consoleUrl, { waitUntil: "load" });
  return { page, errors };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `console-inbox-${name}.png`), fullPage: true });
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

/** axe-core over the page: no critical or serious violation. */
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

/** A visitor (secret key, a proven user id) asks `question`, then presses "Gặp nhân viên". */
async function newWaiting(userId, question) {
  const call = async (url, body) => {
    const response = await fetch(origin + url, {
      method: "POST",
      headers: { "x-api-key": env.SECRET_KEY, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${url}: ${response.status} ${text}`);
    return text;
  };
  const id = JSON.parse(await call("/conversations", { user_id: userId })).conversation_id;
  await call(`/conversations/${id}/messages`, { content: question });
  await call(`/conversations/${id}/messages`, { content: "Gặp nhân viên" });
  return id;
}

const row = (id) => `#handoff-list button[data-conversation="${id}"]`;

const scenarios = {
  // Item 9: the console's rough edges (a rental site).
  async rough() {
    const { page, errors } = await openConsole();
    await signIn(page);
    // The header and the template select use words, not keys.
    const line = await page.textContent("#site-line");
    assert.ok(line.endsWith(" · Cho thuê phòng"), line);
    assert.ok(!/site_|rental/.test(line), line);
    await tab(page, "assistant");
    const options = await page.$$eval("#f-template option", (os) => os.map((o) => o.textContent));
    assert.deepEqual(options, ["Cửa hàng", "Hỗ trợ có kiểm soát", "Cho thuê phòng", "Cơ sở tri thức", "Phân tích dữ liệu"]);
    assert.equal(await page.inputValue("#f-template"), "rental");
    assert.match(await page.textContent('label[for="f-rental"]'), /^Cho thuê phòng: /);
    // The template's settings with their defaults: under the box, and as its placeholder.
    await page.waitForSelector('details[data-defaults="rental"]:not([hidden])');
    await page.click('details[data-defaults="rental"] summary');
    const defaults = await page.textContent('details[data-defaults="rental"] pre');
    assert.match(defaults, /"row_cap": 100/);
    assert.match(defaults, /"show_role_label": true/);
    assert.match(defaults, /"entity": "room"/);
    assert.match(await page.textContent('details[data-defaults="rental"] summary'), /Giá trị mặc định/);
    if (!(await page.inputValue("#f-rental"))) assert.match(await page.getAttribute("#f-rental", "placeholder"), /"row_cap": 100/);
    assert.ok(await page.isHidden('details[data-defaults="analyst"]'), "only the site's template");
    await shot(page, "template-defaults");
    await audit(page, "assistant with the defaults (desktop)");

    // Records: an example; a plain array accepted; Vietnamese errors; a readable success.
    await tab(page, "knowledge");
    await page.waitForFunction(() => document.querySelector("#r-entity").value !== "");
    const example = await page.textContent("#r-example");
    assert.match(example, /^Ví dụ: \[/, example);
    assert.ok((await page.getAttribute("#r-body", "placeholder")).includes('"id": "p101"'));
    assert.match(await page.textContent('#r-kind option[value="rental"]'), /Cho thuê phòng/);
    const submit = () => page.click('#records-form button[type="submit"]');
    const error = async () => { await page.waitForSelector("#records-error:not([hidden])"); return page.textContent("#records-error"); };
    await page.fill("#r-body", "[{id: p1}]");
    await submit();
    assert.match(await error(), /^Đây không phải JSON hợp lệ \(.*\)\. Hãy dán một mảng JSON như ví dụ\.$/);
    await page.fill("#r-body", '[{"title": "Phòng thiếu id"}]');
    await submit();
    assert.equal(await error(), "Hồ sơ thứ 1 không có id.");
    await page.fill("#r-body", '[{"id": "p1", "no_such_column": 1}]');
    await submit();
    assert.match(await error(), /^Worker không nhận các hồ sơ: /);
    await audit(page, "records error (desktop)");
    const rows = [1, 2, 3].map((i) => ({ id: `p${i}`, title: `Phòng ${i}`, price: 2500000 + i, district: "Quận 3", city: "TP.HCM", status: "available" }));
    await page.fill("#r-body", JSON.stringify(rows));
    await submit();
    await page.waitForFunction(() => document.querySelector("#records-done").textContent === "Đã tải lên 3 hồ sơ.");
    assert.ok(await page.isHidden("#records-error"));
    // The API's wrapped body still works.
    await page.fill("#r-body", JSON.stringify({ rows: rows.slice(0, 1) }));
    await submit();
    await page.waitForFunction(() => document.querySelector("#records-done").textContent === "Đã tải lên 1 hồ sơ.");
    await shot(page, "records-desktop");
    await page.setViewportSize(PHONE);
    await fitsPhone(page, "records");
    await shot(page, "records-phone");
    await audit(page, "records (phone)");
    await page.setViewportSize(DESKTOP);

    // Try it: the panel's "+" is the one "new conversation" control; retrieval's empty state.
    await tab(page, "try");
    assert.equal(await page.$$eval("#tab-try button", (bs) => bs.filter((b) => /hội thoại mới|new conversation/i.test(b.textContent)).length), 0);
    await page.check("#show-retrieval");
    assert.ok(await page.isVisible("#retrieval-empty"), "an empty state under the ticked box");
    assert.match(await page.textContent("#retrieval-empty"), /Hãy đặt một câu hỏi trong khung chat/);
    await audit(page, "try (desktop)");

    // Keys: the new keys have copy buttons that copy them.
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    await tab(page, "keys");
    await page.check("#rotate-confirm");
    await page.click("#rotate");
    await page.waitForSelector("#new-keys:not([hidden])");
    for (const which of ["public", "secret"]) {
      const button = `button[data-copy="new-${which}-key"]`;
      assert.ok(await page.isVisible(button), `${which} key copy button`);
      await page.click(button);
      await page.waitForFunction((b) => document.querySelector(b).nextElementSibling.textContent === "Đã sao chép.", button);
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, await page.textContent(`#new-${which}-key`));
      assert.match(copied, which === "public" ? /^pk_/ : /^sk_/);
    }
    await shot(page, "new-keys");
    await audit(page, "new keys (desktop)");
    await clean(page, errors);

  },

  // Item 3: rows that can be triaged, the title, the notification, the dashboard.
  async inbox() {
    const { page, errors } = await openConsole();
    await signIn(page);
    // The dashboard: handoff figures; the button's text is not a top question.
    await page.waitForSelector("#dash-handoff svg[role='img']");
    const figures = await page.getAttribute("#dash-handoff svg", "aria-label");
    assert.match(figures, /Yêu cầu gặp nhân viên: 4\b/, figures);
    assert.match(figures, /Nhân viên đã tiếp nhận: 1\b/, figures);
    assert.match(await page.textContent("#dash-handoff-median"), /Thời gian chờ trung vị trước khi nhân viên tiếp nhận: \d+ giây\./);
    const top = await page.$$eval("#dash-top svg text", (ts) => ts.map((x) => x.textContent));
    assert.ok(!top.includes("Gặp nhân viên"), `not a top question: ${top}`);
    assert.ok(top.includes(env.VERIFIED_QUESTION), `${top}`);
    await shot(page, "overview-handoff");

    // The title counts the waiting visitors, on every tab.
    await page.waitForFunction(() => document.title.startsWith("(3) "));
    await tab(page, "handoff");
    await page.waitForSelector(row(env.VERIFIED));
    const text = async (id, sel) => (await page.textContent(`${row(id)} ${sel}`)).trim();
    // What each visitor wants, never the notice.
    assert.equal(await text(env.VERIFIED, "[data-question]"), env.VERIFIED_QUESTION);
    assert.equal(await text(env.LABELLED, "[data-question]"), env.LABEL_QUESTION);
    assert.equal(await text(env.ANONYMOUS, "[data-question]"), env.ANON_QUESTION);
    const listText = await page.textContent("#handoff-list");
    assert.ok(!/đã báo nhân viên/i.test(listText), `no notice in the list: ${listText}`);
    // Who they are.
    assert.equal(await text(env.VERIFIED, "[data-visitor]"), "khach-0042");
    assert.equal(await text(env.VERIFIED, "[data-verified]"), "đã xác minh");
    assert.equal(await text(env.LABELLED, "[data-visitor]"), "Chị Hoa");
    assert.equal(await text(env.LABELLED, "[data-unverified]"), "nhãn chưa xác minh");
    assert.equal(await page.$$eval(`${row(env.LABELLED)} [data-verified]`, (n) => n.length), 0);
    assert.equal(await text(env.ANONYMOUS, "[data-visitor]"), "Khách ẩn danh");
    // How long they have waited, kept current.
    assert.equal(await text(env.VERIFIED, "[data-waited]"), "đã chờ chưa tới 1 phút");
    await page.clock.fastForward("03:05");
    await page.waitForFunction((sel) => document.querySelector(sel).textContent === "đã chờ 3 phút",
      `${row(env.VERIFIED)} [data-waited]`);
    await shot(page, "waiting-desktop");
    await audit(page, "waiting list (desktop)");

    // English: the same words in English.
    await page.selectOption("#lang", "en");
    await page.waitForFunction((sel) => /^waiting \d+ min$/.test(document.querySelector(sel).textContent),
      `${row(env.VERIFIED)} [data-waited]`);
    assert.equal(await text(env.ANONYMOUS, "[data-visitor]"), "Anonymous visitor");
    await page.selectOption("#lang", "vi");

    // The detail names the visitor, not a raw id.
    await page.click(row(env.LABELLED));
    await page.waitForSelector("#handoff-view:not([hidden])");
    assert.equal(await page.textContent("#handoff-title"), "Hội thoại với Chị Hoa");

    // Notifications: nothing asked before the click; asked on it; a new visitor announced.
    assert.equal(await page.evaluate(() => window.__asked), 0, "not asked before a click");
    assert.ok(await page.isVisible("#handoff-notify"), "the notify button");
    await page.click("#handoff-notify");
    assert.equal(await page.evaluate(() => window.__asked), 1);
    await page.waitForSelector("#handoff-notify", { state: "hidden" });
    assert.match(await page.textContent("#handoff-notify-status"), /Đã bật thông báo/);
    assert.deepEqual(await page.evaluate(() => window.__notes), [], "the ones already waiting are not announced");
    const fresh = await newWaiting("khach-moi", "Laptop Dell XPS 13 còn hàng không?");
    await page.clock.fastForward("00:05");
    await page.waitForSelector(row(fresh));
    await page.waitForFunction(() => document.title.startsWith("(4) "));
    const notes = await page.evaluate(() => window.__notes);
    assert.equal(notes.length, 1, JSON.stringify(notes));
    assert.equal(notes[0].title, "Có khách đang chờ nhân viên");
    assert.match(notes[0].body, /Laptop Dell XPS 13 còn hàng không\?/);
    await audit(page, "waiting list with the detail (desktop)");

    // Phone: the rows fit.
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(200);
    await fitsPhone(page, "waiting list");
    await page.locator("#handoff-list").scrollIntoViewIfNeeded();
    await shot(page, "waiting-phone");
    await audit(page, "waiting list (phone)");
    await page.setViewportSize(DESKTOP);

    // Message kinds in words, as the Conversations filter words templates.
    await tab(page, "conversations");
    await page.click(`#conv-list button[data-conversation="${env.VERIFIED}"]`);
    await page.waitForSelector('#conv-messages li.assistant[data-kind="handoff"]');
    const metas = await page.$$eval("#conv-messages li > .meta", (ms) => ms.map((m) => m.textContent));
    // The "a person will answer" notice (kind `handoff`) and the visitor's words (`text`).
    assert.ok(metas.some((m) => m.startsWith("Trợ lý · Thông báo chuyển nhân viên · ")), metas.join(" | "));
    assert.ok(metas.some((m) => /^Khách · \d/.test(m)), metas.join(" | "));
    assert.ok(!metas.some((m) => / · (answer|text|greeting|handoff) · /.test(m)), metas.join(" | "));
    await audit(page, "conversation with kinds in words (desktop)");

    // Signing out ends the count in the title; signing in again opens the first tab.
    await page.click("#sign-out");
    await page.waitForSelector("#signin:not([hidden])");
    assert.ok(!/^\(\d+\)/.test(await page.title()), await page.title());
    await signIn(page);
    await page.waitForSelector("#tab-overview:not([hidden])");
    assert.equal(await page.getAttribute('.tabs button[data-tab="overview"]', "aria-selected"), "true");
    await clean(page, errors);
  },
};

try {
  await scenarios[scenario]();
  console.log(`ok ${scenario}`);
} finally {
  await context.close();
}
