// Shared setup for the explorer's e2e tests: serve web/dist with scripts/serve.mjs on a free port and drive
// Debian's Chromium through playwright-core (tests/chromium.mjs: `npm run test:e2e` shares one browser across the
// files). Tests fail (not skip) when the build or the browser is missing.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';
import { launchChromium } from '../chromium.mjs';

export const repo = fileURLToPath(new URL('../../', import.meta.url));
// ATTNLAB_WEB_DIST points the tests at another build of the page (e.g. a scratch build while developing).
export const distDir = process.env.ATTNLAB_WEB_DIST ?? `${repo}web/dist`;
export const shotsDir = `${repo}artifacts/screenshots`;

export async function setup() {
  if (!existsSync(`${distDir}/index.html`)) {
    throw new Error('web/dist/index.html is missing: run `npm run build` and `npm run build:web` first');
  }
  const { server, url } = await startServer({ root: distDir, port: 0 });
  const browser = await launchChromium();   // the run's shared browser under scripts/with-chromium.mjs
  const origin = new URL(url).origin;
  return {
    url,
    origin,
    browser,
    idle: [],   // tabs handed back by done() (openPage), for the next openPage (its viewport and motion set there)
    async close() {
      await browser.close();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Opens the page and records console errors, page errors, dialogs and every request's URL.
 * Waits until the labs are mounted (body[data-ready="true"]). `base` is the served page unless given (the offline
 * copy's file:// URL).
 *
 * A test that is through with its page hands it back with done() instead of closing its context: the next openPage
 * of the file navigates that tab to its own URL — a new document, so nothing of the page's state carries over (it
 * lives in the URL), with a fresh log — and saves starting a browser context and its renderer. The tab gets the
 * viewport and the motion setting asked for before it navigates (the same emulation a new context would start with:
 * Playwright's viewport, and prefers-reduced-motion through page.emulateMedia where the setting differs), so the
 * document loads as it would in a new context; a tab with the same motion setting is taken first. Hand back only a
 * tab with nothing of the test's own on it (listeners, routes, emulation, permissions). A test that fails never
 * reaches done(), so its tab is not reused.
 */
export async function openPage(env, query = '', { width = 1280, height = 900, reducedMotion = 'reduce', base = env.url } = {}) {
  const target = `${base}${query}`;
  const idle = (env.idle ?? []).filter((t) => !t.page.isClosed());
  let tab = idle.find((t) => t.motion === reducedMotion) ?? idle[0] ?? null;
  if (env.idle) env.idle = env.idle.filter((t) => t !== tab && !t.page.isClosed());
  if (tab) {
    const size = tab.page.viewportSize();
    if (size.width !== width || size.height !== height) {
      // The old document is about to go: it is not laid out again at the new size (a page laid out whole at another
      // width would be, all of it, for nothing).
      await tab.page.evaluate(() => { document.documentElement.style.display = 'none'; });
      await tab.page.setViewportSize({ width, height });
    }
    if (tab.motion !== reducedMotion) {
      await tab.page.emulateMedia({ reducedMotion });
      tab.motion = reducedMotion;
    }
    // A URL that differs from the current one only after '#' would be a same-document navigation (no new page):
    // give the old document another address first (no request; a navigation from it loads a new document).
    const bare = (u) => u.split('#')[0];
    if (target.includes('#') && bare(tab.page.url()) === bare(target)) await tab.page.evaluate(() => history.replaceState(null, '', '/favicon.svg'));
    await tab.page.evaluate(() => { window.__handedBack = true; });  // checked below: gone with the old document
    tab.log = { errors: [], requests: [], dialogs: [] };
  } else {
    const context = await env.browser.newContext({ viewport: { width, height }, reducedMotion, deviceScaleFactor: 1 });
    const page = await context.newPage();
    tab = { motion: reducedMotion, context, page, log: { errors: [], requests: [], dialogs: [] } };
    const t = tab;
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') t.log.errors.push(`${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => t.log.errors.push(`pageerror: ${e.message}`));
    page.on('request', (r) => t.log.requests.push(r.url()));
    page.on('dialog', (d) => { t.log.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  }
  const { page, context, log } = tab;
  await page.goto(target);
  await page.waitForSelector('body[data-ready]', { timeout: 20000 });
  const ready = await page.getAttribute('body', 'data-ready');
  if (ready !== 'true') throw new Error(`page failed to start: ${log.errors.join('\n')}`);
  if (await page.evaluate(() => window.__handedBack === true)) throw new Error(`openPage: ${query} kept the last test's document`);
  let handedBack = false;
  const done = async () => {
    if (handedBack || page.isClosed()) return;
    handedBack = true;
    await endRenderWhole(page);
    env.idle?.push(tab);
  };
  return { page, context, log, done };
}

/** Reads a matrix table (data-matrix=name) as { rows, cols, values: number[][] } from its exact data-value attributes. */
export async function readMatrix(page, name) {
  return page.$eval(`table[data-matrix="${name}"]`, (t) => {
    const rows = Number(t.dataset.rows);
    const cols = Number(t.dataset.cols);
    const values = [];
    for (let r = 0; r < rows; r++) {
      const row = [];
      for (let c = 0; c < cols; c++) {
        const td = t.querySelector(`td[data-r="${r}"][data-c="${c}"]`);
        row.push(Number(td.dataset.value));
      }
      values.push(row);
    }
    return { rows, cols, values };
  });
}

/**
 * Waits until the page has settled: the state written into the URL (the store does it 120 ms after the last
 * edit and marks body[data-url-pending] meanwhile), then two animation frames and a task, so that observers
 * (a figure scrolled into view renders from an IntersectionObserver) have run. Conditions, not a fixed time.
 */
export async function settle(page) {
  await page.waitForFunction(() => !document.body.hasAttribute('data-url-pending'), null, { polling: 'raf' });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));
}

/**
 * Lets everything already queued on the page run: two rounds of an animation frame, a message round trip and a
 * task. After a worker is terminated, any message it posted before that has then been handled, so a check that
 * "nothing more arrives" is made on a drained queue instead of after a guessed sleep.
 */
export async function drainTasks(page) {
  for (let i = 0; i < 2; i++) {
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => {
      const c = new MessageChannel();
      c.port1.onmessage = () => setTimeout(r, 0);
      c.port2.postMessage(0);
    })));
  }
}

/** Opens every <details> on the page (the tables behind the heatmaps, the fine print). */
export async function openDisclosures(page) {
  await page.$$eval('details', (ds) => ds.forEach((d) => { d.open = true; }));
}

export function ensureShotsDir() {
  mkdirSync(shotsDir, { recursive: true });
}

/**
 * Screenshots are for people to look at (artifacts/screenshots/): they assert nothing, and encoding them costs the
 * suite CPU, so the tests take them only when asked, with ATTNLAB_SCREENSHOTS=1 (`npm run screenshots`).
 * `target` is a page, an element handle or a locator; every check around a shot runs either way.
 */
export const screenshotsWanted = process.env.ATTNLAB_SCREENSHOTS === '1';
export async function shot(target, path, options = {}) {
  if (!screenshotsWanted) return;
  ensureShotsDir();
  await target.screenshot({ path, ...options });
}

/**
 * The attention lab as the page shows it: X, W_Q, W_K, W_V, the weights, the output (and the scaled, masked scores), read
 * from the tables, plus the scale the page applies: 1/√d_k (or 1 with sc=0) divided by the temperature tau.
 */
export async function readAttentionLab(page) {
  const m = async (name) => (await readMatrix(page, name)).values;
  const [X, Wq, Wk, Wv, W, O, M] = [await m('X'), await m('Wq'), await m('Wk'), await m('Wv'), await m('weights'), await m('output'), await m('scores')];
  const { sc, tau } = await page.evaluate(() => {
    const p = new URLSearchParams(location.search);
    return { sc: p.get('sc'), tau: p.get('tau') };
  });
  const scale = (sc === '0' ? 1 : 1 / Math.sqrt(Wq[0].length)) / (tau === null ? 1 : Number(tau));
  return { X, Wq, Wk, Wv, W, O, M, scale };
}

const AXE_SOURCE = () => readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe on `selector` (loaded into the page once): every violation printed, none serious or critical. */
export async function axeOn(page, selector) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE());
  const v = await page.evaluate(async (sel) => (await window.axe.run(sel, { resultTypes: ['violations'] })).violations
    .map((x) => ({ id: x.id, impact: x.impact, nodes: x.nodes.map((n) => n.target.join(' ')).slice(0, 3) })), selector);
  for (const x of v) console.log(`axe ${selector}: ${x.impact} ${x.id} ${x.nodes.join('; ')}`);
  assert.deepEqual(v.filter((x) => x.impact === 'serious' || x.impact === 'critical'), []);
}

