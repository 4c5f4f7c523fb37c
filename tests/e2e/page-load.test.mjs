// The built page loads from a local static server: no console errors, nothing from another origin, the
// wasm SIMD engine reported, a strict CSP header and correct MIME types.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, openPage } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

test('page loads cleanly, same-origin only, on the wasm-simd backend', async () => {
  const responses = [];
  const { page, context, log } = await openPage(env, '');
  page.on('response', (r) => responses.push(r));
  // Reload so the response listener sees every resource, including the wasm.
  const main = await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForLoadState('networkidle');

  assert.deepEqual(log.errors, [], 'no console errors or warnings');
  const foreign = log.requests.filter((u) => !u.startsWith(env.origin));
  assert.deepEqual(foreign, [], 'no request to another origin');
  assert.equal(await page.getAttribute('body', 'data-backend'), 'wasm-simd');
  assert.match(await page.textContent('#engine-status'), /SIMD128/);

  const csp = main.headers()['content-security-policy'];
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self' 'wasm-unsafe-eval'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|'unsafe-eval'|\*/);

  const wasm = responses.filter((r) => r.url().endsWith('.wasm'));
  assert.ok(wasm.length >= 1, 'the engine fetched a .wasm file');
  for (const r of wasm) assert.equal(r.headers()['content-type'], 'application/wasm');
  const fonts = responses.filter((r) => /\.woff2$/.test(r.url()));
  for (const r of fonts) assert.equal(r.headers()['content-type'], 'font/woff2');

  // Every lab mounted, with its section in the nav.
  for (const id of ['softmax', 'attention', 'multihead']) {
    assert.ok(await page.$(`section#${id} h2`), `section ${id}`);
    assert.ok(await page.$(`.section-nav a[href="#${id}"]`), `nav link ${id}`);
  }
  await context.close();
});

test('the server refuses paths outside its root and unknown methods', async () => {
  const r1 = await fetch(`${env.url}..%2f..%2fpackage.json`);
  assert.ok(r1.status === 403 || r1.status === 404, `traversal answered ${r1.status}`);
  const r2 = await fetch(env.url, { method: 'POST' });
  assert.equal(r2.status, 405);
  const r3 = await fetch(`${env.url}no-such-file.js`);
  assert.equal(r3.status, 404);
});
