// Loads the demo page served by the Worker in headless Chromium, opens the chat from the
// launcher and waits for the wasm widget to render its status from /health.
// Usage: node demo_page.mjs <base_url> <artifact_dir> <profile_dir>
import { chromium } from "playwright-core";
import assert from "node:assert/strict";

const [baseUrl, artifacts, profile] = process.argv.slice(2);
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM_BIN || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1280, height: 800 },
});
try {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(baseUrl + "/", { waitUntil: "load" });

  const launcher = page.locator("[data-concierge] >> button");
  await launcher.waitFor({ timeout: 10000 });
  assert.equal(await launcher.getAttribute("aria-label"), "Open chat");
  await launcher.click();
  assert.equal(await launcher.getAttribute("aria-expanded"), "true");

  const frame = page.frameLocator("[data-concierge] >> iframe");
  const ready = frame.locator("[data-concierge-ready]");
  await ready.waitFor({ timeout: 20000 });
  const version = await ready.getAttribute("data-concierge-ready");
  assert.match(version, /^\d+\.\d+\.\d+$/);
  await page.screenshot({ path: `${artifacts}/demo-page-desktop.png` });
  assert.deepEqual(errors, [], "no page errors");
  console.log(`widget ready (version ${version})`);
} finally {
  await context.close();
}
