// How good the model is on held-out text, in numbers: its cross-entropy against unigram and bigram baselines fit
// on the training split, per token and per byte; samples from seeded prompts. Cross-entropies are summed in float64
// from the engine's float32 logits.

/** Σ over positions p in [from, to) of −log softmax(logits[p])[target[p]], in float64; logits rows of V. */
export function nats(logits, V, targets, from, to, rowOffset = 0) {
  let sum = 0;
  for (let p = from; p < to; ++p) {
    const row = (rowOffset + p) * V;
    let max = -Infinity;
    for (let j = 0; j < V; ++j) if (logits[row + j] > max) max = logits[row + j];
    let z = 0;
    for (let j = 0; j < V; ++j) z += Math.exp(logits[row + j] - max);
    sum += max + Math.log(z) - logits[row + targets[p]];
  }
  return sum;
}

/** Evenly spaced windows of context + 1 tokens from `stream` (a window's last token is only a target). */
export function evalWindows(stream, context, count) {
  const out = [], step = Math.floor((stream.length - context - 1) / count);
  for (let i = 0; i < count; ++i) out.push(stream.subarray(i * step, i * step + context + 1));
  return out;
}

/** Mean cross-entropy of the windows' next tokens (all positions), one batched forward. */
export function windowLoss(gpt, windows) {
  const T = windows[0].length - 1, V = gpt.config.vocabSize;
  const tokens = new Int32Array(windows.length * T);
  windows.forEach((w, b) => tokens.set(w.subarray(0, T), b * T));
  const { logits } = gpt.forward(tokens, { batch: windows.length });
  let sum = 0;
  windows.forEach((w, b) => (sum += nats(logits, V, w.subarray(1), 0, T, b * T)));
  return sum / (windows.length * T);
}

/**
 * The model's loss on every token of `stream` but the first: windows of `context` tokens that advance by
 * context / 2; the first window scores all its tokens, each later one its last context / 2, so every token is
 * scored once, with at least context / 2 tokens before it where the stream has them.
 * @returns {{ nats: number, tokens: number }}
 */
export function streamLoss(gpt, stream, { batch = 8 } = {}) {
  const T = gpt.config.context, V = gpt.config.vocabSize, half = T / 2;
  const jobs = []; // [start, first scored position in the window]
  for (let start = 0; ; start += half) {
    const end = Math.min(start + T, stream.length - 1); // inputs start…end−1, targets start+1…end
    if (end - start <= 0) break;
    jobs.push({ start, len: end - start, from: start === 0 ? 0 : half });
    if (end === stream.length - 1) break;
  }
  let sum = 0, count = 0;
  for (let i = 0; i < jobs.length; i += batch) {
    const group = jobs.slice(i, i + batch).filter((j) => j.len === T);
    const ragged = jobs.slice(i, i + batch).filter((j) => j.len !== T);
    for (const set of [group, ...ragged.map((j) => [j])]) {
      if (!set.length) continue;
      const len = set[0].len, tokens = new Int32Array(set.length * len);
      set.forEach((j, b) => tokens.set(stream.subarray(j.start, j.start + len), b * len));
      const { logits } = gpt.forward(tokens, { batch: set.length });
      set.forEach((j, b) => {
        const targets = stream.subarray(j.start + 1, j.start + 1 + len);
        sum += nats(logits, V, targets, j.from, len, b * len);
        count += len - j.from;
      });
    }
  }
  return { nats: sum, tokens: count };
}

/** Unigram counts and bigram counts (a Map from previous · V + next) of a token stream. */
export function ngramCounts(stream, V) {
  const uni = new Float64Array(V), bi = new Map(), prevTotal = new Float64Array(V);
  for (let i = 0; i < stream.length; ++i) {
    uni[stream[i]]++;
    if (i > 0) {
      const k = stream[i - 1] * V + stream[i];
      bi.set(k, (bi.get(k) ?? 0) + 1);
      prevTotal[stream[i - 1]]++;
    }
  }
  return { uni, bi, prevTotal, total: stream.length, V };
}

/** Nats of every token but the first of `stream` under the add-k bigram P(b | a) = (c(a,b) + k) / (c(a) + kV). */
export function bigramNats(counts, k, stream) {
  const { bi, prevTotal, V } = counts;
  let sum = 0;
  for (let i = 1; i < stream.length; ++i) {
    const a = stream[i - 1], c = bi.get(a * V + stream[i]) ?? 0;
    sum -= Math.log((c + k) / (prevTotal[a] + k * V));
  }
  return sum;
}

/** Nats of every token but the first under the add-one unigram. */
export function unigramNats(counts, stream) {
  const { uni, total, V } = counts;
  let sum = 0;
  for (let i = 1; i < stream.length; ++i) sum -= Math.log((uni[stream[i]] + 1) / (total + V));
  return sum;
}

export const BIGRAM_KS = [1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1];

/**
 * The bigram baseline: k chosen on the training split alone (counts of its first 90% of documents, scored on the
 * last 10%), then the counts of the whole training split. `trainDocs`: the training documents' streams.
 */
export function bigramBaseline(trainDocs, trainStream, V) {
  const cut = Math.floor(trainDocs.length * 0.9);
  const join = (docs) => {
    const n = docs.reduce((s, d) => s + d.length, 0), out = new Int32Array(n);
    let at = 0;
    for (const d of docs) out.set(d, at), (at += d.length);
    return out;
  };
  const fit = ngramCounts(join(trainDocs.slice(0, cut)), V), dev = join(trainDocs.slice(cut));
  const byK = BIGRAM_KS.map((k) => [k, bigramNats(fit, k, dev) / (dev.length - 1)]);
  const [k] = byK.reduce((best, x) => (x[1] < best[1] ? x : best));
  return { k, byK, counts: ngramCounts(trainStream, V) };
}

/** Per token and per byte (bits per byte too) numbers of `n` nats over `tokens` tokens and `bytes` bytes. */
export function rates(n, tokens, bytes, characters) {
  return {
    nats: n,
    tokens,
    lossPerToken: n / tokens,
    perplexityPerToken: Math.exp(n / tokens),
    natsPerByte: n / bytes,
    bitsPerByte: n / bytes / Math.LN2,
    perplexityPerByte: Math.exp(n / bytes),
    natsPerCharacter: n / characters,
  };
}

/** Samples from the prompts with the engine's sampler (seeded: the same text on every machine). */
export function samples(gpt, enc, decodeIds, prompts, { temperature, topK, maxTokens, seed }) {
  return prompts.map((prompt, i) => {
    const ids = Int32Array.from(enc.encode(prompt));
    const out = gpt.generate(ids, { maxTokens, temperature, topK, seed: seed + i });
    return { prompt, continuation: decodeIds(out) };
  });
}
