// The package in real headless Chromium (browser.test.mjs, threads-browser.test.mjs): a server on 127.0.0.1 that
// serves a test's own page files and the built package under /dist/ with a Content-Security-Policy, Debian's
// Chromium driven by playwright-core, and a page run that waits for the results the page leaves in
// window.__results, collecting console problems and requests on the way.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';

import { launchChromium } from '../../chromium.mjs';
import { dist } from './load.mjs';

/** The CSP of the pages that start workers: 'self' scripts, the module's compilation, and blob: workers only. */
export const WORKERS_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src blob:";

/**
 * A page script: `body` (which defines `async function run()`), then the run, its result (or its failure) and the
 * CSP violations seen left in window.__results for pageResults.
 */
export const pageRun = (body) => `${body}
const violations = [];
document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective + ' ' + e.blockedURI));
try { window.__results = { ...(await run()), violations }; } catch (e) { window.__results = { failed: String(e && e.stack || e), violations }; }
`;

const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

/**
 * Starts the server and the browser. `pages(path)` returns the test's own file at `path` as { body, type } (type a
 * file ending: '.html', '.js'), or null; /dist/<file> serves the built package. `headers(path)`: more response
 * headers (cross-origin isolation's COOP and COEP, say).
 * Returns { origin, browser, close }.
 */
export async function startPackagePage({ csp, pages, headers: extra = () => ({}) }) {
  const server = createServer(async (req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    if (path === '/favicon.ico') return res.writeHead(204).end();
    let body = null, type;
    const own = pages(path);
    if (own) ({ body, type } = own);
    else if (/^\/dist\/[\w.-]+$/.test(path)) {
      body = await readFile(dist + path.slice('/dist/'.length)).catch(() => null);
      type = path.slice(path.lastIndexOf('.'));
    }
    if (body == null) return res.writeHead(404).end();
    const headers = { 'Content-Security-Policy': csp, 'Cache-Control': 'no-store', ...extra(path) };
    res.writeHead(200, { ...headers, 'Content-Type': types[type] ?? 'application/octet-stream' }).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${server.address().port}`;
  let browser;
  try {
    browser = await launchChromium();   // the run's shared browser under npm test (tests/chromium.mjs)
  } catch (e) {
    await new Promise((ok) => server.close(ok));
    throw e;
  }
  return {
    origin,
    browser,
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/**
 * Opens `url` in a new tab of `opener` (a browser or a context) and waits (up to `timeout` ms) for the page to set
 * window.__results. Returns { got, problems, requests }: console errors and warnings, page errors, request paths.
 */
export async function pageResults(opener, url, { timeout = 30000 } = {}) {
  const tab = await opener.newPage();
  const problems = [], requests = [];
  tab.on('console', (m) => ['error', 'warning'].includes(m.type()) && problems.push(`${m.type()}: ${m.text()}`));
  tab.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  tab.on('request', (q) => requests.push(new URL(q.url()).pathname));
  try {
    await tab.goto(url);
    await tab.waitForFunction(() => window.__results !== undefined, null, { timeout });
    return { got: await tab.evaluate(() => window.__results), problems, requests };
  } finally {
    await tab.close();
  }
}