/**
 * Screenshots of `section` at 1280 and 390 px (shotsDir/NAME-desktop.png, NAME-mobile.png), the page no wider than
 * the viewport at each; then back to 1280. The sticky section nav would sit across an element screenshot taken
 * scrolled down: hidden meanwhile (CSSOM, CSP-safe).
 */
export async function shootSection(page, section, name) {
  ensureShotsDir();
  await page.evaluate(() => { document.querySelector('nav').style.visibility = 'hidden'; });
  for (const [label, width] of [['desktop', 1280], ['mobile', 390]]) {
    await page.setViewportSize({ width, height: 900 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= width, `page is ${wide} px wide at ${width} px`);
    await shot(await page.$(`section${section}`), `${shotsDir}/${name}-${label}.png`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.evaluate(() => { document.querySelector('nav').style.visibility = ''; });
}

/**
 * Lays the whole page out at `width` before a test grows the viewport to the page's height, so that growing takes
 * one step instead of one per round of lazy parts (each step of a viewport that tall repaints all of it): the
 * layout viewport is made taller than the page (Chromium's Emulation.setDeviceMetricsOverride with
 * dontSetVisibleSize: what is on screen keeps its size, so nothing is painted off it) until the page's height
 * holds for three checks two frames apart; then the tab's own viewport applies again, and the test grows it as
 * before until the page stops growing (that loop decides what is laid out; this only saves it steps). With
 * keep: true the tall layout viewport stays, as renderWhole's does, for checks of layout alone (no screenshot),
 * until endRenderWhole(page) or done().
 */
export async function layOutWhole(page, width, { keep = false } = {}) {
  const cdp = await tallSession(page);
  try {
    for (let i = 0, last = 0, same = 0; i < 60 && same < 3; i++) {
      const h = await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(Math.ceil(document.documentElement.getBoundingClientRect().height))))));
      if (h === last) { same++; continue; }
      same = 0;
      last = h;
      await cdp.send('Emulation.setDeviceMetricsOverride', { width, height: h + 2000, deviceScaleFactor: 1, mobile: false, dontSetVisibleSize: true });
    }
  } finally {
    if (!keep) await endRenderWhole(page);
  }
}

