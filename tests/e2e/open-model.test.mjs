// The model panel opens real models: from the Hugging Face Hub by repository id, and from disk through the file
// chooser or by dropping the files on it. The Hub is played by two local HTTPS servers the test starts: one answers
// https://huggingface.co/{repo}/resolve/main/{file} (the Hub's URL layout) and redirects the .safetensors files to
// the other, another origin, as the Hub redirects its large files to its storage host (https://cas-bridge.xethub.hf.co). The browser context reaches
// them through a local proxy that sends exactly those two host names to them (a self-signed certificate, accepted by
// this context only): the built page is the page as shipped, with its real URLs, under its own Content-Security-Policy
// (which must allow both hosts, the redirect's target included), with no test-only switch in it. Every request the
// servers answer is counted. Checkpoints with random weights in the GPT-2 and Llama layouts (tests/lm/checkpoints.py),
// each with a tokenizer.json of one-character tokens.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setup, ensureShotsDir, shotsDir, shot, distDir } from './helpers.mjs';
import { writeCheckpoints } from '../js/support/lm-fixtures.mjs';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const HUB_HOST = 'huggingface.co';
const STORAGE_HOST = 'cas-bridge.xethub.hf.co';
// Repository id → checkpoint folder. 'too-large' is GPT-2's folder whose weights the storage host says are 3 GB.
const REPOS = { 'attnlab-test/tiny-gpt2': 'gpt2-f16', 'attnlab-test/tiny-llama': 'llama-untied-sharded', 'attnlab-test/too-large': 'gpt2-f16' };
const HUGE = 3_000_000_000;

let env;
let ckpt;
let tls;
let hub;
let storage;
let proxy;

