#!/usr/bin/env node
// `npm run bench:lm-kernels` — the language models' matrix-vector kernels alone (src/core/kernels/lm_simd.cpp),
// over GPT-2 small's 49 matrices (12 layers' four and the tied head: 123.5 M weights), one thread, in Node. A decode
// step is these products plus attention, norms and sampling; the kernels alone say how fast each weight format's
// loop is with nothing around it, so how close to its kernels the whole step runs (bench:lm), and the most the
// ratio between two formats' decode can reach. Prints, per format, CPU time per token-equivalent (every matrix
// once), weight GB/s, and that against a plain wasm streaming read of the same bytes (bench/lm/stream.mjs).
//
//   node bench/lm-kernels.mjs [--rounds=N] [--check]
//
//   --rounds=N  rounds (default 9), the formats interleaved and their order alternating; medians reported
//   --check     only the check below, on small shapes around the kernels' steps (seconds; the JS suite runs it)
//
// The kernels are the package's own objects (this checkout's wasm-simd preset), linked into a bare module
// (tests/bench/wasm: target attnlab_lm_kernels, built here when missing or stale). Weights are random: F32
// uniform in ±0.04, F16 those values rounded to F16 and stored as the engine stores them (× 2¹⁰: lm_kernels.h),
// BF16 their top halves; x in ±1 (F16: times 2¹⁰², as lm/linear.cpp passes it). Every run first checks each kernel
// against a float64 sum of the weights it holds, within the float32 summation bound, on the shapes `small` lists.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureStream } from './lm/stream.mjs';

const repo = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 9);
const checkOnly = process.argv.includes('--check');
const load = () => os.loadavg()[0].toFixed(2);

// The module: configure the preset when it has never been, then build the target (a no-op when up to date).
const wasmPath = path.join(repo, 'build/wasm-simd/tests/bench/wasm/lm-kernels.wasm');
execFileSync('bash', ['-c', `source scripts/emscripten-env.sh && { [ -f build/wasm-simd/CMakeCache.txt ] || cmake --preset wasm-simd >/dev/null; } && cmake --build --preset wasm-simd --target attnlab_lm_kernels >/dev/null`],
  { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), { env: { emscripten_notify_memory_growth() {} } });
const k = instance.exports;
k._initialize();
const heap = () => k.memory.buffer;

// GPT-2 small: per layer c_attn [2304 × 768], attn.c_proj [768 × 768], c_fc [3072 × 768], mlp.c_proj [768 × 3072]
// (y = W·x, W as [out, in]), then the head [50257 × 768]. Panels of 8 rows, the last one padded with zeros.
const P = 8;
const gpt2 = [];
for (let l = 0; l < 12; ++l) gpt2.push([2304, 768], [768, 768], [3072, 768], [768, 3072]);
gpt2.push([50257, 768]);
// The check's: rows below, at and past a panel; columns past the loops' steps (2 and 4) and past a page of panel
// columns (256 for 16-bit weights, 128 for F32: the read-ahead's step); and two of GPT-2's.
const small = [[1, 1], [7, 3], [8, 5], [9, 129], [17, 257], [33, 515], [2304, 768], [768, 3072]];

let seed = 12345;
const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
// float32 → F16 bits, round to nearest even (|v| < 65504; subnormals included).
function toF16(v) {
  f32[0] = v;
  const b = u32[0], sign = (b >>> 16) & 0x8000, e = ((b >>> 23) & 255) - 127, m = b & 0x7fffff;
  if (e < -25) return sign;                                   // below half the smallest subnormal: ±0
  const shift = e < -14 ? 13 + (-14 - e) : 13;                // bits dropped from the 24-bit significand
  const sig = (m | 0x800000) >>> 0, kept = sig >>> shift, rest = sig & ((1 << shift) - 1), half = 1 << (shift - 1);
  const r = kept + (rest > half || (rest === half && kept & 1) ? 1 : 0);
  return e < -14 ? sign | r : sign | (((e + 15) << 10) + (r - 0x400));   // a carry into the exponent field is right
}
const fromF16 = (h) => {
  const e = (h >> 10) & 31, m = h & 1023, s = h & 0x8000 ? -1 : 1;
  return s * (e ? 2 ** (e - 15) * (1 + m / 1024) : 2 ** -14 * (m / 1024));
};
const lane = (r) => (r < 4 ? 2 * r : 2 * (r - 4) + 1);        // a 16-bit panel's row order (lm_kernels.h)

