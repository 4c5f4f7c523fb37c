// loadModel's progress from a URL reports each file's size only when the server says it: a response without
// Content-Length (chunked, as proxies, dev servers and streamed responses send it) or compressed (Content-Encoding:
// the header then counts the compressed bytes) reports total undefined, never 0; with Content-Length, that size.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { init } from './support/load.mjs';
import { writeCheckpoints } from './support/lm-fixtures.mjs';

const CASE = 'gpt2-f16';
const { dir, cleanup } = writeCheckpoints([CASE]);
after(cleanup);
const lab = await init({ gpt: true });

// A folder served with the headers `headers(body)` gives (the body written in two pieces, so that a response
// without Content-Length is chunked).
async function serveWith(headers) {
  const server = createServer((req, res) => {
    const name = new URL(req.url, 'http://x').pathname.slice(1);
    let body;
    try {
      if (!/^[\w.-]+\.(json|safetensors)$/.test(name) || name === 'reference.json') throw new Error('not served');
      body = readFileSync(join(dir, CASE, name));
    } catch {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', ...headers(body) });
    res.write(body.subarray(0, 100));
    res.end(body.subarray(100));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${server.address().port}/`;
}

async function weightsProgress(url) {
  const progress = [];
  const model = await lab.loadModel(url, { onProgress: (p) => progress.push(p) });
  model.dispose();
  const weights = progress.filter((p) => p.file === 'model.safetensors');
  assert.ok(weights.length >= 2, 'progress of the weights');
  return weights;
}

const size = readFileSync(join(dir, CASE, 'model.safetensors')).length;

test('a response without Content-Length reports total undefined', async () => {
  const weights = await weightsProgress(await serveWith(() => ({})));
  for (const p of weights) assert.equal(p.total, undefined, JSON.stringify(p));
  assert.equal(weights.at(-1).loaded, size);
});

test('a response with Content-Length reports it as total', async () => {
  const weights = await weightsProgress(await serveWith((body) => ({ 'Content-Length': body.length })));
  for (const p of weights) assert.equal(p.total, size, JSON.stringify(p));
  assert.equal(weights.at(-1).loaded, size);
});

test('a compressed response reports total undefined', async () => {
  // identity bytes labelled with an encoding fetch passes through as they are
  const weights = await weightsProgress(await serveWith((body) => ({ 'Content-Length': body.length, 'Content-Encoding': 'identity' })));
  for (const p of weights) assert.equal(p.total, undefined, JSON.stringify(p));
});
