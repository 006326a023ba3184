// The visitor's flow around the conversation in real headless Chromium (issue 26, items
// 1, 6, 7, 8, 9): the newest message kept in view, the length limit, a panel that cannot
// load, a failed turn in every template, dark mode, earlier conversations, "talk to a
// person" and the proactive greeting. Each scenario runs axe-core (pinned:
// node_modules/axe-core) over the panel in each state it reaches: 0 critical, 0 serious.
//
// Usage: node flow.mjs <scenario> <page_url> <artifact_dir> <profile_dir>
// Screenshots: <artifact_dir>/flow-<scenario>-<state>-{desktop,phone}.png.
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const [scenario, pageUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const TIMEOUT = 30000;
const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: VIEWPORTS.desktop,
});
context.setDefaultTimeout(TIMEOUT);

// ---- helpers -------------------------------------------------------------------------

async function openPage(viewport, url = pageUrl) {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  const errors = [];
  const warnings = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "warning") warnings.push(m.text());
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, errors, warnings };
}

async function openPanel(page, keep = false) {
  await page.locator("[data-concierge] button").first().click();
  const handle = await page.waitForSelector("[data-concierge] iframe", { state: "attached" });
  const frame = await handle.contentFrame();
  await frame.waitForSelector('.cw-panel[data-status="ready"]');
  if (!keep) await fresh(frame);
  return frame;
}

/** Start a new conversation when the panel resumed one with the visitor's messages (the
 * viewports share the browser's storage). */
async function fresh(frame) {
  if (!(await frame.locator(".cw-user").count())) return;
  await frame.click(".cw-new");
  await frame.waitForFunction(() => document.querySelectorAll(".cw-msg").length === 1 &&
    document.querySelector(".cw-panel").dataset.status === "ready");
}

async function send(frame, text) {
  await frame.fill("#cw-input", text);
  await frame.press("#cw-input", "Enter");
}

/** Wait until there are `count` assistant messages and the last one is over (`state`). */
async function answered(frame, count, state = "done") {
  await frame.waitForFunction(([n, s]) => {
    const bots = document.querySelectorAll(".cw-bot");
    return bots.length >= n && bots[bots.length - 1].dataset.state === s;
  }, [count, state]);
}

async function shot(page, name, tag) {
  await page.screenshot({ path: `${artifacts}/flow-${scenario}-${name}-${tag}.png` });
}

/** axe-core over `target` (a page or a frame): no critical or serious violation. */
async function axe(target, what) {
  await target.evaluate(AXE);
  const result = await target.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) }));
  });
  const bad = result.filter((v) => v.impact === "critical" || v.impact === "serious");
  assert.deepEqual(bad, [], `axe (${what}): ${JSON.stringify(bad)}`);
}

/** Whether `selector`'s last match is (at least partly) visible inside the log. */
async function inView(frame, selector) {
  return frame.evaluate((sel) => {
    const log = document.querySelector(".cw-log").getBoundingClientRect();
    const all = document.querySelectorAll(sel);
    const el = all[all.length - 1];
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.bottom > log.top + 4 && r.top < log.bottom - 4;
  }, selector);
}

/** Scroll the log up, as far as it goes. */
async function scrollUp(frame) {
  await frame.evaluate(() => {
    const log = document.querySelector(".cw-log");
    log.scrollTop = -log.scrollHeight;
  });
  await frame.waitForTimeout(100);
}

async function visible(locator) {
  return (await locator.count()) > 0 && locator.first().isVisible();
}

function done() {
  console.log(`ok ${scenario}`);
}

// ---- scenarios -----------------------------------------------------------------------

