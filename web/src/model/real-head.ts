// A real model's attention on the learner's text: the tokens as its tokenizer cuts them, and one forward through
// the engine that returns every layer's attention weights and the queries, keys and values each layer's attention
// consumed (after the projections' biases and, for rotary models, RoPE). The labs slice one head out of that and
// recompute its weights from its q and k with the engine's attention, so each step (q·k, × scale, + mask, softmax,
// the weighted sum of v) is shown from the numbers the model itself used.
import type { Model } from 'attnlab';
import { LIMITS } from '../state/params';

export interface RealTokens {
  ids: Int32Array;
  /** Each token as the tokenizer cut it, for display (a leading space shown as ␣, a line break as ↵). */
  tokens: string[];
  /** More tokens than the labs show (the page's limit, or the model's context). */
  truncated: boolean;
}

/** Shows a token's text with its spaces and line breaks visible: “ the” → “␣the”. */
export function showToken(t: string): string {
  return t.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';
}

/** A token as a plain word, for the captions' word classes: “␣The” → “the”. */
export function plainToken(t: string): string {
  return t.trim().toLowerCase();
}

export function realTokens(m: Model, text: string): RealTokens {
  if (!m.tokenizer) throw new Error('the model was opened without a tokenizer: its attention views need one');
  const all = m.tokenizer.encode(text);
  const max = Math.min(LIMITS.tokens, m.config.context);
  const ids = all.slice(0, max);
  return { ids, tokens: m.tokenizer.tokens(ids).map(showToken), truncated: all.length > max };
}

/**
 * One layer's q, k, v as the attention read them: q `[n, heads, headDim]`, k and v `[n, kvHeads, headDim]`, and
 * the scale its scores used.
 */
export interface LayerQkv { q: Float32Array; k: Float32Array; v: Float32Array; scale: number }

export interface RealRun {
  model: Model;
  ids: Int32Array;
  tokens: string[];
  truncated: boolean;
  n: number;
  /** attention[layer][head]: `[n, n]`, the engine's weights. */
  attention: Float32Array[][];
  qkv: LayerQkv[];
}

// The last few runs, by model and ids: every lab on the page asks for the same text.
const cache: { model: Model; key: string; run?: RealRun; error?: string; pending?: Promise<void> }[] = [];
const listeners = new Set<() => void>();
/** Called when a run the labs asked for has finished (or failed). */
export function onRealRun(cb: () => void): void { listeners.add(cb); }

/**
 * The run for `text`, or undefined while it is computed (listeners are called when it is ready); `{ error }` when
 * the forward failed. Each text costs one forward, shared by the labs.
 */
export function realRun(m: Model, text: string): RealRun | { error: string } | undefined {
  let t: RealTokens;
  try { t = realTokens(m, text); } catch (e) { return { error: (e as Error).message }; }
  if (t.ids.length === 0) return undefined;
  const key = Array.from(t.ids).join(',');
  const hit = cache.find((c) => c.model === m && c.key === key);
  if (hit) return hit.run ?? (hit.error ? { error: hit.error } : undefined);
  const entry: (typeof cache)[number] = { model: m, key };
  cache.unshift(entry);
  if (cache.length > 4) cache.pop();
  entry.pending = m.forwardAsync(t.ids, { attention: true, qkv: true }).then((r) => {
    entry.run = { model: m, ids: t.ids, tokens: t.tokens, truncated: t.truncated, n: t.ids.length, attention: r.attention, qkv: r.qkv };
  }).catch((e: Error) => { entry.error = e.message; }).finally(() => { listeners.forEach((cb) => cb()); });
  return undefined;
}

export interface HeadSlice {
  /** The head's rows, `[n, headDim]` each. */
  q: Float32Array; k: Float32Array; v: Float32Array;
  /** The key/value head this query head reads (grouped-query attention shares one among several). */
  kvHead: number;
  scale: number;
  /** The engine's weights for this head, `[n, n]`. */
  weights: Float32Array;
}

/** One head's q, k, v out of a run's layer (k and v from the key/value head its group shares). */
export function headSlice(run: RealRun, layer: number, head: number): HeadSlice {
  const c = run.model.config;
  const { n } = run;
  const d = c.headDim, kvHead = Math.floor(head / (c.heads / c.kvHeads));
  const { q, k, v, scale } = run.qkv[layer];
  const take = (src: Float32Array, width: number, h: number) => {
    const out = new Float32Array(n * d);
    for (let i = 0; i < n; i++) out.set(src.subarray(i * width * d + h * d, i * width * d + (h + 1) * d), i * d);
    return out;
  };
  return { q: take(q, c.heads, head), k: take(k, c.kvHeads, kvHead), v: take(v, c.kvHeads, kvHead), kvHead, scale, weights: run.attention[layer][head] };
}

/** The model in a few words, from its configuration: “GPT-2, 4 layers × 4 heads, d_model 128, head size 32”. */
export function describeModel(m: Model): string {
  const c = m.config;
  const family = c.modelType === 'gpt2' ? 'GPT-2' : c.modelType === 'llama' ? 'Llama' : c.modelType === 'qwen2' ? 'Qwen2' : c.modelType === 'mistral' ? 'Mistral' : c.modelType;
  return `${family}, ${c.layers} layers × ${c.heads} heads${c.kvHeads < c.heads ? ` (${c.kvHeads} key/value heads)` : ''}, d_model ${c.dModel}, head size ${c.headDim}`;
}

/** What X is for a layer of this model, in words. */
export function layerInput(m: Model, layer: number): string {
  const c = m.config;
  const norm = c.modelType === 'gpt2' ? 'LayerNorm' : 'RMSNorm';
  const stream = layer === 0
    ? (c.ropeTheta === null ? 'each token’s embedding plus its position’s' : 'each token’s embedding (positions enter as RoPE, turning q and k)')
    : `the residual stream after ${layer === 1 ? 'layer 1' : `layers 1–${layer}`}: each token’s embedding${c.ropeTheta === null ? ' plus its position’s' : ''}, plus every earlier layer’s attention and MLP output`;
  return `the ${norm} of the residual stream entering layer ${layer + 1} (${stream})`;
}
