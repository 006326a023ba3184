// The widget in real headless Chromium, as a visitor uses it on a merchant's page.
//
// Usage: node widget.mjs <scenario> <page_url> <artifact_dir> <profile_dir>
// Scenarios: launcher, chat, warranty, keyboard, retry, retry-stores-once, options, csp,
// attacker, identity.
// Environment: EXPECT_ANSWER (text the scripted answer contains), ASK (the question),
// EXPECT_MARKDOWN / EXPECT_STARTERS (chat), WARRANTY_ASK / SERIAL / EXPECT_WARRANTY
// (warranty), INLINE_URL (options: a page with data-inline), BOOT_ONLY=1 (csp: stop once
// the panel runs), WORKER / SITE_KEY / VICTIM_URL (attacker: the Worker's origin, the
// victim's public key, and the victim's own page; <page_url> is the attacker's page),
// TOKEN_A / TOKEN_B (identity: the tag's data-user-token, then one for identify()).
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";

const [scenario, pageUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const ASK = env.ASK || "Galaxy S23 Ultra giá bao nhiêu?";
const EXPECT_ANSWER = env.EXPECT_ANSWER || "22.490.000";
const DESKTOP = { width: 1280, height: 800 };
const TIMEOUT = 30000;

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: DESKTOP,
});
context.setDefaultTimeout(TIMEOUT);

// ---- helpers -------------------------------------------------------------------------

async function openPage(url = pageUrl) {
  const page = await context.newPage();
  const errors = [];
  const logs = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => logs.push(m.text()));
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener("securitypolicyviolation", (e) =>
      window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    window.__events = [];
    for (const name of ["opened", "closed", "message", "ready"]) {
      window.addEventListener("concierge:" + name, (e) =>
        window.__events.push(e.detail && e.detail.role ? `${name}:${e.detail.role}` : name));
    }
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, errors, logs };
}

