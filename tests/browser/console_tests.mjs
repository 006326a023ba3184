// The console's test tools in real headless Chromium (issue 42): a test case made from a
// real conversation in one click; and the publish gate: Publish on a site with
// test cases runs them against the draft and the live configuration with visible progress,
// shows the pass rates, names every case that passes on live and fails on the draft in a
// dialog, publishes only when confirmed, and lists the version as published over them;
// audited with axe-core (0 critical, 0 serious).
//
// Usage: node console_tests.mjs <scenario> <console_url> <artifact_dir> <profile_dir>
// Scenario `from_conversation`, environment: SECRET_KEY, LOCALE, QUESTION (the visitor's
// question of the site's one conversation), CONTAINS (the proposed texts, `|`-separated).
// Scenario `run_tests` (a run against the draft with its progress and results) and
// scenario `publish_gate`, environment: SECRET_KEY, LOCALE (`en-US` or `vi-VN`),
// REGRESSED (the names of the cases the draft breaks, `|`-separated), PASSED_DRAFT,
// TOTAL (the draft's passes and the number of cases).
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const [scenario, consoleUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const vi = env.LOCALE === "vi-VN";
const AXE = fs.readFileSync(path.join(process.cwd(), "node_modules/axe-core/axe.min.js"), "utf8");

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 800 },
  locale: env.LOCALE || "en-US",
});
context.setDefaultTimeout(60000);

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

async function signIn() {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(consoleUrl, { waitUntil: "load" });
  await page.fill("#signin-key", env.SECRET_KEY);
  await page.click('#signin-form button[type="submit"]');
  await page.waitForSelector("#app:not([hidden])");
  return { page, errors };
}

