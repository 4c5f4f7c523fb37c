// Trained weights for the attention labs: layer 1 of a small GPT trained by the engine on the words corpus — the
// model shipped with the page (web/src/model/trained/words-gpt.safetensors, made and reproduced bit for bit by
// scripts/train-explorer-model.mjs), or the one just trained in the learn lab. Layer 1 reads
// X = LayerNorm(token embedding + position embedding) and projects it with the slices of c_attn (one per head) and
// c_proj; the labs compute softmax(QKᵀ/√d_k)V from those with the engine, exactly what the model's first layer does.
import shippedUrl from './trained/words-gpt.safetensors?url';
import { wordsCorpus } from './train-tasks';
import { UNKNOWN } from '../text/corpus';

export interface TrainedModel {
  /** 'shipped' (the page's model) or 'learn' (trained in this tab, at `step`). */
  source: 'shipped' | 'learn';
  step: number;
  vocab: string[];
  index: Map<string, number>;
  dModel: number;
  heads: number;
  dk: number;
  context: number;
  layers: number;
  wte: Float32Array;
  wpe: Float32Array;
  /** Layer 1's LayerNorm weight (and bias, when the model has biases). */
  lnW: Float32Array;
  lnB?: Float32Array;
  /** Per head, [dModel × dk] row-major: the inputs the labs' tables show. */
  wq: Float32Array[];
  wk: Float32Array[];
  wv: Float32Array[];
  /** [heads·dk × dModel]: c_proj transposed. */
  wo: Float32Array;
  /** The model has biases in its projections (the labs then note that they leave them out). */
  hasBias: boolean;
}

let current: TrainedModel | undefined;
let shipped: TrainedModel | undefined;
const listeners = new Set<() => void>();

export const trainedModel = (): TrainedModel | undefined => current;
/** Called when the labs' trained model changes (the learn lab hands over its model, or the shipped one returns). */
export function onTrainedChange(f: () => void): void { listeners.add(f); }

/** Reads a safetensors file (float32 tensors) into named arrays and its metadata. */
export function readSafetensors(bytes: Uint8Array): { tensors: Map<string, { shape: number[]; data: Float32Array }>; meta: Record<string, string> } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] } | Record<string, string>>;
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  let meta: Record<string, string> = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') { meta = t as Record<string, string>; continue; }
    const { dtype, shape, data_offsets: [b, e] } = t as { dtype: string; shape: number[]; data_offsets: [number, number] };
    if (dtype !== 'F32') throw new Error(`${name}: dtype ${dtype}, expected F32`);
    const raw = bytes.slice(8 + n + b, 8 + n + e);
    tensors.set(name, { shape, data: new Float32Array(raw.buffer, raw.byteOffset, (e - b) / 4) });
  }
  return { tensors, meta };
}

function fromBytes(bytes: Uint8Array, source: TrainedModel['source'], step: number): TrainedModel {
  const { tensors, meta } = readSafetensors(bytes);
  const get = (name: string) => {
    const t = tensors.get(name);
    if (!t) throw new Error(`the model has no ${name}`);
    return t.data;
  };
  const dModel = Number(meta.n_embd), heads = Number(meta.n_head), context = Number(meta.block_size), layers = Number(meta.n_layer);
  if (meta.position !== 'learned') throw new Error('the labs read models with learned positions');
  const dk = dModel / heads;
  const cAttn = get('transformer.h.0.attn.c_attn.weight'); // [3d, d], y = x·Wᵀ
  const cProj = get('transformer.h.0.attn.c_proj.weight'); // [d, d]
  const slice = (part: number, h: number) => {
    const w = new Float32Array(dModel * dk);
    for (let i = 0; i < dModel; i++) for (let c = 0; c < dk; c++) w[i * dk + c] = cAttn[(part * dModel + h * dk + c) * dModel + i];
    return w;
  };
  const wo = new Float32Array(dModel * dModel);
  for (let r = 0; r < dModel; r++) for (let c = 0; c < dModel; c++) wo[r * dModel + c] = cProj[c * dModel + r];
  const vocab = wordsCorpus().vocab;
  if (Number(meta.vocab_size) !== vocab.length) throw new Error(`the model's vocabulary (${meta.vocab_size}) is not the words corpus's (${vocab.length})`);
  return {
    source, step, vocab, index: wordsCorpus().index, dModel, heads, dk, context, layers,
    wte: get('transformer.wte.weight'), wpe: get('transformer.wpe.weight'),
    lnW: get('transformer.h.0.ln_1.weight'), lnB: tensors.get('transformer.h.0.ln_1.bias')?.data,
    wq: Array.from({ length: heads }, (_, h) => slice(0, h)),
    wk: Array.from({ length: heads }, (_, h) => slice(1, h)),
    wv: Array.from({ length: heads }, (_, h) => slice(2, h)),
    wo, hasBias: tensors.has('transformer.h.0.attn.c_attn.bias'),
  };
}

/** Loads the shipped model once (about 19 KB); the labs' trained weights are this until the learn lab hands over one. */
export async function loadShippedModel(): Promise<void> {
  const res = await fetch(shippedUrl);
  if (!res.ok) throw new Error(`the trained model did not load (${res.status})`);
  shipped = fromBytes(new Uint8Array(await res.arrayBuffer()), 'shipped', 0);
  current ??= shipped;
}

/** Uses a model trained in the learn lab (safetensors bytes), or the shipped one again with `undefined`. */
export function useTrained(bytes: Uint8Array | undefined, step = 0): void {
  current = bytes ? fromBytes(bytes, 'learn', step) : shipped;
  listeners.forEach((f) => f());
}

export interface TrainedInput { x: Float32Array; words: string[]; unknown: string[]; n: number; truncated: boolean }

/**
 * X for layer 1: each word's token embedding plus its position's, layer-normed (mean 0, variance 1, eps 1e-5, then
 * the LayerNorm weight and bias), as the model computes it before its first attention. Words outside the vocabulary
 * use <unk>. At most `context` words (the positions the model has).
 */
export function trainedInput(m: TrainedModel, words: string[]): TrainedInput {
  const n = Math.min(words.length, m.context);
  const d = m.dModel, x = new Float32Array(n * d), unknown: string[] = [], shown: string[] = [];
  for (let r = 0; r < n; r++) {
    let id = m.index.get(words[r]);
    if (id === undefined) { id = m.index.get(UNKNOWN)!; if (!unknown.includes(words[r])) unknown.push(words[r]); }
    shown.push(m.index.has(words[r]) ? words[r] : UNKNOWN);
    const e = new Float64Array(d);
    let mean = 0;
    for (let c = 0; c < d; c++) { e[c] = m.wte[id * d + c] + m.wpe[r * d + c]; mean += e[c]; }
    mean /= d;
    let v = 0;
    for (let c = 0; c < d; c++) v += (e[c] - mean) ** 2;
    const inv = 1 / Math.sqrt(v / d + 1e-5);
    for (let c = 0; c < d; c++) x[r * d + c] = (e[c] - mean) * inv * m.lnW[c] + (m.lnB ? m.lnB[c] : 0);
  }
  return { x, words: shown, unknown, n, truncated: words.length > m.context };
}

/** How the labs name the weights on screen. */
export function trainedName(m: TrainedModel): string {
  return m.source === 'shipped'
    ? `the page’s trained model (d_model ${m.dModel}, ${m.heads} heads, trained by the engine on the words corpus)`
    : `the model you trained in “Watch attention learn” (step ${m.step}, d_model ${m.dModel}, ${m.heads} heads)`;
}
