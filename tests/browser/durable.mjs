// Durable conversations (issue 28) in real headless Chromium, as visitors and a merchant
// use them: the widget on a shop's page and the console, side by side in one browser.
//
// Usage: node durable.mjs <scenario> <page_url> <artifact_dir> <profile_dir>
// Scenarios:
//   reload   a reload mid-answer: the reopened panel shows the question once and the
//            answer resumed to its end, once (the same text the history gives later);
//            no second POST, one GET …/stream.
//   drop     the connection drops mid-answer (the panel's fetch body errors after a few
//            chunks; the server is not told): the panel asks for the rest by itself.
//   reset    the conversation's object is reset mid-answer (debug route): the panel shows
//            the answer interrupted (what arrived kept, retry offered), not a hang; the
//            visitor's message is kept.
//   tabs     two tabs of one conversation: a question in one, the answer streams live in
//            the other, and the other way round.
//   handoff  the console turns handoff on (a bad office-hours line refused in place); then
//            widget page + console page: "Gặp nhân viên", the console's waiting badge and
//            list, "Tiếp nhận", a person's reply in the widget marked as from a person, the
//            visitor's message live in the console with no assistant answer, "Trả lại cho
//            trợ lý", then the assistant answers again.
//   heldreload  handoff on; the visitor asks for a person and reloads: the widget says it
//            waits for a person; the console takes it ("Lan"); the visitor reloads again:
//            the widget says "Nhân viên · Lan" is answering (the live stream's first event).
//   queued   two tabs of one conversation post at nearly the same time (the second waits in
//            line): both end with both questions and both answers, once each, in order.
//   stop     Stop mid-answer: the partial answer stays (marked stopped, no longer growing),
//            the input is usable at once, and after a reload the history holds exactly the
//            partial answer (the server stopped the turn and stored what was shown).
// Environment: ASK (a question the model answers), EXPECT_ANSWER (text of that answer),
// CONSOLE_URL, SECRET_KEY (handoff), WORKER + SECRET_KEY (reset), REPLY (the person's reply), THANKS (the visitor's
// message while held).
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import path from "node:path";
import { readFileSync } from "node:fs";

const [scenario, pageUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const ASK = env.ASK;
const EXPECT_ANSWER = env.EXPECT_ANSWER;
const TIMEOUT = 30000;

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 800 },
  // A Vietnamese merchant's browser: the console follows it.
  locale: "vi-VN",
});
context.setDefaultTimeout(TIMEOUT);
/** Every request the browser made: [method, url]. */
const requests = [];
context.on("request", (r) => requests.push([r.method(), r.url()]));
const posts = () => requests.filter(([m, u]) => m === "POST" && /\/messages$/.test(u)).length;
const resumes = () => requests.filter(([m, u]) => m === "GET" && /\/conversations\/[^/]+\/stream$/.test(u)).length;

async function openPage(url = pageUrl) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("dialog", (d) => d.accept());
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

async function send(frame, text) {
  await frame.fill("#cw-input", text);
  await frame.press("#cw-input", "Enter");
}

/** The panel's messages and notices, in order: [kind, text]. */
function log(frame) {
  return frame.$$eval(".cw-stack > .cw-msg, .cw-stack > .cw-notice", (els) => els.map((el) => [
    el.classList.contains("cw-notice") ? "notice" : el.classList.contains("cw-user") ? "user"
      : el.classList.contains("cw-human") ? "human" : "bot",
    el.querySelector(".cw-body").textContent,
    el.dataset.state,
  ]));
}

/** Wait until the last assistant message is over (`done`) and has `count` assistant
 * messages in all; its text. */
async function answered(frame, count) {
  await frame.waitForFunction((n) => {
    const bots = document.querySelectorAll(".cw-bot");
    return bots.length >= n && bots[bots.length - 1].dataset.state === "done";
  }, count);
  return frame.$$eval(".cw-bot", (bots) => bots[bots.length - 1].querySelector(".cw-body").textContent);
}

