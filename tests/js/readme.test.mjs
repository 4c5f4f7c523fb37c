// The npm page's examples run as written against the built package, and print what their comments say.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, repo } from './support/load.mjs';

const readme = readFileSync(`${repo}src/js/README.md`, 'utf8');
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

// "// Float32Array [a, b, …]" or "// name [a, b, …]" after a line: the numbers the line's value must round to.
const claims = (code) => [...code.matchAll(/^\/\/ (?:Float32Array|output|weights)\s+\[([^\]]+)\]/gm)].map((m) => m[1].split(/,\s*/).map(Number));

test('the Quick start and multi-head examples run and give the numbers in their comments', () => {
  const [quick, multi] = blocks;
  assert.match(quick, /^import \{ init \} from 'attnlab';/);
  const program = `${quick.replace("from 'attnlab'", `from ${JSON.stringify(pathToFileURL(`${dist}index.js`).href)}`)
    .replace(/^lab\.softmax\((.*)\);$/m, 'const p = lab.softmax($1);')}
${multi}
console.log(JSON.stringify({ p: Array.from(p), output: Array.from(output), weights: Array.from(weights),
  mha: [mha.output.length, mha.heads[0].weights.length] }));`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' });
  assert.equal(res.status, 0, `${program}\n${res.stderr}`);
  const got = JSON.parse(res.stdout);
  const [p, output, weights] = claims(quick);
  const round = (a) => a.map((v) => Math.round(v * 1e4) / 1e4);
  assert.deepEqual(round(got.p), p);
  assert.deepEqual(round(got.output), output);
  assert.deepEqual(round(got.weights), weights);
  assert.deepEqual(got.mha, [32, 16]); // the comments' Float32Array(32) and Float32Array(16)
  assert.match(multi, /Float32Array\(32\)[\s\S]*Float32Array\(16\)/);
});
