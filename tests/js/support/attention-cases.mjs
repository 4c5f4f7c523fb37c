// Random cases of the whole attention operator, shared by lab.attention's tests (attention-full.test.mjs) and
// lab.attentionBackward's (attention-backward.test.mjs): every option drawn independently from a seeded rng
// (support/random.mjs).

/**
 * batch 1…3, kvHeads {1, 2, 3} × groups {1, 2, 4} (batch 1 above 6 heads), nq 1…maxNq, nk 1…maxNk, dk and dv 1…maxD,
 * either layout, q and k in [-2, 2); then each with its own chance: causal (every spelling), a window (-1 and
 * Infinity unlimited), scale, softcap, keyLengths, alibiSlopes, and a mask — additive (a quarter -Infinity) or
 * boolean (a quarter 0) over 1…4 dims right-aligned to [batch, heads, nq, nk], each full or broadcast, the key dim
 * sometimes shorter than nk; maskShape now and then left out where the default [nq, nk] is the shape.
 */
export function randomAttentionCase(r, { maxNq = 12, maxNk = 40, maxD = 16 } = {}) {
  const kvHeads = r.pick([1, 1, 2, 3]), heads = kvHeads * r.pick([1, 1, 2, 4]);
  const batch = heads > 6 ? 1 : r.int(1, 3);
  const nq = r.int(1, maxNq), nk = r.int(1, maxNk), dk = r.int(1, maxD), dv = r.int(1, maxD);
  const layout = r.pick(['bhsd', 'bshd']);
  const c = {
    q: r.array(batch * heads * nq * dk, -2, 2), k: r.array(batch * kvHeads * nk * dk, -2, 2), v: r.array(batch * kvHeads * nk * dv),
    batch, heads, kvHeads, nq, nk, dk, dv, layout,
  };
  if (r.bool(0.7)) c.causal = r.pick([false, true, 'bottom-right', 'top-left']);
  if (r.bool(0.3)) c.window = [r.pick([-1, Infinity, 0, 1, 3, 7]), r.pick([-1, Infinity, 0, 2, 5])];
  if (r.bool(0.3)) c.scale = r.pick([0.1, 0.5, 2]);
  if (r.bool(0.3)) c.softcap = r.pick([0.5, 3, 30]);
  if (r.bool(0.3)) c.keyLengths = Array.from({ length: batch }, () => r.int(0, nk));
  if (r.bool(0.3)) c.alibiSlopes = r.array(heads, 0, 0.5);
  if (r.bool(0.4)) {
    const target = [batch, heads, nq, nk];
    const dims = r.int(1, 4);
    const shape = target.slice(4 - dims).map((t) => (r.bool() ? t : 1));
    if (r.bool(0.25) && nk > 2) shape[shape.length - 1] = r.int(2, nk - 1); // shorter than nk: the rest masked
    const count = shape.reduce((a, b) => a * b, 1);
    c.mask = r.bool() ? Uint8Array.from({ length: count }, () => (r.bool(0.75) ? 1 : 0))
      : Float32Array.from({ length: count }, () => (r.bool(0.25) ? -Infinity : r.next() * 4 - 2));
    if (r.bool(0.8) || dims !== 2 || shape[0] !== nq || shape[1] !== nk) c.maskShape = shape;
  }
  return c;
}

/** A case as one line of JSON for a failure message: typed arrays by type and length. */
export const caseLabel = (c) =>
  JSON.stringify(c, (k, v) => (ArrayBuffer.isView(v) ? `${v.constructor.name}(${v.length})` : v === Infinity ? 'Infinity' : v));
