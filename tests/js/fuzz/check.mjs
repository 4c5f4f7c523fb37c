// The checks of one case. A valid call: the synchronous function's result within its float64 reference's derived
// bound, the async twin's (on 2–3 workers, tuning lowered so that small calls are really cut; now and then several
// copies at once) the same bit for bit (GPT.trainStepAsync: within the bound of a reordered sum), `out` returned and
// nothing outside it written, inputs and caches untouched. The same call with one thing wrong: the sync and async forms raise the same class with
// the same message, which starts with the function's name and names the argument; nothing is written into `out`
// or the inputs; the cache or model is as it was; wasm memory has not grown; and the valid call still gives the
// same bits afterwards.
import { arrays, clone } from './json.mjs';

const CLASSES = { TypeError, RangeError, Error };
// An async call that neither resolves nor rejects within this long is reported as hung (a safety net for the run,
// not a timing check: every call here takes milliseconds).
const HANG_SECONDS = 120;

const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const describeError = (e) => `${e?.constructor?.name ?? typeof e}: ${e?.message ?? e}`;

/** The first difference between two results (same bytes, same keys in the same order), or null. */
export function differs(got, want, path = 'result') {
  if (ArrayBuffer.isView(want)) {
    if (!ArrayBuffer.isView(got) || got.constructor !== want.constructor) return `${path}: ${got?.constructor?.name} instead of ${want.constructor.name}`;
    if (got.length !== want.length) return `${path}: length ${got.length} instead of ${want.length}`;
    if (bytes(got).equals(bytes(want))) return null;
    let n = 0, first = -1;
    for (let i = 0; i < want.length; ++i) if (!Object.is(got[i], want[i])) (n += 1), first < 0 && (first = i);
    return `${path}: ${n} of ${want.length} entries differ, first [${first}]: ${got[first]} instead of ${want[first]}`;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return `${path}: not an array of ${want.length}`;
    for (let i = 0; i < want.length; ++i) {
      const d = differs(got[i], want[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (want && typeof want === 'object') {
    if (!got || typeof got !== 'object') return `${path}: ${typeof got} instead of an object`;
    if (Object.keys(got).join() !== Object.keys(want).join()) return `${path}: keys ${Object.keys(got).join(', ')} instead of ${Object.keys(want).join(', ')}`;
    for (const key of Object.keys(want)) {
      const d = differs(got[key], want[key], `${path}.${key}`);
      if (d) return d;
    }
    return null;
  }
  return Object.is(got, want) ? null : `${path}: ${got} instead of ${want}`;
}

// Copies of the whole buffers under `args` (views included: what lies around a view must stay too).
function snapshot(list) {
  return list.map((a) => ({ a, before: Buffer.from(new Uint8Array(a.buffer)).slice() }));
}
const changed = (snap) => snap.filter(({ a, before }) => !Buffer.from(new Uint8Array(a.buffer)).equals(before)).map(({ a }) => a);

function hangGuard(p) {
  let timer;
  const hang = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`did not settle within ${HANG_SECONDS} s`), { hung: true })), HANG_SECONDS * 1000);
    timer.unref?.();
  });
  return Promise.race([p, hang]).finally(() => clearTimeout(timer));
}

// Calls the async form: a promise is awaited; a synchronous throw is itself a failure (a twin must reject).
async function callAsync(op, lab, args, ctx, fail) {
  let p;
  try {
    p = op.async(lab, args, ctx);
  } catch (e) {
    fail('async twin threw instead of returning a promise', describeError(e));
    return { threw: e };
  }
  if (p === null || p === undefined) return null;
  try {
    return { value: await hangGuard(p) };
  } catch (e) {
    if (e?.hung) fail('async twin hung', e.message);
    return { error: e };
  }
}

