// The page's current real language model: the one every view that shows real language reads. It starts as the
// model that ships with the page (web/models/kjv-fortunes-gpt/, trained by scripts/train-shipped-model.mjs),
// loaded through the engine's lab.loadModel like any other checkpoint, lazily, once, when a view first needs it;
// a model the learner opens replaces it. Also the selected head (layer, head), shared by the model view, which
// selects it, and the views that step through it.
import { countParameters } from './open/files';
import type { Model } from 'attnlab';
import { loadEngine } from '../engine';
// The shipped folder's files as URLs: hashed files beside the page, or data: URLs inside the offline copy
// (web/vite.config.ts inlines every asset there), like the engine's .wasm files (engine-files.ts).
import configUrl from '../../models/kjv-fortunes-gpt/config.json?url';
import generationUrl from '../../models/kjv-fortunes-gpt/generation_config.json?url';
import headScoresUrl from '../../models/kjv-fortunes-gpt/head-scores.json?url';
import weightsUrl from '../../models/kjv-fortunes-gpt/model.safetensors?url';
import tokenizerUrl from '../../models/kjv-fortunes-gpt/tokenizer.json?url';
import tokenizerConfigUrl from '../../models/kjv-fortunes-gpt/tokenizer_config.json?url';

/** The patterns head-scores.json measures (scripts/shipped-model/heads.mjs says how). */
export type HeadPattern = 'previousToken' | 'firstToken' | 'sameWord' | 'duplicateToken' | 'induction';

/** head-scores.json: each pattern's mean share per layer × head, its chance level, and the heads it names. */
export interface HeadScores {
  rule: string;
  threshold: number;
  ratio: number;
  patterns: Record<HeadPattern, { chance: number; queries: number; scores: number[][] }>;
  names: { layer: number; head: number; patterns: HeadPattern[] }[];
}

export interface RealModelInfo {
  name: string;
  source: 'shipped' | 'disk' | 'hub';
  /** The Hugging Face repo id, for a model from the hub. */
  repo?: string;
  /** Measured head scores, when the model comes with them (the shipped one does). */
  headScores?: HeadScores;
  /** The number of parameters in its safetensors files, when counted. */
  parameters?: number;
}

export interface RealModel extends RealModelInfo {
  model: Model;
}

/** Where the shipped model's load stands, for a status line. */
export interface RealModelStatus {
  state: 'idle' | 'loading' | 'ready' | 'error';
  /** Bytes read so far and in all (while loading). */
  loaded: number;
  total: number;
  message?: string;
}

let current: RealModel | undefined;
let status: RealModelStatus = { state: 'idle', loaded: 0, total: 0 };
const modelListeners = new Set<(m: RealModel | undefined) => void>();
const statusListeners = new Set<(s: RealModelStatus) => void>();

export const realModel = (): RealModel | undefined => current;
export const realModelStatus = (): RealModelStatus => status;

/** Called with the new model whenever it changes; returns the unsubscribe. */
export function onRealModel(cb: (m: RealModel | undefined) => void): () => void {
  modelListeners.add(cb);
  return () => modelListeners.delete(cb);
}

/** Called as the shipped model's load progresses; returns the unsubscribe. */
export function onRealModelStatus(cb: (s: RealModelStatus) => void): () => void {
  statusListeners.add(cb);
  return () => statusListeners.delete(cb);
}

function setStatus(s: RealModelStatus): void {
  status = s;
  for (const cb of statusListeners) cb(s);
}

/**
 * Makes `model` the page's model. The previous one is disposed only after the new one is in place and every
 * listener has seen it, so no view is left holding a freed model.
 */
export function setRealModel(model: Model, info: RealModelInfo): RealModel {
  const previous = current;
  current = { ...info, model };
  const sel = selected;
  if (sel && (sel.layer >= model.config.layers || sel.head >= model.config.heads)) selectHead(0, 0);
  for (const cb of modelListeners) cb(current);
  if (previous && previous.model !== model) {
    previous.model.dispose();
    if (previous.source === 'shipped') shippedLoad = undefined; // loading it again reads the files again
  }
  return current;
}