/** Record the last assistant message's states at every DOM change (`window.__states`). */
async function recordStates(frame) {
  await frame.evaluate(() => {
    window.__states = [];
    new MutationObserver(() => {
      const last = [...document.querySelectorAll(".cw-bot")].pop();
      if (last) window.__states.push(last.dataset.state + ":" + last.querySelector(".cw-body").textContent.length);
    }).observe(document.querySelector(".cw-log"), { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

/** Mid-answer: some text shown, not all of it. */
const midAnswer = (frame) => frame.waitForFunction(() => {
  const last = [...document.querySelectorAll(".cw-bot")].pop();
  return last && last.dataset.state === "streaming" && last.querySelector(".cw-body").textContent.length > 12;
});

const count = (text, part) => text.split(part).length - 1;

const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");
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

async function shot(page, name) {
  await page.screenshot({ path: path.join(artifacts, `durable-${name}.png`) });
}

/** The answer as the history shows it (a fresh panel after a reload). */
async function fromHistory(page) {
  await page.reload({ waitUntil: "load" });
  const frame = await openPanel(page);
  return log(frame);
}

const scenarios = {
  async reload() {
    const { page, errors } = await openPage();
    let frame = await openPanel(page);
    await send(frame, ASK);
    await midAnswer(frame);
    assert.equal(posts(), 1);
    await page.reload({ waitUntil: "load" });
    frame = await openPanel(page);
    await recordStates(frame);
    const text = await answered(frame, 2);
    const states = await frame.evaluate(() => window.__states);
    assert.ok(states.some((s) => s.startsWith("streaming")), `the answer resumed streaming, not from history: ${states.slice(0, 5)}`);
    assert.ok(text.includes(EXPECT_ANSWER), `the whole answer: ${text}`);
    assert.equal(count(text, EXPECT_ANSWER), 1, `no duplicate text: ${text}`);
    const shown = await log(frame);
    assert.deepEqual(shown.map(([kind]) => kind), ["bot", "user", "bot"], JSON.stringify(shown));
    assert.equal(shown[1][1], ASK);
    await shot(page, "reload-resumed");
    assert.equal(posts(), 1, "the question was not sent again");
    assert.ok(resumes() >= 1, "the panel asked GET …/stream");
    // What the history stores is what the resumed answer showed.
    const stored = await fromHistory(page);
    assert.deepEqual(stored.map(([kind, body]) => [kind, body]), shown.map(([kind, body]) => [kind, body]));
    assert.deepEqual(errors, []);
    console.log("ok reload");
  },

  async drop() {
    // The panel's fetch of its own POST breaks after 3 body chunks (as a dropped mobile
    // connection would); requests after it work.
    await context.addInitScript(() => {
      const fetch = window.fetch.bind(window);
      let cut = false;
      window.fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (cut || !(init && init.method === "POST" && /\/messages$/.test(String(input)))) return response;
        cut = true;
        const reader = response.body.getReader();
        let chunks = 0;
        const body = new ReadableStream({
          async pull(controller) {
            if (++chunks > 3) {
              reader.cancel();
              controller.error(new TypeError("network error"));
              return;
            }
            const { value, done } = await reader.read();
            if (done) controller.close();
            else controller.enqueue(value);
          },
        });
        return new Response(body, { status: response.status, headers: response.headers });
      };
    });
    const { page, errors } = await openPage();
    const frame = await openPanel(page);
    await recordStates(frame);
    await send(frame, ASK);
    const text = await answered(frame, 2);
    assert.ok(text.includes(EXPECT_ANSWER), `the whole answer: ${text}`);
    assert.equal(count(text, EXPECT_ANSWER), 1, `no duplicate text: ${text}`);
    const states = await frame.evaluate(() => window.__states);
    assert.ok(!states.some((s) => s.startsWith("failed")), `no failure shown: ${states}`);
    assert.equal(posts(), 1, "the question was not sent again");
    assert.ok(resumes() >= 1, "the panel asked GET …/stream");
    const shown = await log(frame);
    await shot(page, "drop-resumed");
    const stored = await fromHistory(page);
    assert.deepEqual(stored.map(([kind, body]) => [kind, body]), shown.map(([kind, body]) => [kind, body]));
    assert.deepEqual(errors, []);
    console.log("ok drop");
  },

  async reset() {
    const { page, errors } = await openPage();
    const frame = await openPanel(page);
    await send(frame, ASK);
    await midAnswer(frame);
    const id = await frame.evaluate(() =>
      localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."))));
    // The platform resets the conversation's object mid-answer.
    const reset = await fetch(`${env.WORKER}/debug/conversations/${id}/abort`, { method: "POST", headers: { "x-api-key": env.SECRET_KEY } });
    assert.equal(reset.status, 204, await reset.text());
    await frame.waitForFunction(() => [...document.querySelectorAll(".cw-bot")].pop().dataset.state === "failed");
    const last = await frame.$$eval(".cw-bot", (b) => {
      const el = b[b.length - 1];
      return { text: el.querySelector(".cw-body").textContent, error: el.querySelector(".cw-error").textContent };
    });
    assert.equal(last.error, "Câu trả lời bị gián đoạn. Quý khách vui lòng thử lại.");
    assert.ok(last.text.length > 12, "what arrived stays");
    assert.equal(await frame.$$eval(".cw-bot", (b) => !b[b.length - 1].querySelector(".cw-retry").hidden), true, "retry is offered");
    await shot(page, "reset-interrupted");
    // A reload shows the visitor's message kept.
    const stored = await fromHistory(page);
    assert.ok(stored.some(([kind, body]) => kind === "user" && body === ASK), JSON.stringify(stored));
    assert.deepEqual(errors, []);
    console.log("ok reset");
  },

  async tabs() {
    const a = await openPage();
    const first = await openPanel(a.page);
    const b = await openPage();
    const second = await openPanel(b.page);
    // One conversation: the second tab resumed the first's.
    const ids = await Promise.all([first, second].map((f) => f.evaluate(() =>
      localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."))))));
    assert.equal(ids[0], ids[1]);
    await recordStates(second);
    await send(first, ASK);
    const there = await answered(first, 2);
    const here = await answered(second, 2);
    assert.equal(here, there, "the other tab shows the same answer");
    assert.equal(count(here, EXPECT_ANSWER), 1);
    const states = await second.evaluate(() => window.__states);
    assert.ok(states.some((s) => s.startsWith("streaming")), `it streamed live in the other tab: ${states.slice(0, 5)}`);
    assert.deepEqual((await log(second)).map(([kind, body]) => [kind, body]), (await log(first)).map(([kind, body]) => [kind, body]));
    await shot(b.page, "tabs-second");
    // The other way round.
    await send(second, env.SECOND_ASK);
    await answered(second, 3);
    await answered(first, 3);
    const [one, two] = [await log(first), await log(second)];
    assert.deepEqual(one.map(([kind, body]) => [kind, body]), two.map(([kind, body]) => [kind, body]));
    assert.deepEqual(one.map(([kind]) => kind), ["bot", "user", "bot", "user", "bot"], JSON.stringify(one));
    assert.deepEqual([...a.errors, ...b.errors], []);
    console.log("ok tabs");
  },

  async handoff() {
    // 0. The merchant turns handoff on in the console (Assistant → "Gặp nhân viên").
    const desk = await openPage(env.CONSOLE_URL);
    const consolePage = desk.page;
    await consolePage.fill("#signin-key", env.SECRET_KEY);
    await consolePage.click('#signin-form button[type="submit"]');
    await consolePage.waitForSelector("#app:not([hidden])");
    await consolePage.click('.tabs button[data-tab="assistant"]');
    await consolePage.check("#f-handoff-enabled");
    await consolePage.fill("#f-handoff-wait", "61");
    await consolePage.fill("#f-handoff-hours", "mon-fri 8h");
    await consolePage.click('#assistant-form button[type="submit"]');
    await consolePage.waitForFunction(() => document.querySelector('.field[data-field="handoff"] .ferr').textContent.includes("1-5 08:00-17:30"));
    assert.equal(await consolePage.textContent("#assistant-saved"), "", "nothing saved with bad office hours");
    await consolePage.fill("#f-handoff-hours", "");
    await consolePage.fill("#f-handoff-zone", "Asia/Ho_Chi_Minh");
    await consolePage.click('#assistant-form button[type="submit"]');
    await consolePage.waitForFunction(() => document.querySelector("#assistant-saved").textContent ||
      [...document.querySelectorAll("#assistant-form .error, #assistant-form .ferr")].some((e) => e.textContent));
    const refused = await consolePage.$$eval("#assistant-form .error, #assistant-form .ferr", (es) => es.map((e) => e.textContent).filter(Boolean));
    assert.deepEqual(refused, [], "the settings were accepted");
    assert.equal(await consolePage.textContent("#assistant-saved"), "Đã lưu.");
    assert.equal(await consolePage.inputValue("#f-handoff-wait"), "61", "the stored settings are shown");
    // Saved to the draft (issue 42): publishing makes it what visitors get.
    await consolePage.waitForFunction(() => !document.querySelector("#publish").disabled);
    await consolePage.click("#publish");
    await consolePage.waitForFunction(() => /đang được áp dụng/.test(document.querySelector("#publish-result").textContent));

    const shop = await openPage();
    const widget = await openPanel(shop.page);
    // 1. The visitor asks for a person.
    await widget.locator(".cw-handoff").click();
    await widget.waitForFunction(() => [...document.querySelectorAll(".cw-user .cw-body")].some((m) => m.textContent === "Gặp nhân viên"));
    await answered(widget, 2);
    assert.equal(await widget.$$eval(".cw-bot", (b) => b[b.length - 1].querySelectorAll(".cw-vote").length), 0,
      "the notice that a person will answer is not an answer to vote on");
    await widget.waitForFunction(() => [...document.querySelectorAll(".cw-notice .cw-body")].some((n) => n.textContent.includes("Đang chờ nhân viên")));
    await shot(shop.page, "handoff-waiting");
    const conversation = await widget.evaluate(() =>
      localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."))));

    // 2. The merchant sees it waiting (the tab's badge) and takes it over.
    await consolePage.waitForFunction(() => document.querySelector("#handoff-badge").textContent === "1");
    assert.equal(await consolePage.isVisible("#handoff-badge"), true, "the waiting count shows on the tab");
    await consolePage.click('.tabs button[data-tab="handoff"]');
    const row = consolePage.locator(`#handoff-list button[data-conversation="${conversation}"]`);
    await row.waitFor();
    assert.equal(await row.getAttribute("data-state"), "waiting");
    await row.click();
    await consolePage.waitForFunction(() => [...document.querySelectorAll("#handoff-messages li.user")].some((li) => li.textContent.includes("Gặp nhân viên")));
    assert.equal((await consolePage.textContent("#handoff-take")).trim(), "Tiếp nhận");
    // A name with markdown in it (issue 39): the notice shows it as typed, never as formatting.
    await consolePage.fill("#handoff-agent", "*Lan*");
    await consolePage.click("#handoff-take");
    await widget.waitForFunction(() => [...document.querySelectorAll(".cw-notice .cw-body")].some((n) => n.textContent === "*Lan* đã tham gia cuộc trò chuyện"
      && !n.querySelector("em, strong, a")))
      .catch(async (e) => {
        const state = await consolePage.evaluate(() => [document.querySelector("#handoff-state").textContent, document.querySelector("#handoff-reply-error").textContent]);
        throw new Error(`${e.message}\nwidget: ${JSON.stringify(await log(widget))}\nconsole: ${JSON.stringify(state)}`);
      });

    // 3. The person's reply, in the widget at once, marked as from a person.
    await consolePage.fill("#handoff-text", env.REPLY);
    await consolePage.click("#handoff-send");
    await widget.waitForFunction((reply) => [...document.querySelectorAll(".cw-human .cw-body")].some((m) => m.textContent.includes(reply)), env.REPLY);
    assert.equal((await widget.textContent(".cw-human .cw-who")).trim(), "Nhân viên · *Lan*");
    await shot(shop.page, "handoff-human-reply");
    await shot(consolePage, "handoff-console");
    await axe(widget, "widget with a person's reply and notices");
    await axe(consolePage, "console handoff tab");

    // 4. The visitor's message reaches the console live; the assistant does not answer.
    const bots = await widget.$$eval(".cw-bot:not(.cw-human)", (b) => b.length);
    await send(widget, env.THANKS);
    await consolePage.waitForFunction((thanks) => [...document.querySelectorAll("#handoff-messages li.user")].some((li) => li.textContent.includes(thanks)), env.THANKS);
    await widget.waitForTimeout(1500);
    assert.equal(await widget.$$eval(".cw-bot:not(.cw-human)", (b) => b.length), bots, "no assistant answer while a person holds it");

    // 5. Handed back: the assistant answers again.
    await consolePage.click("#handoff-release");
    await widget.waitForFunction(() => [...document.querySelectorAll(".cw-notice .cw-body")].some((n) => n.textContent === "Trợ lý đã trở lại"));
    const before = await widget.$$eval(".cw-bot", (b) => b.length);
    await send(widget, ASK);
    const text = await answered(widget, before + 1);
    assert.ok(text.includes(EXPECT_ANSWER), text);
    await shot(shop.page, "handoff-back");
    assert.deepEqual([...shop.errors, ...desk.errors], []);
    console.log("ok handoff");
  },

  async heldreload() {
    const api = (method, route, body) => fetch(env.WORKER + route, {
      method, headers: { "x-api-key": env.SECRET_KEY, "content-type": "application/json" },
      body: body && JSON.stringify(body),
    });
    const on = await api("PATCH", "/admin/site", { handoff: { enabled: true, wait_seconds: 600 } });
    assert.equal(on.status, 200, await on.text());
    const { page, errors } = await openPage();
    let widget = await openPanel(page);
    await widget.locator(".cw-handoff").click();
    await answered(widget, 2);
    const notice = (text) => widget.waitForFunction((t) =>
      [...document.querySelectorAll(".cw-notice .cw-body")].some((n) => n.textContent === t), text)
      .catch(async (e) => {
        throw new Error(`${e.message}: ${text}\nwidget: ${JSON.stringify(await log(widget))}`);
      });
    // Reloaded while waiting: the widget still says so.
    await page.reload({ waitUntil: "load" });
    widget = await openPanel(page);
    await notice("Đang chờ nhân viên…");
    const conversation = await widget.evaluate(() =>
      localStorage.getItem(Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."))));

    // The merchant takes it over in the console.
    const desk = await openPage(env.CONSOLE_URL);
    const consolePage = desk.page;
    await consolePage.fill("#signin-key", env.SECRET_KEY);
    await consolePage.click('#signin-form button[type="submit"]');
    await consolePage.waitForSelector("#app:not([hidden])");
    await consolePage.click('.tabs button[data-tab="handoff"]');
    const row = consolePage.locator(`#handoff-list button[data-conversation="${conversation}"]`);
    await row.click();
    await consolePage.fill("#handoff-agent", "Lan");
    await consolePage.click("#handoff-take");
    await widget.waitForFunction(() => [...document.querySelectorAll(".cw-notice .cw-body")].some((n) => n.textContent === "Lan đã tham gia cuộc trò chuyện"));

    // The visitor reloads: who holds the conversation is shown again.
    await page.reload({ waitUntil: "load" });
    widget = await openPanel(page);
    await notice("Nhân viên · Lan đang trả lời quý khách");
    await shot(page, "held-after-reload");
    // The console, reloaded, shows it too.
    await consolePage.reload({ waitUntil: "load" });
    await consolePage.waitForSelector("#app:not([hidden])");
    await consolePage.click('.tabs button[data-tab="handoff"]');
    await consolePage.locator(`#handoff-list button[data-conversation="${conversation}"]`).click();
    await consolePage.waitForFunction(() => document.querySelector("#handoff-state").textContent === "Lan đang trả lời");
    assert.deepEqual([...errors, ...desk.errors], []);
    console.log("ok heldreload");
  },

  async queued() {
    const a = await openPage();
    const first = await openPanel(a.page);
    const b = await openPage();
    const second = await openPanel(b.page);
    // Both send at nearly the same time: one waits in line for the other.
    await Promise.all([send(first, ASK), send(second, env.SECOND_ASK)]);
    await Promise.all([answered(first, 3), answered(second, 3)]).catch(async (e) => {
      throw new Error(`${e.message}\nfirst: ${JSON.stringify(await log(first))}\nsecond: ${JSON.stringify(await log(second))}`);
    });
    // Settled: no further change for a moment.
    await a.page.waitForTimeout(1500);
    const [one, two] = [await log(first), await log(second)];
    const plain = (l) => l.map(([kind, body]) => [kind, body]);
    assert.deepEqual(one.map(([kind]) => kind), ["bot", "user", "bot", "user", "bot"], JSON.stringify(one));
    assert.deepEqual(plain(two), plain(one), `both tabs show the same, in order:\n${JSON.stringify(one)}\n${JSON.stringify(two)}`);
    for (const q of [ASK, env.SECOND_ASK]) {
      assert.equal(one.filter(([kind, body]) => kind === "user" && body === q).length, 1, `${q} once`);
    }
    for (const i of [2, 4]) {
      assert.equal(count(one[i][1], EXPECT_ANSWER), 1, `a whole answer, once: ${one[i][1]}`);
      assert.equal(one[i][2], "done");
      assert.equal(two[i][2], "done");
    }
    // The order is the server's.
    const stored = await fromHistory(a.page);
    assert.deepEqual(plain(stored), plain(one));
    await shot(b.page, "queued-second");
    assert.deepEqual([...a.errors, ...b.errors], []);
    console.log("ok queued");
  },

  async stop() {
    const { page, errors } = await openPage();
    const frame = await openPanel(page);
    await send(frame, ASK);
    await midAnswer(frame);
    await frame.click(".cw-send.cw-stop");
    await frame.waitForFunction(() => [...document.querySelectorAll(".cw-bot")].pop().dataset.state === "stopped")
      .catch(async (e) => {
        const asked = requests.filter(([, u]) => u.endsWith("/stop"));
        throw new Error(`${e.message}\nwidget: ${JSON.stringify(await log(frame))}\nstop requests: ${JSON.stringify(asked)}`);
      });
    const kept = await frame.$$eval(".cw-bot", (b) => b[b.length - 1].querySelector(".cw-body").textContent);
    assert.ok(kept.length > 12 && !kept.includes(EXPECT_ANSWER), `the partial answer stays: ${kept}`);
    await shot(page, "stop-kept");
    // The answer no longer grows, and the input is usable at once.
    await page.waitForTimeout(1500);
    const later = await frame.$$eval(".cw-bot", (b) => b[b.length - 1].querySelector(".cw-body").textContent);
    assert.equal(later, kept);
    assert.equal(await frame.isEnabled("#cw-input"), true);
    // The server stopped too: the history holds exactly what was shown, marked stopped.
    await page.reload({ waitUntil: "load" });
    const again = await openPanel(page);
    const stored = await log(again);
    const answer = stored[stored.length - 1];
    assert.deepEqual([answer[0], answer[1]], ["bot", kept], JSON.stringify(stored));
    await send(again, env.SECOND_ASK);
    const text = await answered(again, 3);
    assert.ok(text.includes(EXPECT_ANSWER), text);
    assert.deepEqual(errors, []);
    console.log("ok stop");
  },
};

try {
  const run = scenarios[scenario];
  assert.ok(run, `unknown scenario ${scenario}`);
  await run();
} finally {
  await context.close();
}
