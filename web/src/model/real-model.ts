// The real model the page's attention views run on, and the head they show. A minimal version written so the labs
// build: the model view's own module replaces it with the same names (realModel, onRealModel, loadShippedModel,
// selectedHead, selectHead, onSelectedHead).
import type { Model } from 'attnlab';
import { loadEngine } from '../engine';
import configUrl from '../../models/kjv-fortunes-gpt/config.json?url';
import generationUrl from '../../models/kjv-fortunes-gpt/generation_config.json?url';
import weightsUrl from '../../models/kjv-fortunes-gpt/model.safetensors?url';
import tokenizerUrl from '../../models/kjv-fortunes-gpt/tokenizer.json?url';
import tokenizerConfigUrl from '../../models/kjv-fortunes-gpt/tokenizer_config.json?url';

let current: Model | undefined;
let loading: Promise<Model> | undefined;
const modelListeners = new Set<(m: Model | undefined) => void>();

/** The model the attention views run on, once one is loaded. */
export const realModel = (): Model | undefined => current;
export function onRealModel(cb: (m: Model | undefined) => void): void { modelListeners.add(cb); }

/** Makes `m` the current real model (the shipped one, or one the learner opened). */
export function setRealModel(m: Model | undefined): void {
  current = m;
  if (m) clampHead(m);
  modelListeners.forEach((cb) => cb(m));
}

/** Loads the model that ships with the page (once) and makes it the current one. */
export function loadShippedModel(): Promise<Model> {
  loading ??= (async () => {
    const files: Record<string, ArrayBuffer> = {};
    const get = async (name: string, url: string) => {
      const res = await fetch(url);
      if (!res.ok) throw new Error(`the shipped model's ${name} did not load (${res.status})`);
      files[name] = await res.arrayBuffer();
    };
    await Promise.all([get('config.json', configUrl), get('generation_config.json', generationUrl), get('model.safetensors', weightsUrl),
      get('tokenizer.json', tokenizerUrl), get('tokenizer_config.json', tokenizerConfigUrl)]);
    const engine = await loadEngine();
    // On the calling thread: the labs read one small forward at a time.
    const m = await engine.loadModel(files, { threads: 1 });
    if (!current) setRealModel(m);
    return m;
  })();
  loading.catch(() => { loading = undefined; });
  return loading;
}

export interface HeadChoice { layer: number; head: number }
let head: HeadChoice = { layer: 0, head: 0 };
const headListeners = new Set<(h: HeadChoice) => void>();

/** The layer and head (from 0) the views show. */
export const selectedHead = (): HeadChoice => head;
export function onSelectedHead(cb: (h: HeadChoice) => void): void { headListeners.add(cb); }
export function selectHead(layer: number, h: number): void {
  if (layer === head.layer && h === head.head) return;
  head = { layer, head: h };
  if (current) clampHead(current);
  headListeners.forEach((cb) => cb(head));
}

function clampHead(m: Model): void {
  const c = m.config;
  head = { layer: Math.min(Math.max(0, head.layer), c.layers - 1), head: Math.min(Math.max(0, head.head), c.heads - 1) };
}
