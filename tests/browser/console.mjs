// The merchant console in real headless Chromium, as a merchant uses it.
//
// Usage: node console.mjs <scenario> <console_url> <artifact_dir> <profile_dir>
// Scenarios:
//   console  sign-in refusals, persona → new greeting in the inline panel, a document
//            indexed and retrieved, a conversation with its feedback, install snippet and
//            origin check, phone-width read-only views, key rotation signing out.
//   dataset  a CSV upload shows its inferred columns.
//   learned  a rental site's learned queries are listed (question, SQL) and one is deleted.
// Environment: SECRET_KEY, PUBLIC_KEY (the site's keys), GREETING (the new greeting to set),
// LLM_KEY (an upstream API key to store),
// DOC_ID / DOC_TITLE / DOC_CONTENT / ASK_DOC (the document and a question about it),
// CONVERSATION (a conversation with a vote down), VOTE_COMMENT (that vote's comment),
// CSV_NAME / CSV_USER / CSV_BODY / EXPECT_COLUMNS ("name:type,…") / EXPECT_ROWS /
// EXPECT_ROW_CAP_EN / EXPECT_ROW_CAP_VI (the Storage card's row count and cap) (dataset),
// DELETE_QUESTION / DELETE_SQL (the learned query to delete), KEEP_QUESTION (one to keep) (learned).
// Prints "ok <scenario>" and, for console, "rotated <public_key> <secret_key>" on success;
// exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const [scenario, consoleUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const TIMEOUT = 30000;

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: DESKTOP,
});
context.setDefaultTimeout(TIMEOUT);

/** Every URL the browser requested, to check that no key ever goes into one. */
const requested = [];
context.on("request", (r) => requested.push(r.url()));

async function openConsole() {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("dialog", (d) => d.accept());
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(consoleUrl, { waitUntil: "load" });
  return { page, errors };
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `console-${name}.png`), fullPage: true });
}

async function signIn(page, key) {
  await page.fill("#signin-key", key);
  await page.click('#signin-form button[type="submit"]');
}

async function tab(page, name) {
  await page.click(`.tabs button[data-tab="${name}"]`);
  await page.waitForSelector(`#tab-${name}:not([hidden])`);
}

/** No secret in local storage, cookies or any URL requested so far. */
async function noSecretLeaked(page, secret) {
  const local = await page.evaluate(() => JSON.stringify({ ...localStorage }));
  assert.ok(!local.includes(secret), "the secret key is not in local storage");
  const cookies = JSON.stringify(await context.cookies());
  assert.ok(!cookies.includes(secret), "the secret key is not in a cookie");
  for (const url of requested) assert.ok(!url.includes(secret), `the secret key is not in a URL: ${url}`);
  assert.ok(!page.url().includes(secret), "the secret key is not in the page URL");
}

async function panelFrame(page) {
  const handle = await page.waitForSelector("#try-panel iframe", { state: "attached" });
  const frame = await handle.contentFrame();
  await frame.waitForSelector('.cw-panel[data-status="ready"]');
  return frame;
}

async function botTexts(frame) {
  return frame.$$eval(".cw-bot .cw-body", (els) => els.map((el) => el.textContent));
}