/** The shipped folder's files, in the names a model folder gives them. */
const SHIPPED_FILES: Record<string, string> = {
  'config.json': configUrl,
  'generation_config.json': generationUrl,
  'model.safetensors': weightsUrl,
  'tokenizer.json': tokenizerUrl,
  'tokenizer_config.json': tokenizerConfigUrl,
};
export const SHIPPED_NAME = 'kjv-fortunes-gpt';

let shippedLoad: Promise<RealModel> | undefined;

async function fetchBytes(url: string, onBytes: (n: number, total: number) => void): Promise<Uint8Array> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  const total = Number(res.headers.get('content-length') ?? 0);
  const bytes = new Uint8Array(await res.arrayBuffer());
  onBytes(bytes.length, total || bytes.length);
  return bytes;
}

/**
 * Loads the shipped model once (later calls share the load) and, when no other model has been opened meanwhile,
 * makes it the page's model. Resolves with the page's model.
 */
export function loadShippedModel(): Promise<RealModel> {
  if (current && !shippedLoad) return Promise.resolve(current);
  shippedLoad ??= (async () => {
    setStatus({ state: 'loading', loaded: 0, total: 0 });
    try {
      const names = Object.keys(SHIPPED_FILES);
      const got = new Map<string, number>();
      const totals = new Map<string, number>();
      const report = () => setStatus({
        state: 'loading',
        loaded: [...got.values()].reduce((a, b) => a + b, 0),
        total: [...totals.values()].reduce((a, b) => a + b, 0),
      });
      const [engine, headScores, ...bytes] = await Promise.all([
        loadEngine(),
        fetch(headScoresUrl).then((r) => r.json() as Promise<HeadScores>),
        ...names.map((name) => fetchBytes(SHIPPED_FILES[name], (n, total) => { got.set(name, n); totals.set(name, total); report(); })),
      ]);
      const model = await engine.loadModel(Object.fromEntries(names.map((name, i) => [name, bytes[i]])));
      setStatus({ state: 'ready', loaded: status.loaded, total: status.total });
      // A model the learner opened while this one loaded stays the page's model.
      if (current) { model.dispose(); return current; }
      const parameters = await countParameters(new Blob([bytes[names.indexOf('model.safetensors')] as Uint8Array<ArrayBuffer>]), 'model.safetensors');
      return setRealModel(model, { name: SHIPPED_NAME, source: 'shipped', headScores, parameters });
    } catch (err) {
      shippedLoad = undefined;
      setStatus({ state: 'error', loaded: 0, total: 0, message: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  })();
  return shippedLoad;
}

// The selected head (0-based), for the views that open one head of the model.
export interface HeadSelection { layer: number; head: number }
let selected: HeadSelection | undefined;
const selectionListeners = new Set<(s: HeadSelection | undefined) => void>();

export const selectedHead = (): HeadSelection | undefined => selected;

/** Selects a head of the current model (0-based layer and head). */
export function selectHead(layer: number, head: number): void {
  if (!Number.isInteger(layer) || !Number.isInteger(head) || layer < 0 || head < 0) throw new RangeError(`selectHead: no head ${layer}, ${head}`);
  if (current && (layer >= current.model.config.layers || head >= current.model.config.heads)) {
    throw new RangeError(`selectHead: the model has ${current.model.config.layers} layers of ${current.model.config.heads} heads`);
  }
  if (selected && selected.layer === layer && selected.head === head) return;
  selected = { layer, head };
  for (const cb of selectionListeners) cb(selected);
}

/** Called when the selected head changes; returns the unsubscribe. */
export function onSelectedHead(cb: (s: HeadSelection | undefined) => void): () => void {
  selectionListeners.add(cb);
  return () => selectionListeners.delete(cb);
}