const alloc = (bytes) => {
  const p = k.bench_alloc(bytes);
  if (!p) throw new Error(`bench_alloc(${bytes}) failed: wasm memory is full`);
  return p;
};
const matrices = (shapes) => shapes.map(([rows, cols]) => {
  const padded = Math.ceil(rows / P) * P, n = padded * cols;
  const m = { rows, cols, f32: alloc(4 * n), f16: alloc(2 * n), bf16: alloc(2 * n), x: alloc(4 * cols), xs: alloc(4 * cols), y: alloc(4 * padded) };
  const w = new Float32Array(heap(), m.f32, n), h = new Uint16Array(heap(), m.f16, n), b = new Uint16Array(heap(), m.bf16, n);
  for (let p = 0; p < padded / P; ++p)
    for (let c = 0; c < cols; ++c)
      for (let r = 0; r < P; ++r) {
        const i = (p * cols + c) * P, v = p * P + r < rows ? (random() - 0.5) * 0.08 : 0;
        w[i + r] = v;
        h[i + lane(r)] = toF16(fromF16(toF16(v)) * 1024);       // the F16 weight, held × 2¹⁰
        f32[0] = v;
        b[i + lane(r)] = u32[0] >>> 16;
      }
  const x = new Float32Array(heap(), m.x, cols), xs = new Float32Array(heap(), m.xs, cols);
  for (let c = 0; c < cols; ++c) x[c] = random() * 2 - 1, xs[c] = x[c] * 2 ** 102;
  return m;
});

// The float64 check: y[r] against Σ w·x of the weights each format holds, within γ_n·Σ|w·x| (n = cols, u = 2⁻²⁴).
const formats = ['f32', 'f16', 'bf16'];
const call = (f, m) => k[`bench_${f}`](m[f], m.rows, m.cols, f === 'f16' ? m.xs : m.x, m.y);
const bf16Value = (bits) => { u32[0] = bits << 16; return f32[0]; };
function check(mats) {
for (const m of mats) {
  const n = Math.ceil(m.rows / P) * P * m.cols;
  const w = new Float32Array(heap(), m.f32, n), h = new Uint16Array(heap(), m.f16, n), b = new Uint16Array(heap(), m.bf16, n);
  const x = new Float32Array(heap(), m.x, m.cols);
  const value = { f32: (i, r) => w[i + r], f16: (i, r) => fromF16(h[i + lane(r)]) / 1024, bf16: (i, r) => bf16Value(b[i + lane(r)]) };
  const u = 2 ** -24, gamma = (m.cols * u) / (1 - m.cols * u);
  for (const f of formats) {
    call(f, m);
    const y = new Float32Array(heap(), m.y, m.rows);
    for (let r = 0; r < m.rows; ++r) {
      let sum = 0, abs = 0;
      for (let c = 0; c < m.cols; ++c) {
        const t = value[f]((Math.floor(r / P) * m.cols + c) * P, r % P) * x[c];
        sum += t, abs += Math.abs(t);
      }
      if (!(Math.abs(y[r] - sum) <= gamma * abs))
        throw new Error(`${f} kernel, [${m.rows} × ${m.cols}] row ${r}: ${y[r]} against float64 ${sum} (bound ${gamma * abs})`);
    }
  }
}
}

check(matrices(small));
console.log(`checked: every kernel's y within γ_n·Σ|w·x| of a float64 sum of the weights it holds, on ${small.map(([r, c]) => `${r}×${c}`).join(', ')}`);
if (checkOnly) process.exit(0);

console.log(`attnlab language-model kernels alone: GPT-2 small's matrices; ${os.cpus()[0].model}, ${os.cpus().length} cores; Node ${process.version}; load ${load()}`);
const mats = matrices(gpt2);
const weights = gpt2.reduce((sum, [rows, cols]) => sum + rows * cols, 0);
console.log(`${(weights / 1e6).toFixed(1)} M weights a token`);

const cpu = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; };
const times = Object.fromEntries(formats.map((f) => [f, []]));
const reps = 3;
for (let round = 0; round < rounds; ++round)
  for (const f of round % 2 ? [...formats].reverse() : formats) {
    const c0 = cpu();
    for (let rep = 0; rep < reps; ++rep) for (const m of mats) call(f, m);
    times[f].push((cpu() - c0) / reps);
  }
const median = (a) => [...a].sort((p, q) => p - q)[a.length >> 1];

const bytes = { f32: 4 * weights, f16: 2 * weights, bf16: 2 * weights };
const stream = {};
for (const b of new Set(Object.values(bytes))) stream[b] = (await measureStream(b, { cpuMs: cpu })).gbpsCpu;
console.log(`\n| weights | ms a token (CPU) | GB/s | share of a streaming read of the same bytes | F32 ÷ this |`);
console.log(`|---|---:|---:|---:|---:|`);
for (const f of formats) {
  const ms = median(times[f]), gbps = bytes[f] / ms / 1e6;
  console.log(`| ${f.toUpperCase()} | ${ms.toFixed(2)} (${Math.min(...times[f]).toFixed(2)}–${Math.max(...times[f]).toFixed(2)}) | ${gbps.toFixed(1)} | ${(100 * gbps / stream[bytes[f]]).toFixed(0)} % of ${stream[bytes[f]].toFixed(1)} | ${(median(times.f32) / ms).toFixed(2)}× |`);
}
console.log(`\nmedians of ${rounds} rounds (${reps} token-equivalents each), CPU time of this process; load ${load()}`);