// A tokenizer.json of `n` one-character tokens ("0", "1", …) and no merges: its ids are the embeddings' rows.
const letters = (n) => JSON.stringify({ model: { type: 'BPE', vocab: Object.fromEntries(Array.from({ length: n }, (_, i) => [String.fromCodePoint(48 + i), i])), merges: [] } });
// The same letters with a Llama's <s> as the last id, put before every text (TemplateProcessing, as Llama 2's file does).
const lettersWithBos = (n) => {
  const t = JSON.parse(letters(n - 1));
  t.model.vocab['<s>'] = n - 1;
  t.added_tokens = [{ id: n - 1, content: '<s>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }];
  t.post_processor = { type: 'TemplateProcessing', single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
    pair: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<s>': { id: '<s>', ids: [n - 1], tokens: ['<s>'] } } };
  return JSON.stringify(t);
};
const MODEL_FILE = (name) => name.endsWith('.safetensors') || (name.endsWith('.json') && name !== 'reference.json');

/**
 * A local HTTPS server: `answer(req, res, parts)` serves; every request is logged as "METHOD path". `hold(name)`
 * makes the next GET of that file send half of its bytes and then nothing more (a download in flight, for Cancel);
 * `fail(name)` makes every GET of it end the connection before any byte, until `unfail(name)`.
 */
async function localServer(answer) {
  const log = [];
  const held = new Set();
  const failing = new Set();
  const open = new Set();
  const waiting = [];  // [entry, resolve]: seen(entry) promises
  const server = createHttpsServer(tls, (req, res) => {
    const parts = new URL(req.url, 'https://x').pathname.split('/').map(decodeURIComponent);
    const name = parts.at(-1);
    const entry = `${req.method} ${parts.slice(1).join('/')}`;
    log.push(entry);
    for (const w of waiting.filter(([e]) => e === entry)) { waiting.splice(waiting.indexOf(w), 1); w[1](); }
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'GET' && failing.has(name)) {  // every time: the browser retries a request on a fresh connection once
      req.socket.destroy();
      return;
    }
    answer(req, res, parts, req.method === 'GET' && held.delete(name));
  });
  server.on('connection', (s) => { open.add(s); s.on('close', () => open.delete(s)); });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: server.address().port,
    log,
    hold: (name) => held.add(name),
    fail: (name) => failing.add(name),
    unfail: (name) => failing.delete(name),
    /** Resolves once a request `entry` ("METHOD path") has arrived. */
    seen: (entry) => (log.includes(entry) ? Promise.resolve() : new Promise((r) => waiting.push([entry, r]))),
    close: () => { for (const s of open) s.destroy(); return new Promise((r) => server.close(r)); },
  };
}

function sendFile(req, res, path, { size, half } = {}) {
  let body;
  try {
    body = readFileSync(path);
  } catch {
    res.writeHead(404).end('Entry not found');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': size ?? body.length });
  if (req.method === 'HEAD') res.end();
  else if (half) res.write(body.subarray(0, body.length >> 1));
  else res.end(body);
}

before(async () => {
  env = await setup();
  ckpt = writeCheckpoints(['gpt2-f16', 'llama-untied-sharded']);
  for (const [name, vocab] of [['gpt2-f16', 50], ['llama-untied-sharded', 45]]) writeFileSync(join(ckpt.dir, name, 'tokenizer.json'), letters(vocab));
  // A certificate for the two host names (openssl, from scripts/bootstrap.sh).
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${HUB_HOST}`,
    '-addext', `subjectAltName=DNS:${HUB_HOST},DNS:${STORAGE_HOST}`, '-keyout', join(ckpt.dir, 'tls.key'), '-out', join(ckpt.dir, 'tls.crt')], { stdio: 'ignore' });
  tls = { key: readFileSync(join(ckpt.dir, 'tls.key')), cert: readFileSync(join(ckpt.dir, 'tls.crt')) };
  // The hub: /{owner}/{name}/resolve/main/{file}; weights redirect to the storage host, as the Hub's LFS files do.
  hub = await localServer((req, res, parts) => {
    const [, owner, name, resolve, rev, file] = parts;
    const folder = REPOS[`${owner}/${name}`];
    if (parts.length !== 6 || resolve !== 'resolve' || rev !== 'main' || !folder || !MODEL_FILE(file)) {
      res.writeHead(404).end('Entry not found');
      return;
    }
    if (file.endsWith('.safetensors')) {
      res.writeHead(302, { Location: `https://${STORAGE_HOST}/xet-bridge-us/${owner}/${name}/${file}?X-Signature=test` }).end();
      return;
    }
    sendFile(req, res, join(ckpt.dir, folder, file));
  });
  storage = await localServer((req, res, parts, half) => {
    const [, bridge, owner, name, file] = parts;
    const folder = REPOS[`${owner}/${name}`];
    if (bridge !== 'xet-bridge-us' || !folder) {
      res.writeHead(404).end();
      return;
    }
    sendFile(req, res, join(ckpt.dir, folder, file), { size: name === 'too-large' && req.method === 'HEAD' ? HUGE : undefined, half });
  });
  // The proxy: a CONNECT to either host name goes to its server; anything else is refused.
  const ports = { [HUB_HOST]: hub.port, [STORAGE_HOST]: storage.port };
  proxy = createServer((req, res) => res.writeHead(403).end());
  const tunnels = new Set();
  proxy.tunnels = tunnels;
  proxy.on('connect', (req, socket, head) => {
    tunnels.add(socket);
    socket.on('close', () => tunnels.delete(socket));
    const port = ports[req.url.replace(/:443$/, '')];
    if (!port) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const up = connect(port, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
});
after(async () => {
  await hub?.close();
  await storage?.close();
  for (const s of proxy?.tunnels ?? []) s.destroy();
  proxy?.closeAllConnections();
  await new Promise((r) => (proxy ? proxy.close(r) : r()));
  ckpt?.cleanup();
  await env?.close();
});

/** The page, in a context whose https requests go through the test's proxy (the page's own origin does not). */
async function openPanel({ width = 1280, height = 900 } = {}) {
  const context = await env.browser.newContext({
    viewport: { width, height }, reducedMotion: 'reduce', deviceScaleFactor: 1, ignoreHTTPSErrors: true,
    proxy: { server: `http://127.0.0.1:${proxy.address().port}`, bypass: 'localhost,127.0.0.1' },
  });
  const page = await context.newPage();
  const log = { errors: [] };
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') log.errors.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => log.errors.push(`pageerror: ${e.message}`));
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(env.url);
  await page.waitForSelector('body[data-ready]', { timeout: 20000 });
  assert.equal(await page.getAttribute('body', 'data-ready'), 'true', log.errors.join('\n'));
  await openAnother(page);
  return { page, context, log };
}

/** Opens "Open another model" once the panel shows the model it has: the page's own model loads as the panel comes
 * near the screen, and its facts (one line while loading, six after) move the summary down, so a click sent while
 * they grow can land on whatever moved into its place. */
async function openAnother(page) {
  await page.locator('#open-model').scrollIntoViewIfNeeded();
  await page.waitForSelector('[data-figure="model-current"] [data-fact="source"]');
  await page.click('[data-figure="model-open"] > summary');
  await page.waitForFunction(() => document.querySelector('[data-figure="model-open"]').open);
}

const text = (page, figure) => page.textContent(`[data-figure="${figure}"]`);
const fact = (page, key) => page.textContent(`[data-figure="model-current"] [data-fact="${key}"]`);
const files = (name) => readdirSync(join(ckpt.dir, name)).filter(MODEL_FILE);
const size = (name, file) => statSync(join(ckpt.dir, name, file)).size;
// The panel's size format (model-lab.ts's mb): these files are small, so kilobytes with one decimal.
const kb = (n) => `${(n / 1e3).toFixed(1)} kB`;

/** Clicks "Check size" and waits for the size (or fails with the panel's message). */
async function sized(page) {
  await page.click('[data-control="model-size"]');
  await page.waitForFunction(() => ['sized', 'error', 'refused', 'cancelled'].includes(document.getElementById('open-model').dataset.state));
  assert.equal(await page.getAttribute('#open-model', 'data-state'), 'sized', await text(page, 'model-error'));
}

/** Checks a repository's size, then downloads and opens it; waits for the panel to say so. */
async function fromHub(page, repo) {
  await page.fill('[data-control="model-repo"]', repo);
  await sized(page);
  await page.click('[data-control="model-download"]');
  await page.waitForFunction(() => ['open', 'error', 'cancelled'].includes(document.getElementById('open-model').dataset.state));
}

/** The open model answers: "Next token" on "0123" names it and its three most likely tokens. */
async function stillWorks(page, name) {
  await page.fill('[data-control="model-try-text"]', '0123');
  await page.click('[data-control="model-try"]');
  await page.waitForFunction((n) => document.querySelector('[data-figure="model-try-out"]').textContent.startsWith(`${n} predicts:`), name);
  assert.equal(await fact(page, 'name'), name);
}

test('from the Hub: the size first, then the download with progress; cancel and a failed fetch keep the model; a reload comes from the cache', async () => {
  const { page, context, log } = await openPanel();
  // The panel loads the page's own model when it comes near the screen.
  await page.waitForFunction(() => document.querySelector('[data-figure="model-current"] [data-fact="name"]')?.textContent === 'kjv-fortunes-gpt');
  assert.equal(await fact(page, 'source'), 'shipped with the page');

  // Nothing is fetched until the learner clicks.
  assert.deepEqual([hub.log.length, storage.log.length], [0, 0], 'no request before a click');
  await page.fill('[data-control="model-repo"]', 'attnlab-test/tiny-gpt2');
  await sized(page);
  // The size is shown before any weight is downloaded: HEAD requests (the weights' after their redirect), config.json read.
  const gpt2 = files('gpt2-f16');
  const toDownload = gpt2.filter((f) => f !== 'config.json').reduce((s, f) => s + size('gpt2-f16', f), 0);
  const sizeText = await text(page, 'model-size');
  assert.match(sizeText, new RegExp(`${kb(toDownload).replace('.', '\\.')} to download`), sizeText);
  assert.match(sizeText, new RegExp(`model\\.safetensors ${kb(size('gpt2-f16', 'model.safetensors')).replace('.', '\\.')}`));
  assert.deepEqual(storage.log, ['HEAD xet-bridge-us/attnlab-test/tiny-gpt2/model.safetensors'], 'the weights: one HEAD at the storage host');
  assert.ok(hub.log.every((r) => r.startsWith('HEAD ') || r === 'GET attnlab-test/tiny-gpt2/resolve/main/config.json'), hub.log.join('\n'));
  assert.equal(await page.textContent('[data-control="model-download"]'), `Download ${kb(toDownload)}`);

  await page.click('[data-control="model-download"]');
  await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'open');
  assert.equal(await fact(page, 'name'), 'tiny-gpt2');
  assert.match(await fact(page, 'source'), /Hugging Face Hub \(attnlab-test\/tiny-gpt2\)/);
  assert.equal(await fact(page, 'architecture'), 'GPT2LMHeadModel');
  assert.match(await fact(page, 'layers'), /^3 × 2, d_model 16$/);
  // 50·16 + 48·16 embeddings, 3 blocks of (2·16 + 16·48 + 48 + 16·16 + 16 + 2·16 + 16·44 + 44 + 44·16 + 16), 2·16 final norm.
  const gpt2Params = 50 * 16 + 48 * 16 + 3 * (2 * 16 + 16 * 48 + 48 + 16 * 16 + 16 + 2 * 16 + 16 * 44 + 44 + 44 * 16 + 16) + 2 * 16;
  assert.equal(await fact(page, 'parameters'), gpt2Params.toLocaleString('en'));
  assert.match(await fact(page, 'memory'), /kB|MB/);
  // Progress per file: every file's row says it all arrived.
  for (const f of gpt2.filter((x) => x !== 'config.json')) {
    assert.equal(await page.textContent(`[data-figure="model-files"] [data-file="${f}"]`), `${f}: ${kb(size('gpt2-f16', f))} of ${kb(size('gpt2-f16', f))}`);
  }
  await stillWorks(page, 'tiny-gpt2');
  assert.deepEqual(storage.log.filter((r) => r.startsWith('GET')), ['GET xet-bridge-us/attnlab-test/tiny-gpt2/model.safetensors'], 'the weights downloaded once, through the redirect');

  // Cancel mid-download: the Llama checkpoint's second of three shards never arrives; the first has.
  storage.hold('model-00002-of-00003.safetensors');
  await page.fill('[data-control="model-repo"]', 'attnlab-test/tiny-llama');
  await sized(page);
  assert.match(await text(page, 'model-size'), /model-00003-of-00003\.safetensors/, 'the shards named by the index, sized');
  await page.click('[data-control="model-download"]');
  // Half of the second shard has arrived (the server sends no more); the first shard is in.
  const [shard1, shard2] = [1, 2].map((k) => size('llama-untied-sharded', `model-0000${k}-of-00003.safetensors`));
  await page.waitForFunction((s) => document.querySelector('[data-file="model-00002-of-00003.safetensors"]')?.textContent
    === `model-00002-of-00003.safetensors: ${s}`, `${kb(shard2 >> 1)} of ${kb(shard2)}`);
  assert.equal(await page.textContent('[data-file="model-00001-of-00003.safetensors"]'), `model-00001-of-00003.safetensors: ${kb(shard1)} of ${kb(shard1)}`);
  assert.match(await text(page, 'model-status'), /^Downloading attnlab-test\/tiny-llama: [\d.]+ kB of [\d.]+ kB$/);
  assert.ok(await page.$eval('.model-progress', (p) => p.value > 0 && p.value < 1), 'the bar is part way');
  await page.click('[data-control="model-cancel"]');
  await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'cancelled');
  assert.match(await text(page, 'model-error'), /^Download cancelled:.*[.!?…] The page still runs on tiny-gpt2\.$/);
  await stillWorks(page, 'tiny-gpt2');

  // A fetch that fails (the connection reset): a message naming the file, and the old model stays.
  await sized(page);
  hub.fail('tokenizer.json');
  await page.click('[data-control="model-download"]');
  await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'error');
  hub.unfail('tokenizer.json');
  assert.match(await text(page, 'model-error'), /^Could not download the model: tokenizer\.json: the download failed.*[.!?…] The page still runs on tiny-gpt2\.$/);
  await stillWorks(page, 'tiny-gpt2');

  // Too large for the tab: refused from the sizes, before any download.
  const before = storage.log.length;
  await page.fill('[data-control="model-repo"]', 'attnlab-test/too-large');
  await page.click('[data-control="model-size"]');
  await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'refused');
  assert.match(await text(page, 'model-error'), /^Too large for this tab: This model needs about 3\.\d\d GB .* more than the 2\.15 GB of memory the engine can use in this tab\. Nothing was downloaded\. The page still runs on tiny-gpt2\.$/);
  assert.deepEqual(storage.log.slice(before), ['HEAD xet-bridge-us/attnlab-test/too-large/model.safetensors'], 'only the size was asked');
  assert.ok(await page.isHidden('[data-control="model-download"]'));

  // Now the Llama model opens (its first shard from the cache), and a reload opens it again without a request.
  await fromHub(page, 'attnlab-test/tiny-llama');
  assert.equal(await page.getAttribute('#open-model', 'data-state'), 'open', await text(page, 'model-error'));
  assert.equal(await fact(page, 'architecture'), 'LlamaForCausalLM, rotary positions');
  assert.match(await fact(page, 'layers'), /^2 × 4, d_model 40$/);
  await stillWorks(page, 'tiny-llama');
  assert.equal(storage.log.filter((r) => r === 'GET xet-bridge-us/attnlab-test/tiny-llama/model-00001-of-00003.safetensors').length, 1, 'the first shard was kept from the cancelled download');
  // On the opened model the attention lab says what X is for a Llama: its RMSNorm's output, a word the glossary explains.
  await page.click('#attention [data-control="preset-real"]');
  await page.waitForSelector('#attention dfn.term[data-term="RMSNorm"]', { state: 'attached' });

  const requests = hub.log.length + storage.log.length;
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await openAnother(page);
  await page.fill('[data-control="model-repo"]', 'attnlab-test/tiny-llama');
  await sized(page);
  assert.match(await text(page, 'model-size'), /everything is in this browser already, nothing to download/);
  assert.equal(await page.textContent('[data-control="model-download"]'), 'Open');
  await page.click('[data-control="model-download"]');
  await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'open');
  await stillWorks(page, 'tiny-llama');
  assert.equal(hub.log.length + storage.log.length, requests, 'the reload downloaded nothing');

  // Forgetting the downloads empties the cache: the next size check asks the Hub again.
  await page.click('[data-control="model-forget"]');
  await page.waitForFunction(() => /Deleted every model/.test(document.querySelector('[data-figure="model-status"]').textContent));
  await sized(page);
  assert.ok(hub.log.length + storage.log.length > requests, 'asked the Hub again');

  assert.deepEqual(await page.evaluate(() => window.__violations), [], 'the page\'s policy allowed the Hub and its storage host');
  assert.deepEqual(log.errors.filter((e) => !/Failed to load resource|net::ERR_/.test(e)), []);
  await context.close();
});


