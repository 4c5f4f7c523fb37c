// Checkpoints for the language-model tests: written by tests/lm/checkpoints.py (Debian's python3 with NumPy) with
// their float64 reference and its bounds (see the script), once per version of the script, copied into a temporary
// folder for each test file, and read back here as the sources loadModel takes: a Record of Uint8Arrays, a Map of
// Blobs, or a URL served by a local HTTP server.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, openAsBlob, renameSync } from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { repo } from './load.mjs';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(repo, 'tests/lm/checkpoints.py');

function run(out, args) {
  const result = spawnSync(PYTHON, [SCRIPT, out, ...args], { encoding: 'utf8' });
  assert.equal(result.status, 0, `tests/lm/checkpoints.py failed (python3-numpy is installed by scripts/bootstrap.sh):\n${result.stderr}`);
}

// A named case's folder depends on the script alone (each case seeds itself by its place in the script's CASES,
// whatever else is asked for), so each is written once per version of the script, into
// build/lm-checkpoints-js/<script's hash>/, and copied from there for every test file that asks: the Python run
// (NumPy's float64 forward and its bounds) was most of these files' time, repeated by each. Written beside the
// cache and renamed into it, so that test files running at the same time never see half a folder.
const SCRIPT_HASH = createHash('sha256').update(readFileSync(SCRIPT)).digest('hex');
const CACHE = join(repo, 'build/lm-checkpoints-js', SCRIPT_HASH.slice(0, 16));
// The native build writes every case with the same script into build/lm-checkpoints/ (tests/native/CMakeLists.txt)
// and then its stamp, `written`, holding the script's SHA-256: a case found there for this version of the script is
// copied from it instead of computed again (npm test's native lane writes them in its first minute, before the
// package tests ask).
const NATIVE = join(repo, 'build/lm-checkpoints');
function nativeIsCurrent() {
  try {
    return readFileSync(join(NATIVE, 'written'), 'utf8').startsWith(SCRIPT_HASH);
  } catch {
    return false;
  }
}

/** Writes the cases (all when none is named) into a new temporary folder; `cleanup()` removes it. */
export function writeCheckpoints(cases = [], extra = []) {
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-lm-'));
  if (!cases.length || extra.length) run(dir, [...cases, ...extra]); // (all the cases, or GPT-2 small's shape: as asked)
  else {
    const native = nativeIsCurrent();
    const from = (name) => (native && existsSync(join(NATIVE, name, 'reference.json')) ? join(NATIVE, name) : join(CACHE, name));
    const missing = cases.filter((name) => !existsSync(from(name)));
    if (missing.length) {
      mkdirSync(CACHE, { recursive: true });
      const fresh = mkdtempSync(join(CACHE, '.writing-'));
      try {
        run(fresh, missing);
        for (const name of missing) {
          try {
            renameSync(join(fresh, name), join(CACHE, name));
          } catch (e) {
            if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e; // (another file wrote it first: the same bytes)
          }
        }
      } finally {
        rmSync(fresh, { recursive: true, force: true });
      }
    }
    for (const name of cases) cpSync(from(name), join(dir, name), { recursive: true });
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const f64 = (path) => {
  const b = readFileSync(path);
  return new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
};

/** reference.json and the reference's arrays of one case. */
export function reference(dir, name) {
  const at = join(dir, name);
  const ref = JSON.parse(readFileSync(join(at, 'reference.json'), 'utf8'));
  return {
    ...ref,
    logits: f64(join(at, 'logits.f64')), logitsBound: f64(join(at, 'logits_bound.f64')),
    attention: f64(join(at, 'attention.f64')), attentionBound: f64(join(at, 'attention_bound.f64')),
    qkv: f64(join(at, 'qkv.f64')), qkvBound: f64(join(at, 'qkv_bound.f64')),
  };
}

const MODEL_FILES = (name) => name.endsWith('.json') && name !== 'reference.json' || name.endsWith('.safetensors');

/** The case's files as a Record of Uint8Array (or a Map of Blobs with { blobs: true }). */
export async function files(dir, name, { blobs = false } = {}) {
  const at = join(dir, name);
  const names = readdirSync(at).filter(MODEL_FILES);
  if (!blobs) return Object.fromEntries(names.map((f) => [f, new Uint8Array(readFileSync(join(at, f)))]));
  return new Map(await Promise.all(names.map(async (f) => [f, await openAsBlob(join(at, f))])));
}

/**
 * An HTTP server for a folder, as a repository's resolve/main/: `url` is its base. `fail(name, afterBytes)` makes
 * the next response for `name` stop after that many bytes (the connection destroyed); requests are logged.
 */
export async function serve(dir) {
  const failures = new Map();
  const requests = [];
  const server = createServer((req, res) => {
    const parts = new URL(req.url, 'http://x').pathname.split('/').map(decodeURIComponent);  // /folder/resolve/main/file
    const name = parts.at(-1);
    requests.push(name);
    let body;
    try {
      if (!MODEL_FILES(name) || parts.length !== 5) throw new Error('not served');
      body = readFileSync(join(dir, parts[1], name));
    } catch {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length });
    const cut = failures.get(name);
    if (cut === undefined) {
      res.end(body);
      return;
    }
    failures.delete(name);
    res.write(body.subarray(0, cut), () => res.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: (folder) => `http://127.0.0.1:${port}/${folder}/resolve/main/`,
    requests,
    fail: (name, afterBytes) => failures.set(name, afterBytes),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Worst |got − reference| / bound over the reference's logit rows below n; throws on the first value outside. */
export function checkLogits(got, ref, n, label) {
  const V = ref.vocab;
  let worst = 0;
  ref.logit_rows.forEach((row, k) => {
    if (row >= n) return;
    for (let j = 0; j < V; ++j) {
      const g = got[row * V + j], want = ref.logits[k * V + j], bound = ref.logitsBound[k * V + j];
      assert.ok(Math.abs(g - want) <= bound, `${label}: logits[${row}][${j}] = ${g}, reference ${want} ± ${bound}`);
      worst = Math.max(worst, Math.abs(g - want) / bound);
    }
  });
  return worst;
}