const outsOf = (op, args) => (op.outs?.(args) ?? []).filter((x) => ArrayBuffer.isView(x));
const inputsOf = (op, args) => {
  const outs = new Set(outsOf(op, args));
  return arrays(args).filter((a) => !outs.has(a));
};
const sameState = (op, x, y) => (op.sameState ? op.sameState(x, y) : !differs(x, y));

// Whether a word occurs in the message as a name (not inside another name: "q" is not in "nq" or "seq").
export function names(message, name) {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_])${esc}([^A-Za-z0-9_]|$)`).test(message);
}

/**
 * Runs the case's valid call; then, when the case has one, the same call with one thing wrong. `env`: { lab(case),
 * otherLab(lab), probe(lab), sent() (messages posted to workers so far), count(op, parts) }. Returns the failures:
 * [{ check, detail }].
 */
export async function runCase(env, op, c) {
  const failures = [];
  const fail = (check, detail) => failures.push({ check, detail });
  const lab = await env.lab(c);
  const ctx = op.setup ? await op.setup(lab, clone(c.args), env) : { lab };
  try {
    const base = await validCall(env, op, lab, c.args, ctx, fail, c.parallel);
    if (c.bad && base) await badCall(env, op, lab, c, ctx, base.value, fail);
  } finally {
    op.teardown?.(ctx);
  }
  return failures;
}

// `parallel`: that many copies of the async call at once besides (the pool's queue, buffers reused across calls).
async function validCall(env, op, lab, args, ctx, fail, parallel = 0) {
  const before = op.state?.(ctx);
  const sArgs = clone(args), aArgs = clone(args);
  const outs = snapshot(outsOf(op, sArgs)), inputs = snapshot(inputsOf(op, sArgs));
  let got;
  try {
    got = op.sync(lab, sArgs, ctx);
  } catch (e) {
    fail('valid call refused', describeError(e));
    return null;
  }
  if (changed(inputs).length) fail('changed an input', `a valid call wrote into ${changed(inputs).length} of its inputs`);
  for (const [out, result] of op.identity?.(sArgs, got) ?? []) if (ArrayBuffer.isView(out) && result !== out) fail('result is not out', 'the result is another array than the out given');
  for (const { a, before: b } of outs) {
    const now = Buffer.from(new Uint8Array(a.buffer));
    if (!now.subarray(0, a.byteOffset).equals(b.subarray(0, a.byteOffset)) || !now.subarray(a.byteOffset + a.byteLength).equals(b.subarray(a.byteOffset + a.byteLength)))
      fail('wrote outside out', 'bytes of out\u2019s buffer outside its view changed');
  }
  try {
    op.check(args, got, ctx, before);
  } catch (e) {
    fail('outside the float64 bound', e.message);
  }
  if (op.state && !op.mutates?.(args) && !sameState(op, op.state(ctx), before)) fail('changed the cache or model', 'a valid call that only reads changed it');
  if (op.async) {
    const aOuts = snapshot(outsOf(op, aArgs));
    const sent = env.sent(), reruns = lab.threadStats().reruns;
    const res = await callAsync(op, lab, aArgs, ctx, fail);
    env.count(op.op, env.sent() - sent);
    // A valid call never runs again on the calling thread (which would hide a failure of the workers' path).
    if (lab.threadStats().reruns !== reruns) fail('a valid call ran again on the calling thread', `lab.threadStats().reruns ${reruns} → ${lab.threadStats().reruns}`);
    if (res?.error && !res.error.hung) {
      const wrote = changed(aOuts).length ? ' (after writing into out)' : '';
      fail('async rejected a valid call', describeError(res.error) + wrote);
    } else if (res && 'value' in res) {
      const custom = op.compare?.(args, res.value, got, ctx);
      const d = custom === undefined ? differs(res.value, got) : custom;
      if (d) fail('async differs from sync', d);
      for (const [out, result] of op.identity?.(aArgs, res.value) ?? []) if (ArrayBuffer.isView(out) && result !== out) fail('result is not out', 'the async result is another array than the out given');
    }
    if (parallel && !op.state) {
      const all = await Promise.allSettled(Array.from({ length: parallel }, () => hangGuard(op.async(lab, clone(args), ctx))));
      all.forEach((x, i) => {
        if (x.status === 'rejected') return fail('async rejected a valid call', `copy ${i + 1} of ${parallel} run at once: ${describeError(x.reason)}`);
        const d = differs(x.value, got);
        if (d) fail('async differs from sync', `copy ${i + 1} of ${parallel} run at once: ${d}`);
      });
    }
  }
  return { value: got };
}

// Bytes of every typed array under a value: what a call must copy in at least.
const bytesOf = (v) => arrays(v).reduce((s, a) => s + a.byteLength, 0);

async function badCall(env, op, lab, c, ctx, base, fail) {
  const bad = c.bad;
  await op.prepare?.(bad.args, ctx, env);
  const fn = op.prefix ? op.prefix(bad.args) : op.fn;
  // Growing memory may be needed to stage inputs larger than everything the valid call held (the engine checks
  // values in wasm memory); anything else a rejected call grows stays for good.
  const room = bytesOf(c.args) + bytesOf(base);
  const grewFor = () => bytesOf(bad.args) > room;
  const mem0 = lab.memoryBytes, st0 = op.state?.(ctx);
  const sArgs = clone(bad.args), aArgs = clone(bad.args);
  const outs = snapshot(outsOf(op, sArgs)), inputs = snapshot(inputsOf(op, sArgs));
  let e1 = null;
  try {
    op.sync(lab, sArgs, ctx);
    fail('accepted', 'the call with one thing wrong returned');
  } catch (e) {
    e1 = e;
  }
  if (e1) {
    const want = CLASSES[bad.cls];
    if (!(e1 instanceof Error) || e1.constructor !== want) fail('wrong error class', `${describeError(e1)} (expected a ${bad.cls})`);
    else if (!e1.message.startsWith(`${fn}: `)) fail('message lacks the function name', `${describeError(e1)} (expected it to start "${fn}: ")`);
    else if (!bad.names.some((n) => names(e1.message, n))) fail('message does not name the argument', `${describeError(e1)} (expected one of ${bad.names.join(', ')})`);
  }
  const after = (when) => {
    const mem = lab.memoryBytes;
    if (mem > mem0 && !grewFor()) fail('memory grew', `${when}: wasm memory ${mem0} → ${mem} bytes for a call that was refused`);
    if (op.state && !sameState(op, op.state(ctx), st0)) fail('changed the cache or model', `${when}: a refused call changed it`);
  };
  after('sync');
  if (changed(outs).length) fail('wrote into out', 'the refused call wrote into out');
  if (changed(inputs).length) fail('changed an input', 'the refused call wrote into an input');
  if (op.async) {
    const aOuts = snapshot(outsOf(op, aArgs));
    const res = await callAsync(op, lab, aArgs, ctx, fail);
    if (res && 'value' in res) fail('async accepted', 'the async twin resolved the call with one thing wrong');
    else if (res?.error && e1 && !res.error.hung && (res.error.constructor !== e1.constructor || res.error.message !== e1.message))
      fail('async error differs', `sync ${describeError(e1)}; async ${describeError(res.error)}`);
    if (res) {
      after('async');
      if (changed(aOuts).length) fail('wrote into out', 'the refused async call wrote into out');
    }
  }
  // The module keeps working: the valid call gives the same bits (a call that only reads), and a probe call does.
  if (!op.mutates?.(c.args)) {
    try {
      const again = op.sync(lab, clone(c.args), ctx);
      const d = differs(again, base);
      if (d) fail('lab broken after a refused call', `the valid call now gives other bits: ${d}`);
    } catch (e) {
      fail('lab broken after a refused call', `the valid call now throws ${describeError(e)}`);
    }
  }
  const p = env.probe(lab);
  if (p) fail('lab broken after a refused call', p);
}
