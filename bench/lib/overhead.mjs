// What an async twin costs per call beyond its synchronous form, on calls too small to be worth the workers
// (they stay on the calling thread: the promise is the only cost) and on the smallest attention the twin does
// cut into two parts (its round trip through the workers). Shared by the Node adapter and the Chromium page.
// Each sample times a batch of calls and divides: Chromium without cross-origin isolation rounds
// performance.now() to 100 µs, coarser than a small call.

const CALLS_PER_SAMPLE = 32;

export const OVERHEAD_CASES = [
  { id: 'softmax64', label: 'softmax of 64 values' },
  { id: 'attention8x16', label: 'attention 8 heads × 16 × 16' },
  { id: 'attention8x128', label: 'attention 8 heads × 128 × 128, d 64 (cut in two)' },
];

/** { id → { sync, async } } medians in ms per call; `measure(run, timing)` is the caller's timing loop. */
export async function measureOverhead(lab, measure, timing) {
  const fill = (n, v) => new Float32Array(n).fill(v);
  const x = fill(64, 0.5), tiny = fill(8 * 16 * 16, 0.1), mid = Float32Array.from({ length: 8 * 128 * 64 }, (_, i) => Math.sin(i));
  const calls = {
    softmax64: [() => lab.softmax(x), () => lab.softmaxAsync(x)],
    attention8x16: [(o) => lab.attention(o), (o) => lab.attentionAsync(o), { q: tiny, k: tiny, v: tiny, heads: 8, nq: 16, nk: 16, dk: 16, dv: 16 }],
    attention8x128: [(o) => lab.attention(o), (o) => lab.attentionAsync(o), { q: mid, k: mid, v: mid, heads: 8, nq: 128, nk: 128, dk: 64, dv: 64 }],
  };
  const batch = (f, o) => async () => {
    let last;
    for (let i = 0; i < CALLS_PER_SAMPLE; ++i) last = await f(o);
    return last;
  };
  const result = {};
  for (const { id } of OVERHEAD_CASES) {
    const [sync, async, o] = calls[id];
    const per = async (f) => {
      const r = await measure(batch(f, o), timing);
      return { median: r.median / CALLS_PER_SAMPLE, min: r.min / CALLS_PER_SAMPLE };
    };
    result[id] = { sync: await per(sync), async: await per(async) };
  }
  return result;
}

export function overheadLine(o) {
  if (!o || o.failed || o.unsupported) return `  per-call overhead: ${o?.failed ?? o?.unsupported ?? 'not measured'}`;
  const us = (x) => `${(x * 1000).toFixed(0)} µs`;
  const parts = OVERHEAD_CASES.filter(({ id }) => o[id]).map(({ id, label }) => {
    const { sync, async } = o[id];
    const plus = async.median - sync.median;
    return `${label} ${us(sync.median)} → ${us(async.median)} (${plus >= 0 ? '+' : '−'}${us(Math.abs(plus))})`;
  });
  return `  per-call cost of the async twins (threads: 2, median of batches of ${CALLS_PER_SAMPLE} calls): ${parts.join('; ')}`;
}
