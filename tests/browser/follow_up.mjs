// Issue 45 in real headless Chromium: "when nobody is free" and the waiting list's page.
// The widget on a shop's page (the host page at `/?…`, so it has a path and query), the
// console signed in with the secret key.
//
// Usage: node follow_up.mjs <scenario> <page_url> <artifact_dir> <profile_dir>
// Scenarios:
//   callback  outside office hours, the visitor asks for a person: under the notice, a form
//             to leave a phone number or e-mail (labelled, in the conversation's language);
//             a wrong contact is refused with a message tied to the field; a right one is
//             stored and the panel says so. The console's "Follow-ups" list shows the
//             contact, the question and the page; "Contacted" marks it done. Then the same
//             in English (a conversation in English: English labels). Desktop light, phone
//             dark (VIEWPORT, SCHEME).
//   page      within office hours, the visitor asks for a person from a page with a path
//             and query: the console's waiting list names that page, as text.
// Environment: WORKER, SECRET_KEY; VIEWPORT (desktop | phone), SCHEME (light | dark).
// Screenshots: <artifact_dir>/follow-up-<scenario>-<state>-<viewport>-<scheme>.png.
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import path from "node:path";
import { readFileSync } from "node:fs";

const [scenario, pageUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const TIMEOUT = 30000;
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const viewport = env.VIEWPORT || "desktop";
const scheme = env.SCHEME || "light";

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: VIEWPORTS[viewport],
  colorScheme: scheme,
  locale: "vi-VN",
});
context.setDefaultTimeout(TIMEOUT);

/** A call to the Worker with the site's secret key. */
async function api(method, route, body) {
  const r = await fetch(env.WORKER + route, {
    method, headers: { "x-api-key": env.SECRET_KEY, "content-type": "application/json" },
    body: body && JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, text, json: (() => { try { return JSON.parse(text); } catch (_) { return null; } })() };
}

async function openPage(url = pageUrl) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url, { waitUntil: "load" });
  return { page, errors };
}

async function openPanel(page) {
  await page.locator("[data-concierge] button").first().click();
  const handle = await page.waitForSelector("[data-concierge] iframe", { state: "attached" });
  const frame = await handle.contentFrame();
  await frame.waitForSelector('.cw-panel[data-status="ready"]');
  return frame;
}

async function reopen(page) {
  await page.reload({ waitUntil: "load" });
  return openPanel(page);
}

async function send(frame, text) {
  await frame.fill("#cw-input", text);
  await frame.press("#cw-input", "Enter");
}

