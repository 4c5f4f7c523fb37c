// The dev server (`npm run dev`) and the served page send one policy: web/headers.mjs. The dev server's headers are
// the built page's, with the Content-Security-Policy widened only by what hot reload needs (DEV_CSP_ADDITIONS), and
// the page under development runs under them: the engine loads, with no policy violation. Both pages are
// cross-origin isolated (COOP + COEP), so SharedArrayBuffer exists on them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, repo } from './helpers.mjs';
import { DEV_CSP_ADDITIONS, HEADERS, HUB_HOSTS } from '../../web/headers.mjs';

let env;
let dev;
before(async () => {
  env = await setup();
  const { createServer } = await import('vite');
  dev = await createServer({ configFile: `${repo}web/vite.config.ts`, logLevel: 'silent', server: { port: 0, host: '127.0.0.1' } });
  await dev.listen();
});
after(async () => {
  await dev?.close();
  await env?.close();
});

const directives = (csp) => new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));

test('the dev server sends the served page\'s headers; its policy adds only what hot reload needs', async () => {
  const served = await fetch(env.url);
  const devPage = await fetch(dev.resolvedUrls.local[0]);
  for (const [name, value] of Object.entries(HEADERS)) {
    assert.equal(served.headers.get(name), value, `served: ${name}`);
    if (name !== 'Content-Security-Policy') assert.equal(devPage.headers.get(name), value, `dev: ${name}`);
  }
  const [base, widened] = [directives(served.headers.get('content-security-policy')), directives(devPage.headers.get('content-security-policy'))];
  assert.deepEqual([...widened.keys()], [...base.keys()], 'the same directives');
  for (const [name, values] of base) assert.deepEqual(widened.get(name), [...values, ...(DEV_CSP_ADDITIONS[name] ?? [])], name);
  // Both let the page fetch from its own origin and from the Hugging Face Hub's download hosts (the model panel), each
  // named, and from nowhere else.
  const connect = ["'self'", ...HUB_HOSTS.map((h) => `https://${h}`)];
  assert.deepEqual(base.get('connect-src'), connect, 'served: connect-src');
  assert.deepEqual(widened.get('connect-src'), connect, 'dev: connect-src');
  for (const h of HUB_HOSTS) assert.match(h, /^(huggingface\.co|[a-z0-9-]+(\.[a-z0-9-]+)*\.(hf\.co|huggingface\.co))$/, `${h}: a Hub host, no wildcard`);
});

test('the page under development runs under the dev policy: engine loaded, no violation, no console error', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(dev.resolvedUrls.local[0]);
  // The dev server compiles each module on its first request: on a busy machine that takes a while.
  await page.waitForSelector('body[data-ready]', { timeout: 120000 });
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true', errors.join('\n'));
  assert.equal(await page.getAttribute('body', 'data-backend'), 'wasm-simd');
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(errors, []);
  assert.equal(await page.evaluate(() => crossOriginIsolated && typeof SharedArrayBuffer === 'function'), true, 'cross-origin isolated');
  await context.close();
});

test('the served page is cross-origin isolated: shared memory exists for the workers', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready]', { timeout: 120000 });
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true');
  assert.deepEqual(await page.evaluate(() => [crossOriginIsolated, typeof SharedArrayBuffer]), [true, 'function']);
  await context.close();
});
