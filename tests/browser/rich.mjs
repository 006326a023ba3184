// Rich turns in real headless Chromium: tool rows, progress, lists, tables, charts,
// sources, evidence and question chips, as a visitor sees them on a merchant's page, at a
// desktop and a phone viewport, driven by scripted turns through the real Worker
// (POST /debug/conversations/{id}/script, DEBUG_ROUTES only).
//
// Usage: node rich.mjs <scenario> <page_url> <artifact_dir> <profile_dir>
// Scenarios: tools, list, table, charts, sources, feedback (thumbs, comment, copy, the
// launcher's unread badge).
// Environment: WORKER (the Worker's origin), SECRET_KEY (the site's secret key, to stage
// scripts), SCRIPT_FILE (JSON {"turns": [script, …]}: one staged before each question).
// Screenshots: <artifact_dir>/rich-<scenario>-{desktop,phone}.png (and -reloaded).
// Prints "ok <scenario>" on success; exits non-zero with the failed assertion otherwise.
import { chromium } from "playwright-core";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const [scenario, pageUrl, artifacts, profile] = process.argv.slice(2);
const env = process.env;
const TURNS = JSON.parse(readFileSync(env.SCRIPT_FILE, "utf8")).turns;
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };
const TIMEOUT = 30000;
const ASK = "Cho em xem kết quả";
const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

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

const context = await chromium.launchPersistentContext(profile, {
  executablePath: env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: VIEWPORTS.desktop,
});
context.setDefaultTimeout(TIMEOUT);

// ---- helpers -------------------------------------------------------------------------

async function openPage(viewport) {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(pageUrl, { waitUntil: "load" });
  return { page, errors };
}

async function openPanel(page) {
  await page.locator("[data-concierge] button").click();
  const handle = await page.waitForSelector("[data-concierge] iframe", { state: "attached" });
  const frame = await handle.contentFrame();
  await frame.waitForSelector('.cw-panel[data-status="ready"]');
  return frame;
}

async function conversationId(frame) {
  return frame.evaluate(() => {
    const key = Object.keys(localStorage).find((k) => k.startsWith("concierge.conversation."));
    return key && localStorage.getItem(key);
  });
}

/** A fresh conversation (the header's "new conversation"); its id. */
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

/** Wait until there are `count` assistant messages and the last one is done. */
async function answered(frame, count) {
  await frame.waitForFunction((n) => {
    const bots = document.querySelectorAll(".cw-bot");
    return bots.length >= n && bots[bots.length - 1].dataset.state === "done"
      // Charts load on demand (widget/js/chart.js): drawn once no box is busy.
      && !bots[bots.length - 1].querySelector("[aria-busy]");
  }, count);
}

async function send(frame, text) {
  await frame.fill("#cw-input", text);
  await frame.press("#cw-input", "Enter");
}

/** Elements matching `selector` in the last answer. */
const last = (frame, selector) => frame.locator(".cw-bot").last().locator(selector);

/** The last answer's payload markup. */
const lastRich = (frame) => last(frame, ".cw-rich").evaluate((el) => el.innerHTML.replace(/<!--.*?-->/g, ""));

/** Checks every rich turn must pass: only safe elements and links, names on controls and
 * images, table headers, text contrast (WCAG AA, 4.5:1). */
