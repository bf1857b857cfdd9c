// The browser every end-to-end script drives: Debian's chromium (CHROMIUM, default
// /usr/bin/chromium) through playwright-core, headless, one context with reduced motion (the
// UI then opens dialogs without animation, so a click never lands on a dialog still zooming
// in) and one page; `step` runs one named check, prints `ok   NAME (N ms)`, and on the first
// failure prints `FAIL NAME: why`, keeps a screenshot (SCREENSHOTS, if set) and exits 1;
// `done` closes the browser and prints `NAME: N passed`.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';

/** Opens the browser for the script `name`. */
export async function open(name, { width = 1280, height = 800, timeout = 30000, fullPage = false, failureShot } = {}) {
  const shots = process.env.SCREENSHOTS;
  if (shots) mkdirSync(shots, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  const context = await browser.newContext({ viewport: { width, height }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  page.setDefaultTimeout(timeout);
  const state = { passed: 0 };
  async function step(label, fn) {
    const t0 = Date.now();
    try {
      await fn();
      state.passed += 1;
      console.log(`ok   ${label} (${Date.now() - t0} ms)`);
    } catch (e) {
      console.log(`FAIL ${label}: ${e.message} (at ${page.url()})`);
      const path = `${shots}/${failureShot || `${name}-failure`}.png`;
      if (shots) await page.screenshot({ path, fullPage }).catch(() => {});
      await browser.close();
      process.exit(1);
    }
  }
  async function done() {
    await browser.close();
    console.log(`${name}: ${state.passed} passed`);
  }
  return { browser, context, page, shots, step, done, byTest: (id) => page.getByTestId(id), state };
}