/** Wait until `check()` is truthy; fail with `what` after TIMEOUT. */
async function until(check, what) {
  const deadline = Date.now() + TIMEOUT;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const launcher = (page) => page.locator("[data-concierge] button");
const iframe = (page) => page.locator("[data-concierge] iframe");

async function panel(page) {
  const handle = await page.waitForSelector("[data-concierge] iframe", { state: "attached" });
  const frame = await handle.contentFrame();
  await frame.waitForSelector(".cw-panel");
  return frame;
}

async function openPanel(page) {
  await launcher(page).click();
  const frame = await panel(page);
  await frame.waitForSelector('.cw-panel[data-status="ready"]');
  return frame;
}

async function messages(frame) {
  return frame.$$eval(".cw-msg", (els) =>
    els.map((el) => [el.classList.contains("cw-user") ? "user" : "bot", el.querySelector(".cw-body").textContent]));
}

/** Wait until there are `count` assistant messages and the last one is over. */
async function answer(frame, count, states = ["done"]) {
  await frame.waitForFunction(([n, states]) => {
    const bots = document.querySelectorAll(".cw-bot");
    return bots.length >= n && states.includes(bots[bots.length - 1].dataset.state);
  }, [count, states]);
  return frame.$$eval(".cw-bot", (bots) => {
    const el = bots[bots.length - 1];
    const body = el.querySelector(".cw-body");
    return { state: el.dataset.state, text: body.textContent, html: body.innerHTML };
  });
}

async function send(frame, text) {
  await frame.fill("#cw-input", text);
  await frame.press("#cw-input", "Enter");
}

/** Record the last assistant message's text and state at every DOM change. */
async function recordStream(frame) {
  await frame.evaluate(() => {
    window.__snapshots = [];
    new MutationObserver(() => {
      const last = [...document.querySelectorAll(".cw-bot")].pop();
      if (last) window.__snapshots.push({ state: last.dataset.state, text: last.querySelector(".cw-body").textContent });
    }).observe(document.querySelector(".cw-log"), { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

async function conversationId(frame) {
  return frame.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."));
    return key && localStorage.getItem(key);
  });
}

async function launcherFocused(page) {
  return page.evaluate(() => {
    const host = document.querySelector("[data-concierge]");
    return document.activeElement === host && host.shadowRoot.activeElement?.tagName === "BUTTON";
  });
}

async function inputFocused(frame) {
  return frame.evaluate(() => document.hasFocus() && document.activeElement?.id === "cw-input");
}

// ---- scenarios -----------------------------------------------------------------------

const scenarios = {
  /** The loader and the panel's accessibility attributes; needs no conversation API. */
  async launcher() {
    const { page, errors } = await openPage();
    const button = launcher(page);
    await button.waitFor();
    assert.match(await button.getAttribute("aria-label"), /\S{3,}/, "the launcher is labelled");
    assert.equal(await button.getAttribute("aria-expanded"), "false");
    assert.equal(await button.getAttribute("aria-controls"), "concierge-panel");
    assert.equal(await page.evaluate(() => typeof window.Concierge.open), "function");
    await button.click();
    assert.equal(await button.getAttribute("aria-expanded"), "true");
    const frame = await panel(page);
    assert.match(await iframe(page).getAttribute("title"), /\S{3,}/, "the iframe is titled");
    const src = new URL(await iframe(page).getAttribute("src"));
    assert.equal(src.pathname, "/chat");
    assert.match(src.searchParams.get("site_key"), /^pk_\w+$/);
    // The host page's path and query (never its fragment), for the waiting list (issue 45).
    const host = new URL(page.url());
    assert.equal(src.searchParams.get("page"), host.pathname + host.search);
    assert.equal(await frame.getAttribute(".cw-log", "role"), "log");
    assert.equal(await frame.getAttribute(".cw-log", "aria-live"), "polite");
    assert.match(await frame.$eval('label[for="cw-input"]', (l) => l.textContent), /\S/);
    assert.match(await frame.getAttribute(".cw-send", "aria-label"), /\S/);
    assert.match(await frame.getAttribute(".cw-close", "aria-label"), /\S/);
    assert.match(await frame.getAttribute(".cw-new", "aria-label"), /\S/);
    const fontSize = await frame.$eval("#cw-input", (el) => parseFloat(getComputedStyle(el).fontSize));
    assert.ok(fontSize >= 16, `input font ${fontSize}px`);
    await frame.waitForFunction(() => document.activeElement?.id === "cw-input");
    await page.screenshot({ path: `${artifacts}/launcher-open-desktop.png` });
    await page.keyboard.press("Escape");
    await iframe(page).waitFor({ state: "hidden" });
    assert.equal(await button.getAttribute("aria-expanded"), "false");
    assert.ok(await launcherFocused(page), "focus is back on the launcher");
    assert.deepEqual(await page.evaluate(() => window.__events), ["ready", "opened", "closed"]);
    await page.setViewportSize({ width: 375, height: 740 });
    await button.click();
    const box = await iframe(page).boundingBox();
    assert.deepEqual([box.x, box.y, box.width, box.height], [0, 0, 375, 740], "full screen below 480 px");
    await page.screenshot({ path: `${artifacts}/launcher-open-375.png` });
    assert.deepEqual(errors, []);
  },

  /** Greeting, streaming, markdown, events, screenshots, reload, reset. */
  async chat() {
    const { page, errors } = await openPage();
    const frame = await openPanel(page);
    const greeting = await answer(frame, 1);
    assert.ok(greeting.text.trim().length > 5, "greeting shown");
    if (env.EXPECT_STARTERS) {
      assert.ok(await frame.locator(".cw-starter").count() >= 1, "starter prompts shown");
    }
    await recordStream(frame);
    await send(frame, ASK);
    const final = await answer(frame, 2);
    const snapshots = await frame.evaluate(() => window.__snapshots);
    const doneAt = snapshots.findIndex((s) => s.state === "done");
    const partial = new Set(snapshots.slice(0, doneAt).filter((s) => s.state === "streaming" && s.text).map((s) => s.text));
    assert.ok(partial.size >= 2, `tokens seen incrementally before completed: ${JSON.stringify([...partial])}`);
    for (const text of partial) assert.ok(text.length < final.text.length + 8, "partials are pieces of the answer");
    assert.ok(final.text.includes(EXPECT_ANSWER), `final answer: ${final.text}`);
    if (env.EXPECT_MARKDOWN) {
      assert.match(final.html, /<strong>/, "markdown rendered");
      assert.doesNotMatch(final.html, /\*\*/);
    }
    assert.equal(await frame.locator(".cw-starters").isHidden(), true, "starters go once the visitor writes");
    await page.screenshot({ path: `${artifacts}/widget-desktop.png` });
    await page.setViewportSize({ width: 375, height: 740 });
    const box = await iframe(page).boundingBox();
    assert.equal(box.width, 375, "full width on a phone");
    await page.screenshot({ path: `${artifacts}/widget-375.png` });
    await page.setViewportSize(DESKTOP);
    const events = await page.evaluate(() => window.__events);
    for (const e of ["opened", "message:user", "message:assistant"]) assert.ok(events.includes(e), `${e} in ${events}`);

    // A reload keeps the conversation.
    const before = await messages(frame);
    const id = await conversationId(frame);
    assert.ok(id, "conversation id stored");
    await page.reload({ waitUntil: "load" });
    const again = await openPanel(page);
    await again.waitForFunction((n) => document.querySelectorAll(".cw-msg").length >= n, before.length);
    assert.deepEqual(await messages(again), before, "history restored after reload");
    assert.equal(await conversationId(again), id);

    // Reset (host API) starts a new conversation with just the greeting.
    await page.evaluate(() => window.Concierge.reset());
    await again.waitForFunction(() => {
      const all = document.querySelectorAll(".cw-msg");
      return document.querySelector(".cw-panel").dataset.status === "ready" && all.length === 1 &&
        all[0].classList.contains("cw-bot");
    });
    const fresh = await conversationId(again);
    assert.ok(fresh && fresh !== id, "a new conversation id");
    // …and so does the header's button.
    await again.click(".cw-new");
    await again.waitForFunction((old) => {
      const key = Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."));
      return key && localStorage.getItem(key) !== old && document.querySelectorAll(".cw-msg").length === 1;
    }, fresh);

    // Starter prompts are back; one click sends one. Stop keeps what arrived.
    const starter = again.locator(".cw-starter").last();
    await starter.waitFor({ state: "visible" });
    const prompt = await starter.textContent();
    await starter.click();
    await again.waitForFunction(() => {
      const bots = document.querySelectorAll(".cw-bot");
      const last = bots[bots.length - 1];
      return bots.length === 2 && last.dataset.state === "streaming" && last.textContent.length > 3;
    });
    assert.equal(await again.getAttribute(".cw-send", "aria-label"), await again.evaluate(() =>
      document.documentElement.lang === "en" ? "Stop" : "Dừng"), "the send button became stop");
    await again.click(".cw-send");
    const stopped = await answer(again, 2, ["stopped"]);
    assert.ok(stopped.text.length > 0, "the partial answer stays");
    assert.equal(await again.locator(".cw-bot").last().locator(".cw-note").isVisible(), true);
    assert.deepEqual((await messages(again)).filter(([who]) => who === "user"), [["user", prompt]]);
    await again.waitForFunction(() => !document.querySelector(".cw-send").classList.contains("cw-stop"));

    // A stored conversation the server no longer knows (404) starts a new one.
    await again.evaluate(() => {
      const key = Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."));
      localStorage.setItem(key, "c_does_not_exist");
    });
    await page.reload({ waitUntil: "load" });
    const fresh404 = await openPanel(page);
    await answer(fresh404, 1);
    assert.equal(await fresh404.locator(".cw-msg").count(), 1, "just the new greeting");
    assert.notEqual(await conversationId(fresh404), "c_does_not_exist");
    assert.deepEqual(errors, []);
  },

  /** The shop template's warranty branch, end to end through the panel. */
  async warranty() {
    const { page, errors } = await openPage();
    const frame = await openPanel(page);
    await answer(frame, 1);
    await send(frame, env.WARRANTY_ASK || "Tôi muốn kiểm tra bảo hành");
    const ask = await answer(frame, 2);
    assert.match(ask.text, /serial/i, `asks for the serial: ${ask.text}`);
    await send(frame, env.SERIAL || "0979825281");
    const found = await answer(frame, 3);
    assert.ok(found.text.includes(env.EXPECT_WARRANTY || "S23 Ultra"), `warranty answer: ${found.text}`);
    await page.screenshot({ path: `${artifacts}/warranty-desktop.png` });
    assert.deepEqual(errors, []);
  },

  /** Keyboard only: Tab to the launcher, Enter, type, Shift+Enter, Enter, Tab stays inside, Esc. */
  async keyboard() {
    const { page, errors } = await openPage();
    await launcher(page).waitFor();
    for (let i = 0; i < 40 && !(await launcherFocused(page)); i++) await page.keyboard.press("Tab");
    assert.ok(await launcherFocused(page), "Tab reaches the launcher");
    await page.keyboard.press("Enter");
    const frame = await panel(page);
    await frame.waitForSelector('.cw-panel[data-status="ready"]');
    await frame.waitForFunction(() => document.activeElement?.id === "cw-input");
    await page.keyboard.type("Xin chào");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type(ASK);
    assert.equal(await frame.inputValue("#cw-input"), `Xin chào\n${ASK}`, "Shift+Enter adds a line");
    await page.keyboard.press("Enter");
    const reply = await answer(frame, 2);
    assert.ok(reply.text.includes(EXPECT_ANSWER), reply.text);
    assert.equal(await frame.inputValue("#cw-input"), "", "Enter sent the message");
    const sent = (await messages(frame)).filter(([who]) => who === "user").map(([, text]) => text);
    assert.deepEqual(sent, [`Xin chào\n${ASK}`]);
    for (const key of ["Tab", "Shift+Tab"]) {
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press(key);
        const inside = await frame.evaluate(() =>
          document.hasFocus() && !!document.activeElement?.closest(".cw-panel"));
        assert.ok(inside, `${key} #${i + 1} keeps focus in the panel`);
      }
    }
    await page.keyboard.press("Escape");
    await iframe(page).waitFor({ state: "hidden" });
    assert.ok(await launcherFocused(page), "Esc returns focus to the launcher");
    await page.keyboard.press("Enter");
    await iframe(page).waitFor({ state: "visible" });
    await frame.waitForFunction(() => document.hasFocus() && document.activeElement?.id === "cw-input");
    await page.screenshot({ path: `${artifacts}/keyboard-desktop.png` });
    assert.deepEqual(errors, []);
  },

  /** An upstream failure shows the retry control; retry succeeds. */
  async retry() {
    const { page, errors } = await openPage();
    const frame = await openPanel(page);
    await answer(frame, 1);
    await send(frame, ASK);
    const failed = await answer(frame, 2, ["failed"]);
    assert.equal(failed.state, "failed");
    const retry = frame.locator(".cw-bot").last().locator(".cw-retry");
    await retry.waitFor({ state: "visible" });
    assert.match(await frame.locator(".cw-bot").last().locator(".cw-error").textContent(), /\S/);
    await page.screenshot({ path: `${artifacts}/retry-failed-desktop.png` });
    await retry.focus();
    await page.keyboard.press("Enter");
    const ok = await answer(frame, 2);
    assert.ok(ok.text.includes(EXPECT_ANSWER), ok.text);
    const users = (await messages(frame)).filter(([who]) => who === "user");
    assert.equal(users.length, 1, "retry does not repeat the visitor's message on screen");
    await frame.waitForFunction(() => document.activeElement?.id === "cw-input");
    assert.deepEqual(errors, []);
  },

  /** Issue 10 (turns): a retry after `failed` stores the visitor's question once — after a
   *  reload, the conversation restored from the server shows one question and one answer. */
  async "retry-stores-once"() {
    const { page, errors } = await openPage();
    const frame = await openPanel(page);
    await answer(frame, 1);
    await send(frame, ASK);
    await answer(frame, 2, ["failed"]);
    await frame.locator(".cw-bot").last().locator(".cw-retry").click();
    const ok = await answer(frame, 2);
    assert.ok(ok.text.includes(EXPECT_ANSWER), ok.text);
    const before = await messages(frame);
    await page.reload({ waitUntil: "load" });
    const again = await openPanel(page);
    await again.waitForFunction(() => document.querySelectorAll(".cw-msg").length >= 3);
    const restored = await messages(again);
    assert.deepEqual(restored.map(([who]) => who), ["bot", "user", "bot"], "stored once: " + JSON.stringify(restored));
    assert.deepEqual(restored, before, "the server's history is what the visitor saw");
    assert.deepEqual(errors, []);
  },

  /** The tag's data attributes: position, colour (contrast-adjusted), title, language,
   *  open on load; then inline mode (INLINE_URL). Needs only /widget/config. */
  async options() {
    const { page, errors } = await openPage();
    const button = launcher(page);
    await button.waitFor();
    await iframe(page).waitFor({ state: "visible" }); // data-open: open on load…
    const frame = await panel(page);
    assert.equal(await page.evaluate(() => document.activeElement === document.body), true,
      "…without moving focus");
    assert.equal(await button.getAttribute("aria-label"), "Chat with us");
    assert.equal(await button.getAttribute("aria-expanded"), "true");
    const look = await button.evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color]);
    assert.deepEqual(look, ["rgb(255, 212, 0)", "rgb(0, 0, 0)"], "dark icon on a light merchant colour");
    assert.ok((await button.boundingBox()).x < 100 && (await iframe(page).boundingBox()).x < 100, "data-position=left");
    assert.equal(await frame.getAttribute("html", "lang"), "en");
    assert.equal(await frame.textContent(".cw-title"), "Cửa hàng Vàng");
    assert.equal(await frame.getAttribute(".cw-send", "aria-label"), "Send");
    const theme = await frame.evaluate(() => {
      const css = getComputedStyle(document.documentElement);
      const v = (n) => css.getPropertyValue(n).trim();
      const lum = (hex) => [1, 3, 5].map((i) => parseInt(hex.substr(i, 2), 16) / 255)
        .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
        .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
      const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
      return { primary: v("--cw-primary"), on: v("--cw-on-primary"), accent: v("--cw-accent"),
        onRatio: ratio(v("--cw-primary"), v("--cw-on-primary")), accentRatio: ratio(v("--cw-accent"), "#ffffff") };
    });
    assert.equal(theme.primary, "#ffd400");
    assert.equal(theme.on, "#000000");
    assert.ok(theme.onRatio >= 4.5 && theme.accentRatio >= 4.5, JSON.stringify(theme));
    await page.screenshot({ path: `${artifacts}/options-desktop.png` });

    const inline = await openPage(env.INLINE_URL);
    await inline.page.waitForSelector("#chat-here iframe");
    assert.equal(await launcher(inline.page).count(), 0, "no launcher in inline mode");
    const inlineFrame = await panel(inline.page);
    assert.equal(await inlineFrame.locator(".cw-close").isHidden(), true, "no close button inline");
    const box = await iframe(inline.page).boundingBox();
    const slot = await inline.page.locator("#chat-here").boundingBox();
    assert.ok(box.width > 0 && Math.abs(box.x - slot.x) < 2 && Math.abs(box.y - slot.y) < 2, "inside its element");
    await inline.page.screenshot({ path: `${artifacts}/inline-desktop.png` });
    assert.deepEqual([...errors, ...inline.errors], []);
  },

  /** A host page with a strict CSP (no 'wasm-unsafe-eval', no inline styles). */
  async csp() {
    const { page, errors } = await openPage();
    const csp = await page.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content);
    assert.equal(csp, undefined, "the policy comes as a header");
    await launcher(page).waitFor();
    const frame = await openPanelOrBoot(page);
    const styled = await launcher(page).evaluate((b) => getComputedStyle(b).position);
    assert.equal(styled, "fixed", "launcher styles applied under the CSP");
    if (!env.BOOT_ONLY) {
      await answer(frame, 1);
      await send(frame, ASK);
      const reply = await answer(frame, 2);
      assert.ok(reply.text.includes(EXPECT_ANSWER), reply.text);
    }
    await page.screenshot({ path: `${artifacts}/csp-host-desktop.png` });
    assert.deepEqual(await page.evaluate(() => window.__csp), [], "no CSP violations on the host page");
    assert.deepEqual(errors, []);
  },

  /** An attacker's page (the page URL) embeds embed.js with the victim's key. The panel
   *  must not load there, nor top-level, and must answer only its real parent; the
   *  victim's own page (VICTIM_URL) still chats. */
  async attacker() {
    const worker = env.WORKER;
    const key = env.SITE_KEY;
    const attackerOrigin = new URL(pageUrl).origin;
    const api = []; // every conversation-API response any page or frame got
    context.on("response", (r) => {
      const url = new URL(r.url());
      if (url.origin === worker && /^\/(widget\/config|conversations)\b/.test(url.pathname)) {
        api.push(`${r.request().method()} ${url.pathname} ${r.status()}`);
      }
    });

    // 1. The attacker's page: the launcher appears, but the browser refuses to frame the
    //    panel (frame-ancestors), so no panel runs and no API call is made; the loader
    //    puts its "unavailable" card in the panel's place (issue 26).
    const evil = await openPage();
    await launcher(evil.page).click();
    await evil.page.locator("[data-concierge] .card").waitFor();
    assert.equal(await iframe(evil.page).count(), 0, "no panel in the attacker's page");
    assert.ok(evil.logs.some((l) => l.includes(`origin ${attackerOrigin} is not among`)),
      `the loader names the cause (console: ${JSON.stringify(evil.logs)})`);
    // Calling the API straight from the attacker's page fails too (CORS preflight refused).
    const direct = await evil.page.evaluate(([w, k]) =>
      fetch(`${w}/conversations`, { method: "POST", headers: { "x-api-key": k, "content-type": "application/json" }, body: "{}" })
        .then((r) => r.status, () => "refused"), [worker, key]);
    assert.equal(direct, "refused");

    // 2. The panel opened top-level (a link or popup from the attacker): it refuses to run.
    const top = await openPage(`${worker}/chat?site_key=${key}#origin=${encodeURIComponent(attackerOrigin)}`);
    await top.page.waitForSelector(".cw-refused");
    assert.equal(await top.page.locator(".cw-panel").count(), 0);
    assert.deepEqual(api, [], "no API call from the attacker's page or the top-level panel");

    // 3. The victim's page: a panel whose URL names another parent still answers only its
    //    real parent (the origin the browser reports), and the launcher's panel chats.
    const victim = await openPage(env.VICTIM_URL);
    const ready = await victim.page.evaluate(([w, k, forged]) => new Promise((resolve) => {
      const frame = document.createElement("iframe");
      frame.src = `${w}/chat?site_key=${k}#origin=${encodeURIComponent(forged)}`;
      window.addEventListener("message", (e) => {
        if (e.source === frame.contentWindow && e.data && e.data.concierge === "ready") {
          frame.remove();
          resolve(e.origin);
        }
      });
      setTimeout(() => resolve("no message"), 15000);
      document.body.appendChild(frame);
    }), [worker, key, attackerOrigin]);
    assert.equal(ready, worker, "the panel posted to its verified parent, not the URL's origin");
    const frame = await openPanel(victim.page);
    await answer(frame, 1);
    await send(frame, ASK);
    const reply = await answer(frame, 2);
    assert.ok(reply.text.includes(EXPECT_ANSWER), reply.text);
    assert.ok(api.length > 0 && api.every((line) => / 2\d\d$/.test(line)), `victim's API calls: ${api}`);
    assert.deepEqual([...evil.errors, ...top.errors, ...victim.errors], []);
  },
};

