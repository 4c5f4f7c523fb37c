// Shared by the consumer tests: where prepare.mjs installed the packed tarball, how to run a program and
// fail with its output, a static server, headless Chromium (Debian's, as in tests/e2e/helpers.mjs) and the
// answer every consumer app must compute (apps/check.js).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = fileURLToPath(new URL('../../', import.meta.url));
export const packageJson = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));
/** Outside the repo, so nothing resolves from the repo's node_modules by accident; one per worktree. */
export const work = process.env.ATTNLAB_CONSUMERS_DIR ?? join(tmpdir(), `attnlab-consumers-${createHash('sha1').update(repo).digest('hex').slice(0, 8)}`);
export const app = join(work, 'app');
export const bin = (name) => join(repo, 'node_modules', name);

export function prepared() {
  const ready = join(work, 'ready.json');
  if (!existsSync(ready)) throw new Error(`${work} is not prepared: run \`node tests/consumers/prepare.mjs\` first (npm run test:consumers does)`);
  return JSON.parse(readFileSync(ready, 'utf8'));
}

/** Runs a program to completion; fails with its output when it exits non-zero. Returns stdout. */
export function run(command, args, { cwd = app, env = {}, expectFail = false } = {}) {
  const res = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
  const shown = `${command} ${args.join(' ')} (in ${cwd}) exited ${res.status}\n--- stdout\n${res.stdout}\n--- stderr\n${res.stderr}`;
  if (res.error) throw res.error;
  if (expectFail) assert.notEqual(res.status, 0, shown);
  else assert.equal(res.status, 0, shown);
  return { stdout: res.stdout, stderr: res.stderr, shown };
}

/**
 * The answer of apps/check.js; `result` is what check() returned (check(init, { gpt }) with the same gpt).
 * `source`: where both modules must have come from, 'file' (the .wasm beside the package's JS), 'inline' (the
 * copy inside its JS) or 'wasmUrl' (the app's own URL); from attnlab's fallback (`fallback: true`) each says why, from the inline entries never.
 */
export function expectGood(result, label, { gpt = false, source, fallback = false } = {}) {
  const at = `${label}: ${JSON.stringify(result)}`;
  assert.equal(result.error, undefined, at);
  assert.ok(['file', 'inline', 'wasmUrl'].includes(source), `${label}: expectGood needs the expected source`);
  assert.deepEqual([result.source, result.scalarSource], [source, source], at);
  if (fallback) {
    assert.match(result.fallback, /^attnlab-(gpt-)?simd\.wasm: .*; its copy inside the package's JS ran instead\.$/, at);
    assert.match(result.scalarFallback, /^attnlab-(gpt-)?scalar\.wasm: .*; its copy inside the package's JS ran instead\.$/, at);
  } else {
    assert.deepEqual([result.fallback, result.scalarFallback], [undefined, undefined], at);
  }
  assert.equal(result.backend, 'wasm-simd', at);
  assert.equal(result.scalar, 'wasm', at);
  assert.equal(result.version, packageJson.version, at);
  assert.ok(Math.abs(result.p[0] - 0.25) < 1e-7 && Math.abs(result.p[1] - 0.75) < 1e-7, at);
  assert.ok(Math.abs(result.output[0] - 15) < 1e-5, at); // equal scores: the mean of v
  assert.deepEqual(result.weights, [0.5, 0.5], at);
  assert.ok(Math.abs(result.scalarP[0] - 0.25) < 1e-7 && Math.abs(result.scalarP[1] - 0.75) < 1e-7, at);
  if (!gpt) {
    assert.match(result.gptRefusal, /^createGPT: this lab was loaded without the small GPT; load it with init\(\{ gpt: true \}\)$/, at);
    return;
  }
  // A 1-layer GPT over 5 tokens (d_model 8, MLP 32, tied embeddings, biases): 960 parameters; at initialization
  // (weights of std 0.02) the logits are near zero, so the first step's loss is near ln 5.
  for (const name of ['gpt', 'scalarGpt']) {
    const g = result[name];
    assert.equal(g?.parameters, 960, at);
    assert.ok(Math.abs(g.loss - Math.log(5)) < 0.1, at);
    assert.ok(g.tokens.length === 3 && g.tokens.every((t) => Number.isInteger(t) && t >= 0 && t < 5), at);
  }
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json' };

/**
 * Serves `root` on 127.0.0.1 (any free port). `wasmType` overrides the .wasm Content-Type (a misconfigured
 * host). Records every request's path.
 */
export async function serve(root, { wasmType = types['.wasm'] } = {}) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(path);
    if (path === '/favicon.ico') return res.writeHead(204).end();
    const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    if (!file.startsWith(normalize(root))) return res.writeHead(403).end();
    const body = await readFile(file).catch(() => null);
    if (body === null) return res.writeHead(404, 'Not Found').end();
    const ext = extname(file);
    res.writeHead(200, { 'Content-Type': ext === '.wasm' ? wasmType : types[ext] ?? 'application/octet-stream', 'Cache-Control': 'no-store' }).end(body);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { origin: `http://127.0.0.1:${server.address().port}`, requests, close: () => new Promise((ok) => server.close(ok)) };
}

export async function launchChromium() {
  return (await import('../chromium.mjs')).launchChromium();   // the run's shared browser under npm test
}

/** Opens `url` and waits for the page to set window.__result; returns it with console problems and requests. */
export async function pageResult(browser, url) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = [], requests = [];
  // A failed request is reported with its URL (the console's own line has none); a missing favicon is no problem.
  page.on('response', (r) => r.status() >= 400 && !r.url().endsWith('/favicon.ico') && problems.push(`HTTP ${r.status()}: ${r.url()}`));
  page.on('console', (m) => ['error', 'warning'].includes(m.type()) && !/^Failed to load resource/.test(m.text()) && problems.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 60000 });
    return { result: await page.evaluate(() => window.__result), problems, requests };
  } finally {
    await context.close();
  }
}