test('from disk through the file chooser: a folder\'s files open; a missing tokenizer.json and a malformed config.json each name the file', async () => {
  const { page, context } = await openPanel();
  const llama = join(ckpt.dir, 'llama-untied-sharded');
  await page.setInputFiles('[data-control="model-files"]', files('llama-untied-sharded').map((f) => join(llama, f)));
  await page.waitForFunction(() => ['open', 'error'].includes(document.getElementById('open-model').dataset.state));
  assert.equal(await page.getAttribute('#open-model', 'data-state'), 'open', await text(page, 'model-error'));
  assert.equal(await fact(page, 'source'), 'your disk');
  assert.equal(await fact(page, 'architecture'), 'LlamaForCausalLM, rotary positions');
  await stillWorks(page, 'a model from disk');

  // With a tokenizer that puts <s> first, a text longer than the model view reads (64 tokens, the model's context)
  // keeps <s> and then the text's end: the view reads what generation continues from, as the model saw it trained.
  const bos = join(ckpt.dir, 'llama-bos');
  mkdirSync(bos, { recursive: true });
  for (const f of files('llama-untied-sharded')) copyFileSync(join(llama, f), join(bos, f));
  writeFileSync(join(bos, 'tokenizer.json'), lettersWithBos(45));
  await page.evaluate(() => { document.getElementById('open-model').dataset.state = 'idle'; });
  await page.setInputFiles('[data-control="model-files"]', files('llama-untied-sharded').map((f) => join(bos, f)));
  await page.waitForFunction(() => ['open', 'error'].includes(document.getElementById('open-model').dataset.state));
  assert.equal(await page.getAttribute('#open-model', 'data-state'), 'open', await text(page, 'model-error'));
  const digits = Array.from({ length: 70 }, (_, i) => String(i % 10)).join('');  // 70 letters, one token each
  await page.locator('[data-control="model-text"]').scrollIntoViewIfNeeded();
  await page.fill('[data-control="model-text"]', digits);
  await page.waitForFunction(() => /^64 tokens: the special token the tokenizer puts first, then the last 63 of 71,/
    .test(document.querySelector('[data-role="model-token-note"]')?.textContent ?? ''));
  const shown = await page.$$eval('[data-role="model-tokens"] li', (ls) => ls.map((l) => Number(l.dataset.id)));
  assert.deepEqual(shown, [44, ...Array.from(digits.slice(-63), Number)], '<s>, then the last 63 digits');

  // A folder without its tokenizer.
  await page.setInputFiles('[data-control="model-files"]', files('gpt2-f16').filter((f) => f !== 'tokenizer.json').map((f) => join(ckpt.dir, 'gpt2-f16', f)));
  await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'error');
  assert.match(await text(page, 'model-error'), /^Could not open the model: tokenizer\.json is missing.*[.!?…] The page still runs on a model from disk\.$/);
  await stillWorks(page, 'a model from disk');

  // A malformed config.json: the engine's message names the file.
  const bad = join(ckpt.dir, 'bad-config');
  mkdirSync(bad, { recursive: true });
  for (const f of files('gpt2-f16')) copyFileSync(join(ckpt.dir, 'gpt2-f16', f), join(bad, f));
  writeFileSync(join(bad, 'config.json'), '{"architectures": ["GPT2LMHeadModel"], ');
  await page.evaluate(() => { document.getElementById('open-model').dataset.state = 'idle'; });
  await page.setInputFiles('[data-control="model-files"]', files('gpt2-f16').map((f) => join(bad, f)));
  await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'error');
  assert.match(await text(page, 'model-error'), /^Could not open the model: loadModel: config\.json is not valid JSON.*[.!?…] The page still runs on a model from disk\.$/);
  await stillWorks(page, 'a model from disk');
  await context.close();
});

