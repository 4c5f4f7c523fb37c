// The LM bench's checkpoints and float64 references, written once by bench/lm/checkpoint.py (Debian's python3
// with python3-numpy and python3-onnx) into build/lm-bench/ and reused: each folder is named by a hash of the
// shape, the seed and the generator's own source, so a change to any of them writes a new one.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { prng } from '../lib/data.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
export const PYTHON = '/usr/bin/python3';   // Debian's, where python3-numpy and python3-onnx live
export const cacheRoot = path.join(root, 'build/lm-bench');

export const SHAPES = {
  // GPT-2 small: 124 M parameters
  gpt2: { layers: 12, embd: 768, heads: 12, vocab: 50257, positions: 1024, seed: 1 },
  // the self-check's: small enough for a float64 greedy reference in a second; vocabulary and head size (12) off
  // the powers of two; seed chosen so that greedy decoding from the check's prompt changes token 8 times in 20
  // (random tied embeddings tend to repeat a token: most seeds change it 1–4 times)
  check: { layers: 3, embd: 48, heads: 4, vocab: 509, positions: 64, seed: 7 },
};

const source = (...files) => files.map((f) => fs.readFileSync(path.join(here, f), 'utf8')).join('\0');
const hash = (...parts) => crypto.createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);

function python(args, what) {
  // (no __pycache__ beside the sources: the tree stays clean)
  const run = spawnSync(PYTHON, [path.join(here, 'checkpoint.py'), ...args], { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
  if (run.error || run.status !== 0) {
    throw new Error(`${what} failed (${PYTHON} with python3-numpy and python3-onnx: scripts/bootstrap.sh installs them): ${run.error?.message ?? run.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
  return JSON.parse(run.stdout.trim().split('\n').pop());
}

/** { dir, manifest, written } of the shape's checkpoint folder, writing it first when it is not cached. */
export function checkpoint(shape, log = () => {}) {
  const key = hash(JSON.stringify(shape), source('checkpoint.py', 'gpt2_weights.py', 'gpt2_onnx.py'));
  const dir = path.join(cacheRoot, key);
  const manifestFile = path.join(dir, 'manifest.json');
  if (fs.existsSync(manifestFile)) return { dir, manifest: JSON.parse(fs.readFileSync(manifestFile, 'utf8')), written: false };
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  log(`writing the checkpoint into ${path.relative(root, dir)}/ (F32, F16, BF16 and the ONNX graph; once, then cached) …`);
  try {
    python(['make', tmp, ...['layers', 'embd', 'heads', 'vocab', 'positions', 'seed'].flatMap((k) => [`--${k}`, String(shape[k])])], 'writing the checkpoint');
    fs.writeFileSync(path.join(tmp, 'shape.json'), JSON.stringify(shape));
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  // Folders of the same shape from earlier generators are stale (half a gigabyte each for GPT-2's): removed.
  for (const other of fs.readdirSync(cacheRoot)) {
    const file = path.join(cacheRoot, other, 'shape.json');
    if (other !== key && fs.existsSync(file) && fs.readFileSync(file, 'utf8') === JSON.stringify(shape)) fs.rmSync(path.join(cacheRoot, other), { recursive: true, force: true });
  }
  return { dir, manifest: JSON.parse(fs.readFileSync(manifestFile, 'utf8')), written: true };
}

/**
 * The float64 reference of a checkpoint (gpt2_reference.py), cached beside it: { rows, vocab, logits, bound
 * (Float64Array, rows × vocab each), greedy, decided, seconds, cached }.
 */
export function reference(dir, dtype, prompt, { steps = 0, rows = null } = {}, log = () => {}) {
  const key = hash(dtype, prompt.join(','), steps, rows?.join(',') ?? 'all', source('gpt2_reference.py', 'checkpoint.py'));
  const bin = path.join(dir, `reference-${key}.f64`), meta = path.join(dir, `reference-${key}.json`);
  let info, cached = true;
  if (fs.existsSync(meta)) info = JSON.parse(fs.readFileSync(meta, 'utf8'));
  else {
    cached = false;
    log(`float64 reference of ${dtype} (${prompt.length}-token prompt${steps ? `, ${steps} greedy tokens` : ''}; once, then cached) …`);
    const tmp = `${bin}.tmp-${process.pid}`;
    info = python(['reference', dir, dtype, '--prompt', prompt.join(','), '--steps', String(steps), ...(rows ? ['--rows', rows.join(',')] : []), '--out', tmp], 'the float64 reference');
    fs.renameSync(tmp, bin);
    fs.writeFileSync(meta, JSON.stringify(info));
  }
  const raw = fs.readFileSync(bin);
  const all = new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8);
  const n = info.rows.length * info.vocab;
  return { ...info, logits: all.slice(0, n), bound: all.slice(n, 2 * n), cached };
}

/** A prompt of `n` token ids below `vocab`, from a fixed-seed generator. */
export function prompt(n, vocab, seed = 'attnlab-lm-bench/prompt') {
  const rnd = prng(seed);
  return Array.from({ length: n }, () => Math.floor(rnd() * vocab));
}

/** The first bytes of a safetensors file: its length field and JSON header, all that readHeader needs. */
export function safetensorsHead(file) {
  const fd = fs.openSync(file, 'r');
  try {
    const len = Buffer.alloc(8);
    fs.readSync(fd, len, 0, 8, 0);
    const head = Buffer.alloc(8 + Number(len.readBigUInt64LE(0)));
    fs.readSync(fd, head, 0, head.length, 0);
    return new Uint8Array(head.buffer, head.byteOffset, head.length);
  } finally {
    fs.closeSync(fd);
  }
}