const scenarios = {
  // A test case from a real conversation in one click: its checks proposed, edited, saved.
  async from_conversation() {
    const { page, errors } = await signIn();
    await page.click('.tabs button[data-tab="conversations"]');
    await page.waitForSelector("#tab-conversations:not([hidden])");
    await page.locator("#conv-list button", { hasText: env.QUESTION }).first().click();
    await page.click("#conv-messages [data-make-test]");
    await page.waitForSelector("#test-form:not([hidden])");
    await page.waitForFunction(() => document.querySelector("#tf-question").value.length > 0);
    assert.equal(await page.inputValue("#tf-question"), env.QUESTION);
    assert.equal(await page.inputValue("#tf-contains"), env.CONTAINS.split("|").join("\n"));
    assert.equal(await page.inputValue("#tf-language"), "vi");
    assert.equal(await page.textContent("#test-form-title"), vi ? "Ca kiểm thử mới từ câu trả lời này" : "New test case from this answer");
    await audit(page, "test from a conversation");
    await page.fill("#tf-not-contains", "xin lỗi");
    await page.click('#test-form button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#tf-result").textContent.length > 0);
    assert.equal(await page.textContent("#tf-result"), vi ? "Đã lưu ca kiểm thử: trang có 1/100 ca." : "Test saved: the site has 1 of 100.");
    await page.screenshot({ path: path.join(artifacts, `console-test-from-conversation-${vi ? "vi" : "en"}.png`), fullPage: true });
    assert.deepEqual(errors, [], "no page error");
  },

  // A run against the draft from the Assistant tab: its progress, then each case's result.
  async run_tests() {
    const { page, errors } = await signIn();
    await page.click('.tabs button[data-tab="assistant"]');
    await page.waitForSelector("#tab-assistant:not([hidden])");
    await page.waitForFunction(() => document.querySelector("#tests-count").textContent.length > 0);
    assert.ok((await page.textContent("#tests-count")).startsWith(vi ? `${env.TOTAL} ca kiểm thử` : `${env.TOTAL} test cases`));
    await page.click("#run-draft");
    await page.waitForSelector("#run-line:not([hidden])");
    const total = Number(env.TOTAL);
    const done = vi ? `Xong ${total}/${total}: ${env.PASSED_DRAFT} ca đạt` : `${total} of ${total} done: ${env.PASSED_DRAFT} passed`;
    await page.waitForFunction((text) => document.querySelector("#run-status").textContent === text, done);
    assert.deepEqual(await page.$eval("#run-progress", (p) => [p.value, p.max]), [total, total]);
    const failed = await page.$$eval('#run-results li[data-status="failed"]', (items) => items.map((i) => i.textContent).sort());
    const regressed = env.REGRESSED.split("|").sort();
    assert.equal(failed.length, regressed.length, `failed: ${failed}`);
    failed.forEach((text, i) => {
      assert.ok(text.startsWith(regressed[i] + (vi ? " · Trượt · contains" : " · Failed · contains")), text);
    });
    assert.equal(await page.$$eval('#run-results li[data-status="passed"]', (items) => items.length), total - regressed.length);
    await audit(page, "test run");
    assert.deepEqual(errors, [], "no page error");
  },

  async publish_gate() {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(consoleUrl, { waitUntil: "load" });
    await page.fill("#signin-key", env.SECRET_KEY);
    await page.click('#signin-form button[type="submit"]');
    await page.waitForSelector("#app:not([hidden])");
    await page.click('.tabs button[data-tab="assistant"]');
    await page.waitForSelector("#tab-assistant:not([hidden])");
    await page.waitForSelector("#publish:not([disabled])");
    const live = await page.textContent("#draft-state");
    await page.click("#publish");
    // Progress while the runs go, then both finished.
    await page.waitForSelector("#gate:not([hidden])");
    await page.waitForFunction(() => document.querySelector("#gate-status").textContent.length > 0);
    const progress = await page.textContent("#gate-status");
    assert.match(progress, vi ? /Đang chạy kiểm thử: \d+\/\d+/ : /Running the tests: \d+ of \d+/, progress);
    await page.waitForSelector("#gate-regressions:not([hidden])");
    const bar = await page.$eval("#gate-progress", (p) => [p.value, p.max]);
    assert.deepEqual(bar, [2 * Number(env.TOTAL), 2 * Number(env.TOTAL)], "both runs finished");
    const rates = await page.textContent("#gate-rates");
    const expected = vi
      ? `Bản nháp đạt ${env.PASSED_DRAFT}/${env.TOTAL} ca; bản đang áp dụng đạt ${env.TOTAL}/${env.TOTAL} ca.`
      : `Draft passes ${env.PASSED_DRAFT} of ${env.TOTAL}; live passes ${env.TOTAL} of ${env.TOTAL}.`;
    assert.equal(rates, expected);
    const title = await page.textContent("#gate-regressions-title");
    assert.equal(title, vi ? "Bản nháp trượt những ca đang đạt trên bản đang áp dụng" : "The draft fails cases that pass on live");
    const named = await page.$$eval("#gate-regression-list li", (items) => items.map((i) => i.textContent).sort());
    assert.deepEqual(named, env.REGRESSED.split("|").sort(), "the regressions, by name");
    assert.equal(await page.evaluate(() => document.activeElement.id), "gate-confirm", "focus on the confirmation");
    // Nothing published yet.
    assert.equal(await page.textContent("#draft-state"), live);
    await audit(page, "publish gate");
    await page.screenshot({ path: path.join(artifacts, `console-publish-gate-${vi ? "vi" : "en"}.png`), fullPage: true });
    await page.click("#gate-confirm");
    await page.waitForFunction(() => document.querySelector("#publish-result").textContent.length > 0);
    const result = await page.textContent("#publish-result");
    assert.match(result, vi ? /phiên bản \d+/ : /version \d+ is live/, result);
    const newest = await page.textContent("#versions li:first-child .meta");
    const over = env.REGRESSED.split("|").length;
    assert.ok(newest.includes(vi ? `xuất bản dù ${over} ca trượt` : `published over ${over} failing cases`), newest);
    assert.ok(await page.isHidden("#gate-regressions"), "the dialog closed");
    await audit(page, "published");
    assert.deepEqual(errors, [], "no page error");
  },
};

try {
  await scenarios[scenario]();
  console.log(`ok ${scenario}`);
} finally {
  await context.close();
}