/**
 * Drops `names` of checkpoint `folder` on the panel's drop area, as a browser does: dragover (the area lights up),
 * then drop with a DataTransfer holding the files (built in the page from their bytes: a DataTransfer made by a
 * script has no file-system entries, so the page reads its files list, as it does for files dragged from a
 * desktop that offers no entries).
 */
async function dropFiles(page, folder, names) {
  const payload = names.map((name) => ({ name, b64: readFileSync(join(ckpt.dir, folder, name)).toString('base64') }));
  const area = await page.$('[data-figure="model-drop"]');
  await area.scrollIntoViewIfNeeded();
  const over = await area.evaluate((el) => {
    el.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: new DataTransfer() }));
    return el.classList.contains('over');
  });
  assert.equal(over, true, 'the drop area lights up under a drag');
  const accepted = await area.evaluate((el, files) => {
    const data = new DataTransfer();
    for (const f of files) data.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
    const event = new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: data });
    el.dispatchEvent(event);
    return event.defaultPrevented && !el.classList.contains('over');
  }, payload);
  assert.equal(accepted, true, 'the page takes the drop (no browser navigation to the file) and the area goes back');
}

test('from disk by drag and drop: a folder\'s files dropped on the panel open, and a drop without tokenizer.json names it', async () => {
  const { page, context, log } = await openPanel();
  await dropFiles(page, 'gpt2-f16', files('gpt2-f16'));
  await page.waitForFunction(() => ['open', 'error'].includes(document.getElementById('open-model').dataset.state));
  assert.equal(await page.getAttribute('#open-model', 'data-state'), 'open', await text(page, 'model-error'));
  assert.equal(await fact(page, 'source'), 'your disk');
  assert.equal(await fact(page, 'architecture'), 'GPT2LMHeadModel');
  await stillWorks(page, 'a model from disk');
  // A drop that lacks a file gets the same message as the file chooser's, and the open model keeps working.
  await dropFiles(page, 'llama-untied-sharded', files('llama-untied-sharded').filter((f) => f !== 'tokenizer.json'));
  await page.waitForFunction(() => ['open', 'error'].includes(document.getElementById('open-model').dataset.state) && !document.querySelector('[data-figure="model-error"]').hidden);
  assert.match(await text(page, 'model-error'), /^Could not open the model: tokenizer\.json is missing.*[.!?…] The page still runs on a model from disk\.$/);
  await stillWorks(page, 'a model from disk');
  assert.equal(await fact(page, 'architecture'), 'GPT2LMHeadModel', 'still the model dropped first');
  assert.deepEqual(log.errors, []);
  await context.close();
});