/**
 * Makes the layout viewport as tall as the page (up to the tallest used, 30000 px), until the page stops growing,
 * so every section is laid out (as a reader scrolling down would meet it: a box that scrolls sideways becomes a
 * focusable region once in view, a lazy figure draws itself). The first step goes straight to 30000 px: the page
 * grows as its lazy parts load; then down to the page where it is shorter. Through Chromium's
 * Emulation.setDeviceMetricsOverride with dontSetVisibleSize: the page, its layout and its hit tests see a window
 * that tall, but the screen keeps its size, so the browser does not raster tens of thousands of pixel rows that
 * nothing looks at (a real viewport that tall cost ~3-7 CPU-s a step; axe finds the same passes, violations and
 * incompletes either way). Not for screenshots (they need the pixels: grow the real viewport). It lasts until
 * endRenderWhole(page) (done() calls it), which gives the tab the viewport it had.
 */
export async function renderWhole(page, width) {
  const cdp = await tallSession(page);
  const tallest = 30000;
  for (let i = 0, last = 0; i < 8; i++) {
    // The content's own height (scrollHeight would be the viewport's once that is the taller).
    const h = i === 0 ? tallest : Math.min(Math.ceil(await page.evaluate(() => document.documentElement.getBoundingClientRect().height)), tallest);
    if (h === last) break;
    last = h;
    await cdp.send('Emulation.setDeviceMetricsOverride', { width, height: h, deviceScaleFactor: 1, mobile: false, dontSetVisibleSize: true });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
}

/** The tab's CDP session that holds a tall layout viewport (one per tab; endRenderWhole ends it). */
const tallSessions = new WeakMap();
async function tallSession(page) {
  if (!tallSessions.has(page)) tallSessions.set(page, await page.context().newCDPSession(page));
  return tallSessions.get(page);
}

/** Ends renderWhole's tall layout viewport: the tab's own viewport again. */
export async function endRenderWhole(page) {
  const cdp = tallSessions.get(page);
  if (!cdp) return;
  tallSessions.delete(page);
  await cdp.detach();  // ends this session's emulation: the window's own size shows until the viewport is set again
  await forceViewport(page, page.viewportSize());
}

/** Sets the viewport even where Playwright thinks it is set already (it skips an override equal to its last). */
async function forceViewport(page, { width, height }) {
  await page.setViewportSize({ width, height: height + 1 });
  await page.setViewportSize({ width, height });
}