const conversationOf = (frame) => frame.evaluate(() =>
  localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."))));

/** The panel's log as a visitor sees it: per message, its kind, what it says, who wrote it
 * (the visible label), its state, and which controls show under it. */
function log(frame) {
  return frame.$$eval(".cw-stack > .cw-msg, .cw-stack > .cw-notice", (els) => els.map((el) => {
    const visible = (sel) => [...el.querySelectorAll(sel)].filter((b) => b.offsetParent !== null).length;
    return {
      kind: el.classList.contains("cw-notice") ? "notice" : el.classList.contains("cw-user") ? "user"
        : el.classList.contains("cw-human") ? "human" : "bot",
      text: el.querySelector(".cw-body").textContent,
      who: el.classList.contains("cw-human") ? el.querySelector(".cw-who").textContent : "",
      state: el.dataset.state,
      votes: visible(".cw-vote"),
      copy: visible(".cw-copy"),
      regenerate: visible(".cw-regen"),
      error: visible(".cw-error") ? el.querySelector(".cw-error").textContent : "",
      retry: visible(".cw-retry"),
      note: visible(".cw-note") ? [...el.querySelectorAll(".cw-note")].filter((n) => n.offsetParent !== null).map((n) => n.textContent).join(" ") : "",
    };
  }));
}

/** Wait until `ok(log)` holds; fails with the log otherwise. */
async function until(frame, what, ok) {
  const deadline = Date.now() + TIMEOUT;
  let last = [];
  while (Date.now() < deadline) {
    last = await log(frame);
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${what} never came; the panel shows ${JSON.stringify(last, null, 1)}`);
}

/** Settled: the last message is over and nothing streams. */
const settled = (l) => l.length > 0 && !l.some((m) => m.state === "waiting" || m.state === "streaming");

const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");
/** axe-core over `target`: no critical or serious violation. */
async function axe(target, what) {
  await target.evaluate(AXE);
  const result = await target.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) }));
  });
  const bad = result.filter((v) => v.impact === "critical" || v.impact === "serious");
  assert.deepEqual(bad, [], `axe (${what}): ${JSON.stringify(bad)}`);
}

async function shot(page, state) {
  await page.screenshot({ path: path.join(artifacts, `follow-up-${scenario}-${state}-${viewport}-${scheme}.png`) });
}


const PAGE = pageUrl + "?san-pham=rtx-4060&mau=den";

/** Outside office hours from now on: open only the day after tomorrow (UTC). */
async function closed() {
  const day = ((new Date().getUTCDay() + 6) % 7 + 2) % 7 + 1;
  const r = await api("PATCH", "/admin/site", { handoff: { enabled: true, time_zone: "UTC", office_hours: [{ days: [day], start: "09:00", end: "17:00" }] } });
  assert.equal(r.status, 200, r.text);
}

/** The console, signed in, on the "Waiting for a person" tab. */
async function console_(viewportPage) {
  const desk = await openPage(env.WORKER + "/console");
  await desk.page.fill("#signin-key", env.SECRET_KEY);
  await desk.page.click('#signin-form button[type="submit"]');
  await desk.page.waitForSelector("#app:not([hidden])");
  await desk.page.click('.tabs button[data-tab="handoff"]');
  return desk;
}

/** The contact form under the last notice: its visible words. */
function formOf(widget) {
  return widget.$$eval(".cw-contact", (forms) => {
    const f = forms[forms.length - 1];
    return {
      intro: f.querySelector("p").textContent,
      labels: [...f.querySelectorAll("label")].map((l) => l.firstChild.textContent),
      button: f.querySelector("button").textContent,
    };
  });
}

const scenarios = {
  async callback() {
    await closed();
    const { page, errors } = await openPage(PAGE);
    let widget = await openPanel(page);
    await widget.locator(".cw-handoff").click();
    await until(widget, "the outside-hours notice", (l) => settled(l) && l.some((m) => m.text.startsWith("Hiện đang ngoài giờ")));
    await widget.waitForSelector(".cw-contact");
    assert.deepEqual(await formOf(widget), {
      intro: "Để lại số điện thoại hoặc email, nhân viên sẽ liên hệ lại với bạn.",
      labels: ["Số điện thoại hoặc email", "Câu hỏi của bạn"],
      button: "Gửi",
    });
    await shot(page, "form");
    await axe(widget, "the contact form");
    // A wrong contact: refused, said next to the field, focus on it.
    const contact = widget.getByLabel("Số điện thoại hoặc email");
    const question = widget.getByLabel("Câu hỏi của bạn");
    await contact.fill("gọi em nhé");
    await question.fill("Card RTX 4060 màu đen còn hàng không?");
    await widget.locator(".cw-contact button").click();
    const error = widget.locator(".cw-contact [role=alert]");
    await error.waitFor();
    assert.match(await error.textContent(), /^Vui lòng nhập số điện thoại/);
    assert.equal(await contact.getAttribute("aria-invalid"), "");
    assert.equal(await contact.getAttribute("aria-describedby"), await error.getAttribute("id"));
    assert.ok(await contact.evaluate((e) => e === document.activeElement), "focus on the wrong field");
    await shot(page, "invalid");
    await axe(widget, "the contact form with an error");
    // A right one, sent with the keyboard: stored, and the panel says so.
    await contact.fill("0901 234 567");
    await contact.press("Enter");
    const done = widget.locator(".cw-contact [role=status]");
    await done.waitFor();
    assert.equal(await done.textContent(), "Đã ghi nhận. Nhân viên sẽ liên hệ lại với bạn qua +84901234567.");
    await shot(page, "sent");
    await axe(widget, "the contact form, sent");
    const listed = await api("GET", "/admin/follow-ups");
    assert.equal(listed.json.open, 1, listed.text);
    const item = listed.json.follow_ups[0];
    assert.deepEqual([item.contact, item.question, item.page], ["+84901234567", "Card RTX 4060 màu đen còn hàng không?", "/?san-pham=rtx-4060&mau=den"]);

    // The console: the follow-up, then "Contacted".
    const desk = await console_();
    const row = desk.page.locator(`#follow-up-list li[data-follow-up="${item.id}"]`);
    await row.waitFor();
    assert.equal(await row.locator("[data-contact]").textContent(), "+84901234567");
    assert.equal(await row.locator(".question").textContent(), "Card RTX 4060 màu đen còn hàng không?");
    assert.equal(await row.locator(".page").textContent(), "đang ở trang /?san-pham=rtx-4060&mau=den");
    assert.match(await desk.page.textContent("#follow-up-count"), /^1 khách cần gọi lại/);
    await desk.page.screenshot({ path: path.join(artifacts, `follow-up-callback-console-${viewport}-${scheme}.png`), fullPage: true });
    await axe(desk.page, "the console's follow-ups");
    await row.locator("[data-done-button]").click();
    await desk.page.waitForFunction(() => document.querySelector("#follow-up-count").textContent === "Không có khách nào cần gọi lại.");
    assert.equal(await row.getAttribute("data-done"), "true");
    assert.match(await row.locator(".meta").textContent(), /^đã liên hệ lúc/);
    await desk.page.screenshot({ path: path.join(artifacts, `follow-up-callback-console-done-${viewport}-${scheme}.png`), fullPage: true });
    await axe(desk.page, "the console's follow-ups, one contacted");
    const after = await api("GET", "/admin/follow-ups");
    assert.equal(after.json.open, 0, after.text);

    // In English: the conversation's language, the form's words.
    await widget.locator(".cw-new").click();
    await until(widget, "a new conversation", (l) => settled(l) && l.length === 1);
    await send(widget, "I want to talk to a human, please");
    await until(widget, "the English outside-hours notice", (l) => settled(l) && l.length >= 3 && /office hours|outside/i.test(l[l.length - 1].text));
    await widget.waitForFunction(() => document.querySelectorAll(".cw-contact").length === 1 && !document.querySelector(".cw-contact [role=status]"));
    assert.deepEqual(await formOf(widget), {
      intro: "Leave a phone number or e-mail and our staff will get back to you.",
      labels: ["Phone number or e-mail", "Your question"],
      button: "Send",
    });
    await widget.getByLabel("Phone number or e-mail").fill("an@");
    await widget.getByLabel("Your question").fill("Do you ship to Da Nang?");
    await widget.locator(".cw-contact button").click();
    await widget.locator(".cw-contact [role=alert]").waitFor();
    assert.match(await widget.textContent(".cw-contact [role=alert]"), /^Please enter a phone number/);
    await widget.getByLabel("Phone number or e-mail").fill("an.nguyen@example.com");
    await widget.locator(".cw-contact button").click();
    await widget.locator(".cw-contact [role=status]").waitFor();
    assert.equal(await widget.textContent(".cw-contact [role=status]"), "Thank you. Our staff will get back to you at an.nguyen@example.com.");
    await shot(page, "sent-en");
    await axe(widget, "the English contact form, sent");
    assert.deepEqual([...errors, ...desk.errors], []);
    console.log("ok callback");
  },

  async page() {
    const on = await api("PATCH", "/admin/site", { handoff: { enabled: true, wait_seconds: 600 } });
    assert.equal(on.status, 200, on.text);
    const { page, errors } = await openPage(PAGE);
    const widget = await openPanel(page);
    await widget.locator(".cw-handoff").click();
    await until(widget, "the waiting notice", (l) => settled(l) && l.some((m) => m.kind === "notice" && m.text === "Đang chờ nhân viên…"));
    const id = await conversationOf(widget);
    const desk = await console_();
    const row = desk.page.locator(`#handoff-list button[data-conversation="${id}"]`);
    await row.waitFor();
    assert.equal(await row.locator("[data-page]").textContent(), "đang ở trang /?san-pham=rtx-4060&mau=den");
    assert.equal(await row.locator("a").count(), 0, "the page is text, not a link");
    await desk.page.screenshot({ path: path.join(artifacts, `follow-up-page-console-${viewport}-${scheme}.png`), fullPage: true });
    await axe(desk.page, "the waiting list with a page");
    assert.deepEqual([...errors, ...desk.errors], []);
    console.log("ok page");
  },
};

try {
  const run = scenarios[scenario];
  assert.ok(run, `unknown scenario ${scenario}`);
  await run();
} finally {
  await context.close();
}
