// The README's recipe (a GPT-style attention layer with a KV cache) runs as printed, against the built package:
// the block between the recipe markers, with 'attnlab' resolved to dist/, plus checks of what it computed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, repo } from './support/load.mjs';

test('README recipe: prefill then decode through a KV cache, under 20 lines', async () => {
  const readme = fs.readFileSync(`${repo}README.md`, 'utf8');
  const block = readme.match(/<!-- recipe:gpt-layer -->\n```js\n([\s\S]*?)```\n<!-- \/recipe:gpt-layer -->/);
  assert.ok(block, 'the recipe block is in the README');
  const code = block[1];
  assert.ok(code.trim().split('\n').length < 20, `the recipe has ${code.trim().split('\n').length} lines`);
  const source = `${code.replace("from 'attnlab'", `from ${JSON.stringify(pathToFileURL(`${dist}index.js`).href)}`)}
export { lab, cache, prefill, step, dModel };`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnlab-recipe-'));
  try {
    fs.writeFileSync(path.join(dir, 'recipe.mjs'), source);
    const { lab, cache, prefill, step, dModel } = await import(pathToFileURL(path.join(dir, 'recipe.mjs')).href);
    assert.equal(prefill.length, 12 * dModel);
    assert.equal(step.length, dModel);
    assert.ok([...prefill, ...step].every(Number.isFinite));
    assert.deepEqual(Array.from(cache.lengths), [13]);
    assert.equal(lab.liveKvCaches, 1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