async function accessible(frame) {
  const problems = await frame.evaluate(() => {
    const out = [];
    const allowed = new Set(["UL", "OL", "LI", "A", "SPAN", "SMALL", "P", "DIV", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD",
      "FIGURE", "FIGCAPTION", "svg", "rect", "path", "polyline", "text", "I", "SECTION", "H3", "BUTTON", "PROGRESS", "TEXTAREA"]);
    const rich = [...document.querySelectorAll(".cw-rich, .cw-work")];
    for (const root of rich) {
      for (const el of root.querySelectorAll("*")) {
        if (!allowed.has(el.tagName)) out.push(`unexpected element ${el.tagName}`);
        for (const attr of el.attributes) if (/^on/i.test(attr.name)) out.push(`handler attribute ${attr.name}`);
      }
      for (const a of root.querySelectorAll("a")) {
        if (!/^https?:\/\//.test(a.getAttribute("href"))) out.push(`unsafe href ${a.getAttribute("href")}`);
        if (a.rel !== "noopener noreferrer" || a.target !== "_blank") out.push(`link without rel/target: ${a.outerHTML}`);
        if (!a.textContent.trim()) out.push("a link without a name");
      }
      for (const b of root.querySelectorAll("button")) if (!b.textContent.trim() && !b.getAttribute("aria-label")) out.push("a button without a name");
      for (const t of root.querySelectorAll("textarea")) if (!t.getAttribute("aria-label")) out.push("an unlabelled text box");
      for (const s of root.querySelectorAll("svg:not([aria-hidden=true])")) {
        if (s.getAttribute("role") !== "img" || !s.getAttribute("aria-label")) out.push("a chart without role=img and a name");
      }
      for (const t of root.querySelectorAll("table")) {
        const ths = t.querySelectorAll("thead th[scope=col]").length;
        const cols = t.querySelector("tbody tr")?.children.length ?? ths;
        if (!ths || ths !== cols) out.push(`table headers ${ths} for ${cols} columns`);
        const region = t.closest("[role=region]");
        if (!region || !region.getAttribute("aria-label") || region.tabIndex !== 0) out.push("a table not in a named, focusable region");
      }
      for (const p of root.querySelectorAll("progress")) if (!p.getAttribute("aria-label")) out.push("an unnamed progress bar");
    }
    // Contrast of text in rich parts against its effective background.
    const rgb = (c) => (c.match(/[\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgb(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    for (const root of rich) {
      for (const el of root.querySelectorAll("li, a, span, small, p, th, td, figcaption, h3, button")) {
        if (!el.offsetParent || ![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())) continue;
        const [l1, l2] = [lum(rgb(getComputedStyle(el).color).slice(0, 3)), lum(background(el))];
        const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
        if (ratio < 4.5) out.push(`contrast ${ratio.toFixed(2)} on "${el.textContent.slice(0, 30)}"`);
      }
    }
    return out;
  });
  assert.deepEqual(problems, []);
}

/** One viewport: a fresh conversation, the staged turn(s), the checks, screenshots, and
 * the same payloads again after a reload (from history). */
async function run(name, viewport, check) {
  const { page, errors } = await openPage(VIEWPORTS[viewport]);
  let frame = await openPanel(page);
  const conversation = await freshConversation(frame);
  await stage(conversation, TURNS[0]);
  await frame.evaluate(() => {
    window.__work = [];
    new MutationObserver(() => {
      const last = [...document.querySelectorAll(".cw-bot")].pop();
      if (!last) return;
      const work = last.querySelector(".cw-work");
      const status = last.querySelector(".cw-activity");
      window.__work.push({
        tools: [...work.querySelectorAll(".cw-tool")].map((li) => [li.textContent, li.dataset.state]),
        progress: work.querySelector("progress")?.value ?? null,
        status: status.hidden ? null : status.textContent,
      });
    }).observe(document.querySelector(".cw-log"), { subtree: true, childList: true, characterData: true, attributes: true });
  });
  const started = Date.now();
  await send(frame, ASK);
  await answered(frame, 2);
  const elapsed = Date.now() - started;
  await check(frame, { page, conversation, elapsed });
  await accessible(frame);
  await page.screenshot({ path: `${artifacts}/rich-${name}-${viewport}.png` });
  const rich = await lastRich(frame);
  const count = await frame.locator(".cw-msg").count();

  await page.reload({ waitUntil: "load" });
  frame = await openPanel(page);
  await frame.waitForFunction((n) => document.querySelectorAll(".cw-msg").length >= n, count);
  // Charts load on demand (widget/js/chart.js): drawn once no box is busy.
  await frame.waitForFunction(() => !document.querySelector(".cw-bot [aria-busy]"));
  assert.equal(await conversationId(frame), conversation);
  if (check.reloaded) await check.reloaded(frame);
  else assert.equal(await lastRich(frame), rich, "the stored payloads render the same after a reload");
  await accessible(frame);
  await page.screenshot({ path: `${artifacts}/rich-${name}-${viewport}-reloaded.png` });
  assert.deepEqual(errors, []);
  await page.close();
}

// ---- scenarios -----------------------------------------------------------------------

const scenarios = {
  /** Tool rows appear "working…" and resolve; the progress bar advances; the stage
   * message is a polite live region. */
  async tools(frame) {
    const seen = await frame.evaluate(() => window.__work);
    const states = seen.map((s) => s.tools.map((t) => t[1]).join(","));
    const order = ["working", "done,working", "done,failed"].map((s) => states.indexOf(s));
    assert.ok(order.every((i) => i >= 0) && order[0] < order[1] && order[1] < order[2], `tool states seen: ${[...new Set(states)]}`);
    const first = seen.find((s) => s.tools.length === 1).tools[0][0];
    assert.equal(first, "Tìm kiếm sản phẩm: đang xử lý…");
    const progress = seen.map((s) => s.progress).filter((p) => p !== null);
    assert.ok(progress.indexOf(30) >= 0 && progress.lastIndexOf(70) > progress.indexOf(30), `progress seen: ${[...new Set(progress)]}`);
    assert.ok(seen.some((s) => s.status === "Đang kiểm tra tồn kho…"), "the stage message shows");
    const status = await last(frame, ".cw-activity").first().evaluate((el) => [el.getAttribute("role"), el.getAttribute("aria-live")]);
    assert.deepEqual(status, ["status", "polite"]);
    const final = await last(frame, ".cw-tool").evaluateAll((els) => els.map((el) => el.textContent));
    assert.deepEqual(final, ["Tìm kiếm sản phẩm: xong", "Kiểm tra tồn kho: lỗi"]);
    assert.equal(await last(frame, "progress").count(), 0, "no bar once the answer is written");
  },

  /** Safe links only; HTML strings stay text; the cap is said. */
  async list(frame, { page }) {
    const items = await last(frame, ".cw-list li").evaluateAll((els) => els.map((li) => {
      const a = li.querySelector("a");
      return [li.firstChild.textContent, a ? a.getAttribute("href") : null];
    }));
    const origin = new URL(page.url()).origin;
    assert.deepEqual(items, [
      ["Phòng 101", `${origin}/rooms/101`],
      ["Căn hộ Quận 3", "https://example.com/can-ho?id=3"],
      ["Bấm vào đây", null],
      ["<img src=x onerror=alert(1)><b>Phòng VIP</b>", null],
    ]);
    assert.equal(await frame.locator(".cw-rich img, .cw-rich b, .cw-rich script").count(), 0, "no markup from payload strings");
    const note = await last(frame, ".cw-rich .cw-note").first().evaluate((el) => el.textContent);
    assert.equal(note, "Đang hiển thị 4 mục đầu tiên trên tổng số 120.");
  },

  /** 10,000 rows: the first 100 shown, said so, quickly; headers; numbers right-aligned
   * in Vietnamese formatting. */
  async table(frame, { elapsed }) {
    const rows = await last(frame, "tbody tr").count();
    assert.equal(rows, 100);
    const note = await last(frame, ".cw-rich .cw-note").first().evaluate((el) => el.textContent);
    assert.equal(note, "Đang hiển thị 100 mục đầu tiên trên tổng số 10.000.");
    const heads = await last(frame, "th").evaluateAll((els) => els.map((th) => [th.textContent, th.scope]));
    assert.deepEqual(heads, [["Phòng", "col"], ["Giá (VND)", "col"], ["Diện tích", "col"], ["Trang", "col"]]);
    const first = await last(frame, "tbody tr:first-child td").evaluateAll((tds) =>
      tds.map((td) => [td.textContent, getComputedStyle(td).textAlign]));
    assert.deepEqual(first, [["Phòng 0", "left"], ["22.490.000", "right"], ["25,5", "right"], ["Xem", "left"]]);
    assert.ok(elapsed < 15000, `answered in ${elapsed} ms`);
    const t = Date.now();
    await frame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
    assert.ok(Date.now() - t < 1000, "the page still paints");
  },

  /** Bar, line and pie, each an inline SVG image with a title, named by a text alternative
   * in the panel's words with every value (tests/browser/ux_render.mjs checks the rest). */
  async charts(frame) {
    const charts = await last(frame, ".cw-chart").evaluateAll((figs) => figs.map((f) => ({
      title: f.querySelector("figcaption")?.textContent,
      name: f.querySelector("svg").getAttribute("aria-label"),
      rects: f.querySelectorAll("rect").length,
      lines: f.querySelectorAll("polyline").length,
      slices: f.querySelectorAll("path:not(.cw-grid)").length,
      labels: [...f.querySelectorAll("text")].map((t) => t.textContent).filter((t) => /^(T|Tuần )\d$/.test(t)),
      legend: [...f.querySelectorAll(".cw-legend li")].map((li) => li.textContent),
    })));
    assert.deepEqual(charts, [
      { title: "Doanh thu theo tháng", name: "Biểu đồ cột: Doanh thu theo tháng. T1: 120; T2: 98; T3: 143", rects: 3, lines: 0, slices: 0,
        labels: ["T1", "T2", "T3"], legend: [] },
      { title: "Khách theo tuần", name: "Biểu đồ đường: Khách theo tuần. Tuần 1: Khách mới 10, Quay lại 4; Tuần 2: Khách mới 14, Quay lại 6; " +
        "Tuần 3: Khách mới 9, Quay lại 8; Tuần 4: Khách mới 20, Quay lại 7", rects: 0, lines: 2, slices: 0,
        labels: ["Tuần 1", "Tuần 2", "Tuần 3", "Tuần 4"], legend: ["Khách mới", "Quay lại"] },
      { title: "Phòng", name: "Biểu đồ tròn: Phòng. Đơn: 50 (50%); Đôi: 30 (30%); Gia đình: 20 (20%)", rects: 0, lines: 0, slices: 3,
        labels: [], legend: ["Đơn: 50 (50%)", "Đôi: 30 (30%)", "Gia đình: 20 (20%)"] },
    ]);
  },

  /** Numbered sources with safe links, evidence, and chips that send their question. */
  async sources(frame, { conversation, page }) {
    const sources = await last(frame, ".cw-sources li").evaluateAll((els) => els.map((li) => [li.firstChild.textContent, li.firstChild.tagName]));
    assert.deepEqual(sources, [["Chính sách đổi trả", "A"], ["Bảo hành", "A"], ["Tài liệu nội bộ", "SPAN"]]);
    assert.equal(await last(frame, ".cw-sources ol").first().evaluate((el) => el.tagName), "OL");
    const evidence = await last(frame, ".cw-evidence li").evaluateAll((els) => els.map((li) => li.textContent));
    assert.deepEqual(evidence, ["Đổi trả trong 30 ngày [1] (90%)", "Bảo hành 12 tháng [1] [2]"]);
    const groups = await last(frame, ".cw-chips").evaluateAll((els) => els.map((g) => [g.getAttribute("role"), g.getAttribute("aria-label"),
      [...g.querySelectorAll("button")].map((b) => b.textContent)]));
    assert.deepEqual(groups, [
      ["group", "Câu hỏi tiếp theo", ["Đổi trả thế nào?", "Bảo hành ở đâu?"]],
      ["group", "Chọn câu trả lời", ["Phòng đơn", "Phòng đôi"]],
    ]);
    // A chip, by keyboard: focus it and press Enter; its question is sent and answered.
    await stage(conversation, TURNS[1]);
    await last(frame, ".cw-chips button").first().focus();
    await page.keyboard.press("Enter");
    await answered(frame, 3);
    const users = await frame.$$eval(".cw-user .cw-body", (els) => els.map((el) => el.textContent));
    assert.equal(users[users.length - 1], "Đổi trả thế nào?");
    const reply = await last(frame, ".cw-body").first().evaluate((el) => el.textContent);
    assert.equal(reply, "Dạ, quý khách đổi trả tại cửa hàng.");
  },
};

/** The last answer's actions (issue 45, item 6): one row of icon buttons with names for
 * screen readers (votes, copy, comment, regenerate), the pressed vote filled with the
 * site's colour, in light and in dark mode; a screenshot of each. */
async function compactActions(frame, page, state) {
  const bot = frame.locator(".cw-bot").last();
  const buttons = await bot.locator(".cw-act, .cw-regen").evaluateAll((bs) => bs.filter((b) => !b.hidden).map((b) => {
    const r = b.getBoundingClientRect();
    const style = getComputedStyle(b);
    return { name: b.getAttribute("aria-label") || b.textContent.trim(), top: r.top, height: r.height, width: r.width,
      pressed: b.getAttribute("aria-pressed"), bg: style.backgroundColor, text: parseFloat(style.fontSize) > 0 ? b.innerText.trim() : "" };
  }));
  const names = buttons.map((b) => b.name);
  assert.deepEqual(names, ["Câu trả lời hữu ích", "Câu trả lời chưa hữu ích", "Sao chép", "Góp ý thêm (không bắt buộc)", "Tạo lại câu trả lời"], state);
  for (const b of buttons) {
    assert.ok(Math.abs(b.top - buttons[0].top) < 2, `one row: ${JSON.stringify(buttons)}`);
    assert.ok(b.height <= 44 && b.width <= 44 && b.height >= 24, `an icon button: ${JSON.stringify(b)}`);
    assert.ok(!/[a-zà-ỹ]{3}/i.test(b.text), `no visible words: ${JSON.stringify(b)}`);
  }
  const [up, down] = buttons;
  assert.equal(down.pressed, "true");
  assert.notEqual(down.bg, up.bg, "the pressed vote looks pressed");
  await axe(frame, `actions ${state} light`);
  await page.screenshot({ path: `${artifacts}/rich-actions-${state}-light-${page.viewportSize().width}.png` });
  // Dark mode: still one row, the pressed vote still apart, axe clean.
  await page.emulateMedia({ colorScheme: "dark" });
  await frame.waitForFunction(() => document.documentElement.dataset.theme === "dark" &&
    [...document.styleSheets].some((s) => s.href && s.href.endsWith("dark.css")));
  const dark = await bot.locator(".cw-vote").evaluateAll((bs) => bs.map((b) => getComputedStyle(b).backgroundColor));
  assert.notEqual(dark[0], dark[1], "the pressed vote looks pressed in dark mode");
  await accessible(frame);
  await axe(frame, `actions ${state} dark`);
  await page.screenshot({ path: `${artifacts}/rich-actions-${state}-dark-${page.viewportSize().width}.png` });
  await page.emulateMedia({ colorScheme: "light" });
  await frame.waitForFunction(() => document.documentElement.dataset.theme === "light");
}

/** Thumbs, an optional comment, copy; the vote is stored and shown after a reload; an
 * answer completing while the panel is closed badges the launcher. */
scenarios.feedback = async function feedback(frame, { page, conversation }) {
  assert.equal(await frame.locator(".cw-bot").first().locator(".cw-foot button").count(), 0, "the greeting has no feedback");
  const votes = last(frame, ".cw-vote");
  assert.deepEqual(await votes.evaluateAll((bs) => bs.map((b) => [b.getAttribute("aria-label"), b.getAttribute("aria-pressed")])),
    [["Câu trả lời hữu ích", "false"], ["Câu trả lời chưa hữu ích", "false"]]);
  await votes.nth(0).click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".cw-bot")].pop().querySelector(".cw-vote").getAttribute("aria-pressed") === "true");
  // Changing one's mind replaces the vote; a comment may follow.
  await last(frame, ".cw-vote").nth(1).click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".cw-bot")].pop().querySelectorAll(".cw-vote")[1].getAttribute("aria-pressed") === "true");
  assert.equal(await last(frame, ".cw-vote").nth(0).getAttribute("aria-pressed"), "false");
  assert.ok(await frame.evaluate(() => document.activeElement?.classList.contains("cw-down")), "focus stays on the vote");
  await compactActions(frame, page, "voted");
  // The comment box only when asked for.
  assert.equal(await last(frame, ".cw-comment").count(), 0, "no comment box before it is asked for");
  const ask = last(frame, ".cw-ask");
  assert.equal(await ask.getAttribute("aria-label"), "Góp ý thêm (không bắt buộc)");
  assert.equal(await ask.getAttribute("aria-expanded"), "false");
  await ask.click();
  const box = last(frame, ".cw-comment");
  await box.waitFor();
  assert.equal(await last(frame, ".cw-ask").getAttribute("aria-expanded"), "true");
  assert.equal(await box.getAttribute("aria-label"), "Góp ý thêm (không bắt buộc)");
  assert.ok(await box.evaluate((b) => b === document.activeElement), "the box has focus");
  await accessible(frame);
  await axe(frame, "comment box");
  await box.fill("Thiếu giờ mở cửa Chủ nhật");
  await last(frame, ".cw-send-comment").click();
  await last(frame, '.cw-foot [role="status"]').waitFor();
  assert.equal(await last(frame, '.cw-foot [role="status"]').textContent(), "Cảm ơn quý khách đã góp ý!");

  // Copy the answer.
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.WORKER });
  await last(frame, ".cw-copy").click();
  await frame.waitForFunction(() => [...document.querySelectorAll(".cw-bot")].pop().querySelector(".cw-copy").getAttribute("aria-label") === "Đã sao chép");
  // Read it back from a top-level page of the panel's origin (the frame may only write).
  const reader = await context.newPage();
  await reader.goto(`${env.WORKER}/health`);
  assert.equal(await reader.evaluate(() => navigator.clipboard.readText()), "Dạ, cửa hàng mở cửa từ 8 đến 21 giờ mỗi ngày.");
  await reader.close();

  // The launcher shows a badge when an answer completes while the panel is closed.
  await stage(conversation, TURNS[1]);
  await send(frame, "Cảm ơn nhé");
  await frame.click(".cw-close");
  const launcher = page.locator("[data-concierge] button");
  await page.waitForFunction(() => document.querySelector("[data-concierge]").shadowRoot.querySelector("button.unread"));
  assert.match(await launcher.getAttribute("aria-label"), /có trả lời mới/);
  await page.screenshot({ path: `${artifacts}/rich-feedback-badge-${page.viewportSize().width}.png` });
  await launcher.click();
  assert.equal(await launcher.evaluate((b) => b.classList.contains("unread")), false, "opening clears the badge");
  assert.doesNotMatch(await launcher.getAttribute("aria-label"), /mới/);
};

/** After a reload: the visitor's vote and comment are back on the first answer. */
scenarios.feedback.reloaded = async function (frame) {
  const first = frame.locator(".cw-bot").nth(1);
  await first.locator(".cw-vote").first().waitFor();
  assert.deepEqual(await first.locator(".cw-vote").evaluateAll((bs) => bs.map((b) => b.getAttribute("aria-pressed"))), ["false", "true"]);
  // The stored comment is in the box once asked for.
  assert.equal(await first.locator(".cw-comment").count(), 0);
  await first.locator(".cw-ask").click();
  await first.locator(".cw-comment").waitFor();
  assert.equal(await first.locator(".cw-comment").inputValue(), "Thiếu giờ mở cửa Chủ nhật");
  // "New conversation" starts over: a new id, the greeting alone, nothing of the old turns.
  await freshConversation(frame);
  assert.equal(await frame.locator(".cw-foot button, .cw-tool, .cw-rich li, .cw-comment").count(), 0);
};

try {
  assert.ok(scenarios[scenario], `unknown scenario ${scenario}`);
  for (const viewport of Object.keys(VIEWPORTS)) await run(scenario, viewport, scenarios[scenario]);
  console.log(`ok ${scenario}`);
} finally {
  await context.close();
}