test('the panel: axe finds no serious violation; screenshots at 1280 and 390 px', async () => {
  ensureShotsDir();
  for (const width of [1280, 390]) {
    const { page, context } = await openPanel({ width, height: 900 });
    await page.setInputFiles('[data-control="model-files"]', files('gpt2-f16').map((f) => join(ckpt.dir, 'gpt2-f16', f)));
    await page.waitForFunction(() => document.getElementById('open-model').dataset.state === 'open');
    await page.fill('[data-control="model-repo"]', 'attnlab-test/tiny-llama');
    await sized(page);
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => (await window.axe.run('#open-model', { resultTypes: ['violations'] })).violations
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })));
    for (const v of violations) console.log(`axe ${width} px: ${v.impact} ${v.id}: ${v.nodes.slice(0, 3).join('; ')}`);
    assert.deepEqual(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), [], `${width} px`);
    // Nothing wider than the viewport at 390 px.
    const overflow = await page.evaluate(() => [...document.querySelectorAll('#open-model *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).map((e) => e.outerHTML.slice(0, 80)));
    assert.deepEqual(overflow, [], `${width} px: nothing past the right edge`);
    await shot(page.locator('#open-model'), join(shotsDir, `model-panel-${width}.png`));
    await context.close();
  }
});

test('the offline copy opens a model from disk, and offers no download', async () => {
  const folder = join(ckpt.dir, 'offline');
  mkdirSync(folder, { recursive: true });
  copyFileSync(join(distDir, 'attnlab-explorer.html'), join(folder, 'attnlab-explorer.html'));
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  const page = await context.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(join(folder, 'attnlab-explorer.html')).href);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 20000 });
  await openAnother(page);
  assert.equal(await page.$('[data-control="model-repo"]'), null, 'no Hub part');
  assert.match(await page.textContent('[data-figure="model-open"]'), /makes no network requests: it opens models from your disk only/);
  await page.setInputFiles('[data-control="model-files"]', files('gpt2-f16').map((f) => join(ckpt.dir, 'gpt2-f16', f)));
  await page.waitForFunction(() => ['open', 'error'].includes(document.getElementById('open-model').dataset.state));
  assert.equal(await page.getAttribute('#open-model', 'data-state'), 'open', await text(page, 'model-error'));
  await stillWorks(page, 'a model from disk');
  assert.deepEqual(requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:') && !u.startsWith('blob:')), [], 'nothing from the network');
  await context.close();
});