/** data-user-token, then Concierge.identify(): the panel sends X-User-Token on its API
 * calls and the token never appears in a URL a server sees. */
scenarios.identity = async function identity() {
  const calls = [];
  context.on("request", (r) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith("/conversations") || url.pathname === "/chat") {
      calls.push({ method: r.method(), path: url.pathname, search: url.search, token: r.headers()["x-user-token"] || "" });
    }
  });
  const { page, errors } = await openPage();
  const frame = await openPanel(page);
  const src = new URL(await iframe(page).getAttribute("src"));
  assert.ok(!src.search.includes(env.TOKEN_A) && src.hash.includes("token="), `token in the fragment only: ${src}`);
  const first = await conversationId(frame);
  assert.ok(first, "a conversation was created");
  const api = () => calls.filter((c) => c.path.startsWith("/conversations"));
  assert.ok(api().length > 0 && api().every((c) => c.token === env.TOKEN_A), JSON.stringify(calls));
  assert.ok(calls.every((c) => !c.search.includes(env.TOKEN_A)), "no token in a query string");
  const before = calls.length;
  await page.evaluate((token) => window.Concierge.identify(token), env.TOKEN_B);
  await until(async () => (await conversationId(frame)) !== first, "a new conversation for the new identity");
  await frame.waitForSelector('.cw-panel[data-status="ready"]');
  const after = calls.slice(before).filter((c) => c.path.startsWith("/conversations"));
  assert.ok(after.some((c) => c.method === "POST") && after.every((c) => c.token === env.TOKEN_B), JSON.stringify(after));
  assert.deepEqual(errors, []);
};

async function openPanelOrBoot(page) {
  if (!env.BOOT_ONLY) return openPanel(page);
  await launcher(page).click();
  const frame = await panel(page); // the wasm app mounted
  await frame.waitForFunction(() => document.querySelector(".cw-panel").dataset.status !== "loading");
  return frame;
}

try {
  assert.ok(scenarios[scenario], `unknown scenario ${scenario}`);
  await scenarios[scenario]();
  console.log(`ok ${scenario}`);
} finally {
  await context.close();
}