const scenarios = {
  // Item 1: sending while scrolled up shows the new message; new text while scrolled up
  // shows the "new messages" pill, which jumps down.
  async scroll() {
    for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
      const { page, errors } = await openPage(viewport);
      const frame = await openPanel(page);
      let n = 0;
      while (await frame.evaluate(() => {
        const log = document.querySelector(".cw-log");
        return log.scrollHeight < log.clientHeight * 2;
      })) {
        n += 1;
        assert.ok(n <= 8, "the log never became scrollable");
        await send(frame, `Câu hỏi số ${n}: Galaxy S23 Ultra giá bao nhiêu?`);
        await answered(frame, n + 1);
      }
      await scrollUp(frame);
      assert.equal(await inView(frame, ".cw-bot"), false, "scrolled up: the last answer is out of view");
      await send(frame, "Câu hỏi mới nhất?");
      await frame.waitForFunction((k) => document.querySelectorAll(".cw-user").length === k, n + 1);
      await frame.waitForTimeout(150);
      assert.ok(await inView(frame, ".cw-user"), "sending jumps to the newest message");
      // While the answer streams, the visitor scrolls up again: a pill says there is more.
      await frame.waitForSelector('.cw-bot[data-state="streaming"]');
      await scrollUp(frame);
      const pill = frame.locator(".cw-pill");
      await pill.waitFor({ state: "visible" });
      assert.equal((await pill.textContent()).trim(), env.EXPECT_PILL || "Tin nhắn mới ↓");
      await shot(page, "pill", tag);
      await axe(frame, `pill ${tag}`);
      await pill.click();
      await frame.waitForTimeout(150);
      assert.ok(await inView(frame, ".cw-bot"), "the pill jumps to the newest answer");
      assert.equal(await pill.isVisible(), false, "the pill hides at the bottom");
      await answered(frame, n + 2);
      assert.deepEqual(errors, []);
      await page.close();
    }
    done();
  },

  // Item 6: a counter near the limit; over it, a specific message and nothing is sent.
  async limit() {
    for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
      const { page, errors } = await openPage(viewport);
      const frame = await openPanel(page);
      const posts = [];
      page.on("request", (r) => {
        if (r.method() === "POST" && /\/messages$/.test(new URL(r.url()).pathname)) posts.push(r.url());
      });
      const count = frame.locator(".cw-count");
      await frame.fill("#cw-input", "a".repeat(100));
      assert.equal(await count.isVisible(), false, "no counter far from the limit");
      await frame.fill("#cw-input", "â".repeat(3600));
      await count.waitFor({ state: "visible" });
      assert.match(await count.textContent(), /3\.600 \/ 4\.000/);
      const long = "Cấu hình PC gaming ".repeat(300); // 5,700 characters
      await frame.fill("#cw-input", long);
      await frame.press("#cw-input", "Enter");
      await frame.waitForTimeout(500);
      const text = await count.textContent();
      assert.match(text, /4\.000/, text);
      assert.match(text, env.EXPECT_OVER ? new RegExp(env.EXPECT_OVER) : /dài quá/, text);
      assert.equal(await frame.locator("#cw-input").getAttribute("aria-invalid"), "true", "the box is marked invalid");
      assert.equal(await frame.locator(".cw-user").count(), 0, "nothing was sent");
      assert.equal(await frame.locator(".cw-retry:visible").count(), 0, "no useless retry");
      assert.equal(await frame.inputValue("#cw-input"), long, "the text stays to be shortened");
      assert.deepEqual(posts, [], "no request was sent");
      await shot(page, "over", tag);
      await axe(frame, `over the limit ${tag}`);
      // Exactly at the limit it sends.
      await frame.fill("#cw-input", "b".repeat(3990) + " giá S23?");
      await frame.press("#cw-input", "Enter");
      await answered(frame, 2);
      assert.equal(posts.length, 1);
      assert.equal(await count.isVisible(), false, "the counter hides with the sent text");
      assert.deepEqual(errors, []);
      await page.close();
    }
    done();
  },

  // Item 7: the panel cannot load: a card in the launcher's panel, a console warning.
  async unavailable() {
    const cases = JSON.parse(env.CASES);
    for (const c of cases) {
      for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
        const { page, warnings } = await openPage(viewport, c.url);
        if (c.offline) await context.setOffline(true);
        await page.locator("[data-concierge] button").first().click();
        const card = page.locator("[data-concierge] .card");
        await card.waitFor({ state: "visible" });
        const text = await card.textContent();
        assert.match(text, new RegExp(c.card), `${c.name}: ${text}`);
        assert.equal(await page.locator("[data-concierge] iframe").isVisible(), false, `${c.name}: no error page in a frame`);
        assert.equal(await card.getAttribute("role"), "alert");
        // Issue 45, item 10: the card follows dark mode and offers "Thử lại".
        const retry = card.locator("button");
        assert.equal((await retry.textContent()).trim(), "Thử lại");
        const shade = () => card.evaluate((el) => /rgba?\((\d+), (\d+), (\d+)/.exec(getComputedStyle(el).backgroundColor)
          .slice(1).reduce((a, b) => a + Number(b), 0));
        assert.ok((await shade()) > 600, `${c.name}: a light card in light mode`);
        await shot(page, c.name, tag);
        await page.emulateMedia({ colorScheme: "dark" });
        assert.ok((await shade()) < 150, `${c.name}: a dark card in dark mode`);
        await shot(page, `${c.name}-dark`, tag);
        await axe(page, `${c.name} dark ${tag}`);
        await page.emulateMedia({ colorScheme: "light" });
        if (c.offline) await context.setOffline(false);
        await axe(page, `${c.name} ${tag}`);
        assert.ok(warnings.some((w) => new RegExp(c.warning).test(w)), `${c.name}: console warning ${JSON.stringify(warnings)}`);
        if (c.offline) {
          // Back online, "Thử lại" loads the panel in place.
          await retry.click();
          const handle = await page.waitForSelector("[data-concierge] iframe", { state: "visible" });
          const frame = await handle.contentFrame();
          await frame.waitForSelector('.cw-panel[data-status="ready"]');
          assert.equal(await card.count(), 0, "the card is gone");
          await shot(page, `${c.name}-retried`, tag);
          await page.close();
          continue;
        }
        // Still refused: trying again shows the card again.
        await retry.click();
        await card.waitFor({ state: "visible" });
        // The launcher closes the card like a panel, and Escape too.
        await page.locator("[data-concierge] button").first().click();
        assert.equal(await card.isVisible(), false, `${c.name}: the launcher closes the card`);
        await page.close();
      }
    }
    done();
  },

  // Item 9: "Tạo lại câu trả lời" on the last answer only, by keyboard; hidden while the
  // new answer streams in place of the old; a reload shows one question and the new answer.
  async regenerate() {
    const question = env.QUESTION;
    for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
      const { page, errors } = await openPage(viewport);
      let frame = await openPanel(page);
      await send(frame, question);
      await answered(frame, 2);
      const last = frame.locator(".cw-bot").last();
      assert.match(await last.locator(".cw-body").textContent(), new RegExp(env.FIRST));
      // Only the last answer offers it (not the greeting), by its visible name.
      assert.equal(await frame.locator(".cw-regen:visible").count(), 1, "one regenerate button");
      const button = last.locator(".cw-regen");
      assert.ok(await button.isVisible(), "on the last answer");
      assert.equal((await button.textContent()).trim(), "Tạo lại câu trả lời");
      await shot(page, "answered", tag);
      await axe(frame, `answered ${tag}`);
      await button.focus();
      await frame.page().keyboard.press("Enter");
      await frame.waitForFunction(() => {
        const bots = document.querySelectorAll(".cw-bot");
        return ["waiting", "streaming"].includes(bots[bots.length - 1].dataset.state);
      });
      assert.equal(await frame.locator(".cw-regen:visible").count(), 0, "hidden while streaming");
      assert.doesNotMatch(await last.locator(".cw-body").textContent(), new RegExp(env.FIRST), "the old answer is replaced in place");
      await shot(page, "streaming", tag);
      await answered(frame, 2);
      assert.equal(await frame.locator(".cw-bot").count(), 2, "greeting and one answer");
      assert.equal(await frame.locator(".cw-user").count(), 1, "one question");
      assert.match(await last.locator(".cw-body").textContent(), new RegExp(env.SECOND));
      assert.ok(await button.isVisible(), "offered again on the new answer");
      await shot(page, "regenerated", tag);
      await axe(frame, `regenerated ${tag}`);
      // A reload: one question, the new answer, never the old one.
      await page.reload({ waitUntil: "load" });
      frame = await openPanel(page, true);
      await frame.waitForFunction(() => document.querySelectorAll(".cw-bot").length === 2);
      const users = await frame.locator(".cw-user .cw-body").allTextContents();
      assert.deepEqual(users, [question], "one question after a reload");
      const bots = (await frame.locator(".cw-bot .cw-body").allTextContents()).join("\n");
      assert.match(bots, new RegExp(env.SECOND));
      assert.doesNotMatch(bots, new RegExp(env.FIRST));
      assert.ok(await frame.locator(".cw-bot").last().locator(".cw-regen").isVisible());
      await shot(page, "reloaded", tag);
      await axe(frame, `reloaded ${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    }
    done();
  },

  // Item 8: a failed turn shows the error and Retry; the visitor's message stays stored.
  async failure() {
    for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
      const { page, errors } = await openPage(viewport);
      let frame = await openPanel(page);
      const question = env.QUESTION || "Tìm phòng giá rẻ ở quận 1";
      await send(frame, question);
      await frame.waitForFunction(() => {
        const bots = document.querySelectorAll(".cw-bot");
        return bots.length >= 2 && ["done", "failed", "stopped"].includes(bots[bots.length - 1].dataset.state);
      });
      const last = frame.locator(".cw-bot").last();
      const shown = `${await last.getAttribute("data-state")}: ${await last.locator(".cw-body").textContent()}`;
      await shot(page, "ended", tag);
      assert.equal(await last.getAttribute("data-state"), "failed", `the turn ends as a failure, not as an answer (${shown})`);
      assert.ok(await last.locator(".cw-error").isVisible(), "the error shows");
      assert.ok(await last.locator(".cw-retry").isVisible(), "Retry shows");
      assert.equal(await last.locator(".cw-foot button:visible").count(), 0, "no votes on a failure");
      assert.doesNotMatch(await last.locator(".cw-body").textContent(), /Xin chào/, "no greeting-like answer");
      await shot(page, "failed", tag);
      await axe(frame, `failed ${tag}`);
      if (env.STORED !== "0") {
        await page.reload({ waitUntil: "load" });
        frame = await openPanel(page, true);
        await frame.waitForFunction((q) => [...document.querySelectorAll(".cw-user")].some((m) => m.textContent.includes(q)), question);
      }
      assert.deepEqual(errors, []);
      await page.close();
      if (tag === "desktop" && env.DESKTOP_ONLY) break;
    }
    done();
  },

  // Item 9: dark mode, from prefers-color-scheme and from the tag's data-theme.
  async dark() {
    const cases = JSON.parse(env.CASES);
    for (const c of cases) {
      for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
        const { page } = await openPage(viewport, c.url);
        await page.emulateMedia({ colorScheme: c.scheme });
        const frame = await openPanel(page);
        await send(frame, "Galaxy S23 Ultra giá bao nhiêu?");
        await answered(frame, 2);
        const theme = await frame.evaluate(() => document.documentElement.dataset.theme);
        assert.equal(theme, c.theme, c.name);
        const bg = await frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
        const dark = /rgb\((\d+), (\d+), (\d+)/.exec(bg).slice(1).reduce((a, b) => a + Number(b), 0) < 150;
        assert.equal(dark, c.theme === "dark", `${c.name}: background ${bg}`);
        await shot(page, c.name, tag);
        await axe(frame, `${c.name} ${tag}`);
        await page.close();
      }
    }
    done();
  },

  // Item 9: earlier conversations: "+" keeps the old one reachable from the list.
  async history() {
    for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
      const { page, errors } = await openPage(viewport);
      const frame = await openPanel(page);
      const list = frame.locator(".cw-earlier");
      const first = `Câu hỏi đầu tiên (${tag})`;
      await send(frame, first);
      await answered(frame, 2);
      const answer = (await frame.locator(".cw-bot .cw-body").last().textContent()).slice(0, 120);
      await frame.click(".cw-new");
      await frame.waitForFunction(() => document.querySelectorAll(".cw-msg").length === 1 &&
        document.querySelector(".cw-panel").dataset.status === "ready");
      await send(frame, "Một câu hỏi khác");
      await answered(frame, 2);
      await list.waitFor({ state: "visible" });
      await list.click();
      const item = frame.locator(".cw-item", { hasText: first });
      await item.waitFor({ state: "visible" });
      // Issue 45, item 10: each item has its first question, last message and date
      // (Vietnamese format), and the message box stays in view and usable.
      const shown = await item.evaluate((b) => ({
        q: b.querySelector(".cw-item-q")?.textContent, last: b.querySelector("small")?.textContent,
        time: b.querySelector("time")?.textContent, iso: b.querySelector("time")?.dateTime,
      }));
      assert.equal(shown.q, first);
      assert.equal(shown.last, answer, "the last message");
      const today = new Intl.DateTimeFormat("vi-VN", { day: "2-digit", month: "2-digit", year: "numeric" }).format(new Date());
      assert.ok(shown.time.includes(today), `a Vietnamese date: ${shown.time} (${today})`);
      assert.ok(Math.abs(Date.parse(shown.iso) - Date.now()) < 10 * 60000, shown.iso);
      const composer = await frame.evaluate(() => {
        const input = document.querySelector("#cw-input").getBoundingClientRect();
        const hit = document.elementFromPoint(input.left + input.width / 2, input.top + input.height / 2);
        return { bottom: input.bottom, height: innerHeight, free: hit?.id === "cw-input" };
      });
      assert.ok(composer.free && composer.bottom <= composer.height, `the list leaves the message box in view: ${JSON.stringify(composer)}`);
      await shot(page, "list", tag);
      await axe(frame, `conversation list ${tag}`);
      await page.emulateMedia({ colorScheme: "dark" });
      await frame.waitForFunction(() => [...document.styleSheets].some((s) => s.href && s.href.endsWith("dark.css")));
      const bg = await frame.evaluate(() => getComputedStyle(document.querySelector(".cw-history")).backgroundColor);
      assert.equal(bg, "rgb(20, 23, 28)", "the list follows dark mode");
      await shot(page, "list-dark", tag);
      await axe(frame, `conversation list dark ${tag}`);
      await page.emulateMedia({ colorScheme: "light" });
      assert.equal(await list.getAttribute("aria-expanded"), "true");
      await Promise.all([frame.waitForNavigation(), item.click()]);
      await frame.waitForFunction((q) => document.querySelector(".cw-panel")?.dataset.status === "ready" &&
        [...document.querySelectorAll(".cw-user")].map((m) => m.textContent).join("|").includes(q), first);
      const users = await frame.locator(".cw-user").allTextContents();
      assert.equal(users.length, 1, JSON.stringify(users));
      assert.equal(await frame.locator(".cw-bot").count(), 2, "its greeting and answer");
      assert.ok(await frame.evaluate(() => document.activeElement?.id === "cw-input"), "focus is in the message box");
      await axe(frame, `reopened ${tag}`);
      // The reopened one is the conversation now: it survives a reload.
      await page.reload({ waitUntil: "load" });
      const again = await openPanel(page, true);
      await again.waitForFunction((q) => [...document.querySelectorAll(".cw-user")].some((m) => m.textContent.includes(q)), first);
      assert.deepEqual(errors, []);
      await page.close();
    }
    done();
  },

  // Item 9: "talk to a person" shows only when the site turns handoff on, and sends the
  // visitor's request as a message.
  async handoff() {
    for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
      const { page, errors } = await openPage(viewport);
      const frame = await openPanel(page);
      const button = frame.locator(".cw-handoff");
      if (env.HANDOFF !== "1") {
        await frame.waitForTimeout(300);
        assert.equal(await button.count(), 0, "hidden unless the site turns handoff on");
        await page.close();
        continue;
      }
      await button.waitFor({ state: "visible" });
      // Issue 45, item 4: labelled with words, outside the title bar, so the title keeps
      // its room on a 360 px phone; light and dark.
      assert.equal((await button.innerText()).trim(), "Gặp nhân viên");
      assert.equal(await frame.locator(".cw-header .cw-handoff").count(), 0, "not in the title bar");
      if (tag === "phone") await page.setViewportSize({ width: 360, height: 740 });
      const room = await frame.evaluate(() => {
        const title = document.querySelector(".cw-title").getBoundingClientRect();
        const b = document.querySelector(".cw-handoff").getBoundingClientRect();
        const input = document.querySelector("#cw-input").getBoundingClientRect();
        return { title: title.width, width: innerWidth, inside: b.left >= 0 && b.right <= innerWidth && b.bottom <= input.top };
      });
      assert.ok(room.title >= room.width - 3 * 48 - 32, `the title keeps its room: ${JSON.stringify(room)}`);
      assert.ok(room.inside, `the button shows in full above the message box: ${JSON.stringify(room)}`);
      await shot(page, "entry", tag);
      await axe(frame, `handoff entry ${tag}`);
      await page.emulateMedia({ colorScheme: "dark" });
      await frame.waitForFunction(() => [...document.styleSheets].some((s) => s.href && s.href.endsWith("dark.css")));
      await shot(page, "entry-dark", tag);
      await axe(frame, `handoff entry dark ${tag}`);
      await page.emulateMedia({ colorScheme: "light" });
      await button.click();
      await frame.waitForFunction(() => document.querySelectorAll(".cw-user").length === 1);
      assert.match(await frame.locator(".cw-user").textContent(), /nhân viên/);
      await answered(frame, 2);
      await shot(page, "sent", tag);
      await axe(frame, `handoff ${tag}`);
      assert.deepEqual(errors, []);
      await page.close();
    }
    done();
  },

  // Item 9: the proactive greeting bubble (data-greeting on the tag).
  async greeting() {
    for (const [tag, viewport] of Object.entries(VIEWPORTS)) {
      const { page, errors } = await openPage(viewport);
      const bubble = page.locator("[data-concierge-greeting] .bubble");
      await bubble.waitFor({ state: "visible" });
      assert.match(await bubble.textContent(), new RegExp(env.GREETING));
      await shot(page, "bubble", tag);
      await axe(page, `greeting ${tag}`);
      // Its close button dismisses it for the visit.
      await page.locator("[data-concierge-greeting] .bubble button").last().click();
      assert.equal(await bubble.isVisible(), false);
      await page.reload({ waitUntil: "load" });
      await page.waitForTimeout(Number(env.GREETING_WAIT || 1500));
      assert.equal(await bubble.isVisible(), false, "dismissed for the visit");
      // A new visit: pressing the bubble opens the panel.
      await page.evaluate(() => sessionStorage.clear());
      await page.reload({ waitUntil: "load" });
      await bubble.waitFor({ state: "visible" });
      await page.locator("[data-concierge-greeting] .bubble button").first().click();
      const handle = await page.waitForSelector("[data-concierge] iframe", { state: "visible" });
      const frame = await handle.contentFrame();
      await frame.waitForSelector('.cw-panel[data-status="ready"]');
      assert.equal(await bubble.isVisible(), false, "the bubble goes with the open panel");
      assert.deepEqual(errors, []);
      await page.close();
    }
    done();
  },
};

try {
  const run = scenarios[scenario];
  assert.ok(run, `unknown scenario ${scenario}`);
  await run();
} finally {
  await context.close();
}