const scenarios = {
  async console() {
    const secret = env.SECRET_KEY;
    const { page, errors } = await openConsole();

    // The served page holds no key at all.
    const html = await page.content();
    assert.ok(!/sk_[0-9a-f]{8}/.test(html) && !html.includes(secret), "no secret in the served HTML");

    // A wrong key, and the public key: refused with a clear message.
    await signIn(page, "sk_" + "0".repeat(48));
    await page.waitForSelector("#signin-error:not([hidden])");
    assert.match(await page.textContent("#signin-error"), /refused/);
    assert.equal(await page.isHidden("#app"), true, "not signed in with a wrong key");
    await signIn(page, env.PUBLIC_KEY);
    await page.waitForFunction(() => /not a secret key/.test(document.querySelector("#signin-error").textContent));
    await shot(page, "wrong-key");

    // Sign in.
    await signIn(page, secret);
    await page.waitForSelector("#app:not([hidden])");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("concierge.console.key")), secret,
      "the key is in the tab's session storage");
    await page.waitForFunction(() => document.querySelector("#f-name").value !== "");
    await tab(page, "assistant"); // the console opens on Overview (issue 26, item 15)
    await shot(page, "assistant");

    // A validation error shows next to its field.
    await page.fill("#f-origins", "not an origin");
    await page.click('#assistant-form button[type="submit"]');
    await page.waitForSelector('.field[data-field="allowed_origins"].invalid');
    assert.match(await page.textContent('.field[data-field="allowed_origins"] .ferr'), /Not an origin/);
    await page.fill("#f-origins", "https://shop.example");
    await page.selectOption("#f-template", "guarded");
    await page.fill("#f-guarded", "{not json");
    await page.click('#assistant-form button[type="submit"]');
    await page.waitForSelector('.field[data-field="guarded"].invalid');
    await page.selectOption("#f-template", "shop");

    // Try it: allow the console's origin, see the current greeting.
    await tab(page, "try");
    await page.waitForSelector("#try-blocked:not([hidden])");
    await page.click("#try-allow");
    let frame = await panelFrame(page);
    await frame.waitForSelector(".cw-bot .cw-body");
    const before = (await botTexts(frame))[0];
    assert.ok(!before.includes(env.GREETING), "the old greeting first");

    // Change the persona's greeting; a new conversation greets with it.
    await tab(page, "assistant");
    await page.fill("#f-greeting", env.GREETING);
    await page.fill("#f-persona", "Em là trợ lý của cửa hàng, trả lời ngắn gọn.");
    // The model's API key: write-only — stored, never shown again.
    await page.fill("#f-api-key", env.LLM_KEY);
    await page.click('#assistant-form button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#assistant-saved").textContent === "Saved.");
    assert.equal(await page.inputValue("#f-api-key"), "", "the key field is emptied");
    assert.match(await page.textContent("#api-key-state"), /A key is stored/);
    assert.ok(!(await page.content()).includes(env.LLM_KEY), "the stored key is not shown");
    await tab(page, "try");
    // The panel's own "+" (the console has no second "new conversation" control).
    assert.equal(await page.$$eval("#tab-try button", (bs) => bs.filter((b) => /new conversation/i.test(b.textContent)).length), 0);
    await frame.click(".cw-new");
    await frame.waitForFunction((greeting) =>
      [...document.querySelectorAll(".cw-bot .cw-body")].some((el) => el.textContent.includes(greeting)), env.GREETING);
    await shot(page, "try-greeting");

    // Add a document, wait until it is indexed.
    await tab(page, "knowledge");
    await page.fill("#d-id", env.DOC_ID);
    await page.fill("#d-title", env.DOC_TITLE);
    await page.fill("#d-content", env.DOC_CONTENT);
    await page.click('#doc-form button[type="submit"]');
    await page.waitForSelector(`tr[data-doc="${env.DOC_ID}"]`);
    await page.waitForSelector(`tr[data-doc="${env.DOC_ID}"] .status[data-status="indexed"]`);
    // Edit loads the stored text; re-index queues that one document.
    await page.click(`tr[data-doc="${env.DOC_ID}"] button:has-text("Edit")`);
    await page.waitForFunction((content) => document.querySelector("#d-content").value === content, env.DOC_CONTENT);
    assert.equal(await page.inputValue("#d-title"), env.DOC_TITLE);
    await page.click(`tr[data-doc="${env.DOC_ID}"] button:has-text("Re-index")`);
    await page.waitForFunction(() => /^1 document\(s\) queued/.test(document.querySelector("#docs-status").textContent));
    await page.waitForSelector(`tr[data-doc="${env.DOC_ID}"] .status[data-status="indexed"]`);
    await shot(page, "knowledge");

    // Ask about it in the panel with retrieval shown: the document is found.
    await tab(page, "try");
    await page.check("#show-retrieval");
    frame = await panelFrame(page);
    const answers = (await botTexts(frame)).length;
    await frame.fill("#cw-input", env.ASK_DOC);
    await frame.press("#cw-input", "Enter");
    await page.waitForFunction((title) =>
      [...document.querySelectorAll("#retrieval .hit strong")].some((el) => el.textContent.includes(title)), env.DOC_TITLE);
    await frame.waitForFunction((n) => {
      const bots = document.querySelectorAll(".cw-bot");
      return bots.length > n && bots[bots.length - 1].dataset.state === "done";
    }, answers);
    await shot(page, "try-retrieval");

    // Conversations: the prepared one with its vote down and comment.
    await tab(page, "conversations");
    const item = `#conv-list button[data-conversation="${env.CONVERSATION}"]`;
    await page.waitForSelector(item);
    assert.equal(await page.textContent(`${item} [data-down]`), "1 down");
    await page.click(item);
    await page.waitForSelector('#conv-messages [data-vote="down"]');
    assert.match(await page.textContent('#conv-messages [data-vote="down"]'), new RegExp(env.VOTE_COMMENT));
    await shot(page, "conversations");

    // Install: the snippet with the public key, and the origin check.
    await tab(page, "install");
    const snippet = await page.textContent("#snippet");
    assert.ok(snippet.includes(`data-site-key="${env.PUBLIC_KEY}"`), snippet);
    assert.ok(snippet.includes(new URL(consoleUrl).origin + "/embed.js"), snippet);
    assert.ok(!snippet.includes(secret));
    await page.selectOption("#i-position", "left");
    assert.match(await page.textContent("#snippet"), /data-position="left" async><\/script>$/);
    await page.fill("#check-url", "https://shop.example/san-pham/1");
    await page.click('#origin-check button[type="submit"]');
    await page.waitForFunction(() => /^Allowed/.test(document.querySelector("#check-result").textContent));
    await page.fill("#check-url", "https://evil.example/");
    await page.click('#origin-check button[type="submit"]');
    await page.waitForFunction(() => /^Not allowed/.test(document.querySelector("#check-result").textContent));
    await shot(page, "install");

    // Phone width: the read-only views fit the screen and still show their data.
    await page.setViewportSize(PHONE);
    for (const name of ["conversations", "knowledge", "install"]) {
      await tab(page, name);
      await shot(page, `phone-${name}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${name} fits a phone (${overflow}px too wide)`);
      const shown = { conversations: item, knowledge: `tr[data-doc="${env.DOC_ID}"]`, install: "#snippet" }[name];
      assert.ok(await page.isVisible(shown), `${name} shows its data on a phone`);
    }
    await page.setViewportSize(DESKTOP);

    // Draft and live (issue 42): the greeting saved above is in the draft, not yet live.
    await tab(page, "assistant");
    await page.waitForFunction(() => /^Draft: not published/.test(document.querySelector("#draft-state").textContent));
    assert.match(await page.textContent("#publish-card"), /shared by the draft and the live configuration/);
    await page.fill("#publish-note", "New greeting");
    await page.click("#publish");
    await page.waitForFunction(() => /^Published: version \d+ is live\.$/.test(document.querySelector("#publish-result").textContent));
    await page.waitForFunction(() => /^Live: version \d+/.test(document.querySelector("#draft-state").textContent));
    assert.equal(await page.isDisabled("#publish"), true, "nothing left to publish");
    await page.waitForFunction(() => document.querySelector("#versions li .status"));
    const versions = await page.$$eval("#versions li", (lis) => lis.map((li) => li.dataset.version));
    assert.ok(versions.length >= 2, `versions listed: ${versions}`);
    assert.equal((await page.textContent("#versions li:first-child .status")).trim(), "Live");
    assert.match(await page.textContent("#versions li:first-child"), /published · .* · New greeting/);
    await shot(page, "versions");
    // Restore the version before it: live again, as a new version; the form shows it.
    await page.click(`#versions li[data-version="${versions[1]}"] button`);
    await page.waitForFunction((n) => document.querySelector("#publish-result").textContent.startsWith(`Version ${n} restored`), versions[1]);
    assert.notEqual(await page.inputValue("#f-greeting"), env.GREETING, "the earlier greeting is back");
    await page.waitForFunction((n) => document.querySelector("#versions li:first-child").textContent.includes(`restored from version ${n}`), versions[1]);

    await noSecretLeaked(page, secret);
    const csp = await page.evaluate(() => window.__csp);
    assert.deepEqual(csp, [], "no CSP violation in the console");
    assert.deepEqual(errors, [], "no page error");

    // Rotate keys: confirmation, new keys shown once, signed out.
    await tab(page, "keys");
    assert.equal(await page.isDisabled("#rotate"), true, "rotation needs the confirmation");
    await page.check("#rotate-confirm");
    await page.click("#rotate");
    await page.waitForSelector("#signin:not([hidden])");
    await page.waitForSelector("#new-keys:not([hidden])");
    const newPublic = await page.textContent("#new-public-key");
    const newSecret = await page.textContent("#new-secret-key");
    assert.match(newPublic, /^pk_[0-9a-f]{48}$/);
    assert.match(newSecret, /^sk_[0-9a-f]{48}$/);
    assert.equal(await page.isHidden("#app"), true, "signed out after rotation");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("concierge.console.key")), null,
      "the old key left session storage");
    await shot(page, "rotated");
    // The old key no longer signs in.
    await signIn(page, secret);
    await page.waitForFunction(() => /refused/.test(document.querySelector("#signin-error").textContent));
    await noSecretLeaked(page, newSecret);
    console.log(`rotated ${newPublic} ${newSecret}`);
  },

  async dataset() {
    const { page, errors } = await openConsole();
    await signIn(page, env.SECRET_KEY);
    await page.waitForSelector("#app:not([hidden])");
    await tab(page, "knowledge");
    const file = path.join(profile, `${env.CSV_NAME}.csv`);
    fs.writeFileSync(file, env.CSV_BODY);
    await page.fill("#ds-name", env.CSV_NAME);
    await page.fill("#ds-user", env.CSV_USER);
    await page.setInputFiles("#ds-file", file);
    await page.click('#data-form button[type="submit"]');
    const row = `tr[data-set="${env.CSV_NAME}"]`;
    await page.waitForSelector(row);
    const columns = await page.textContent(`${row} .columns`);
    for (const pair of env.EXPECT_COLUMNS.split(",")) {
      const [name, type] = pair.split(":");
      assert.ok(columns.includes(`${name} (${type})`), `column ${name} inferred as ${type}: ${columns}`);
    }
    await shot(page, "dataset");
    // The Storage card counts the upload against the site's caps, in the console's
    // language and its number format.
    const usage = 'tr[data-usage="data_rows"]';
    const usageCells = () => page.$$eval(`${usage} td`, (tds) => tds.map((td) => td.textContent.trim()));
    await page.waitForFunction(([sel, rows]) => {
      const td = document.querySelector(`${sel} td:nth-child(2)`);
      return td && td.textContent.trim() === rows;
    }, [usage, env.EXPECT_ROWS]);
    let cells = await usageCells();
    assert.deepEqual(cells.slice(0, 3), ["Rows in data sets", env.EXPECT_ROWS, env.EXPECT_ROW_CAP_EN]);
    await page.selectOption("#lang", "vi");
    await page.waitForFunction((sel) => {
      const td = document.querySelector(`${sel} td`);
      return td && td.textContent.trim() === "Số dòng trong các bộ dữ liệu";
    }, usage);
    cells = await usageCells();
    assert.deepEqual(cells.slice(0, 3), ["Số dòng trong các bộ dữ liệu", env.EXPECT_ROWS, env.EXPECT_ROW_CAP_VI]);
    await shot(page, "dataset-usage-vi");
    await page.selectOption("#lang", "en");
    await page.waitForSelector(`${row} button:has-text("Delete")`);
    // Delete it (the confirmation is accepted): the row goes.
    await page.click(`${row} button:has-text("Delete")`);
    await page.waitForSelector(row, { state: "detached" });
    assert.deepEqual(errors, [], "no page error");
  },

  async learned() {
    const { page, errors } = await openConsole();
    await signIn(page, env.SECRET_KEY);
    await page.waitForSelector("#app:not([hidden])");
    await tab(page, "knowledge");
    await page.waitForSelector("#learned-card:not([hidden]) #learned-table tbody tr[data-qa]");
    const rows = () => page.$$eval("#learned-table tbody tr", (trs) =>
      trs.map((tr) => ({ question: tr.querySelector(".question").textContent, sql: tr.querySelector(".sql").textContent })));
    const before = await rows();
    assert.deepEqual(before.map((r) => r.question).sort(), [env.DELETE_QUESTION, env.KEEP_QUESTION].sort(), "both listed");
    assert.equal(before.find((r) => r.question === env.DELETE_QUESTION).sql, env.DELETE_SQL, "its SQL is shown");
    await shot(page, "learned");
    // Delete one (the confirmation is accepted): its row goes, the other stays.
    const row = page.locator("#learned-table tbody tr", { hasText: env.DELETE_QUESTION });
    await row.locator('button:has-text("Delete")').click();
    await row.waitFor({ state: "detached" });
    // Listed again from the Worker: still gone.
    await page.click("#learned-refresh");
    await page.waitForFunction((q) => {
      const shown = [...document.querySelectorAll("#learned-table tbody tr .question")].map((n) => n.textContent);
      return shown.length === 1 && shown[0] === q;
    }, env.KEEP_QUESTION);
    assert.deepEqual(errors, [], "no page error");
  },
};

try {
  await scenarios[scenario]();
  console.log(`ok ${scenario}`);
} finally {
  await context.close();
}
