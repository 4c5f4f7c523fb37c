// AppState <-> URL query string. Parsing is strict: every parameter is validated on its own, and an invalid
// one falls back to its default and is reported by name (the page shows the names with textContent only).
import { type AppState, type LearnTask, type Overrides, type WeightPreset, LEARN_TASKS, LIMITS, WEIGHT_PRESETS, defaultState } from './app-state';
import { TASKS } from '../model/train-tasks';

export interface ParseResult {
  state: AppState;
  /** Names of known parameters whose values were rejected. */
  rejected: string[];
  /** How many parameters were not ours (ignored). */
  unknown: number;
}

const NUM = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$/;
const INT = /^\d{1,6}$/;
const WORD_KEY = /^([\p{L}\p{N}']{1,24})\.(\d{1,2})$/u;
const CELL_KEY = /^(\d{1,2})\.(\d{1,2})$/;

function num(s: string, min: number, max: number): number | undefined {
  if (!NUM.test(s)) return undefined;
  const v = Number(s);
  return Number.isFinite(v) && v >= min && v <= max ? v : undefined;
}
function int(s: string, min: number, max: number): number | undefined {
  if (!INT.test(s)) return undefined;
  const v = Number(s);
  return v >= min && v <= max ? v : undefined;
}
/** A setting that may be left to its default: '' is null (the file form writes every field, defaults as ''). */
function orNull(parse: (s: string) => number | undefined): (s: string) => number | null | undefined {
  return (s) => (s === '' ? null : parse(s));
}
const writeOrNull = (v: number | null) => (v === null ? '' : fmt(v));
function bool(s: string): boolean | undefined {
  return s === '1' ? true : s === '0' ? false : undefined;
}
function overrides(s: string, key: RegExp): Overrides | undefined {
  const out: Overrides = new Map();
  if (s === '') return out;
  const parts = s.split(',');
  if (parts.length > LIMITS.edits) return undefined;
  for (const p of parts) {
    const i = p.lastIndexOf(':');
    if (i < 0 || !key.test(p.slice(0, i))) return undefined;
    const v = num(p.slice(i + 1), -LIMITS.cell, LIMITS.cell);
    if (v === undefined) return undefined;
    out.set(p.slice(0, i), v);
  }
  return out;
}

/** A fixed- or bounded-length list of numbers, each |x| ≤ abs. */
/** Free text of the attention lab's kind: at most the text limit, no control characters. */
const text = (s: string) => (s.length <= LIMITS.textChars && !/\p{Cc}/u.test(s) ? s : undefined);

function numList(s: string, min: number, max: number, abs: number): number[] | undefined {
  const xs = s.split(',').map((p) => num(p, -abs, abs));
  return xs.length >= min && xs.length <= max && xs.every((x) => x !== undefined) ? (xs as number[]) : undefined;
}

type Field = {
  [K in keyof AppState]: { param: string; key: K; parse(s: string): AppState[K] | undefined; write(v: AppState[K]): string };
}[keyof AppState];

const fmt = (v: number) => String(Math.round(v * 1e6) / 1e6);
const writeOverrides = (m: Overrides) => [...m].map(([k, v]) => `${k}:${fmt(v)}`).join(',');
const f = <K extends keyof AppState>(
  param: string, key: K, parse: (s: string) => AppState[K] | undefined, write: (v: AppState[K]) => string,
): Field => ({ param, key, parse, write }) as unknown as Field;

/** The parameter table; its order is the order parameters are written in. Documented in web/URL_STATE.md. */
export const FIELDS: Field[] = [
  f('sx', 'logits', (s) => {
    const xs = s.split(',').map((p) => num(p, -LIMITS.logits.abs, LIMITS.logits.abs));
    const ok = xs.length >= LIMITS.logits.min && xs.length <= LIMITS.logits.max && xs.every((x) => x !== undefined);
    return ok ? (xs as number[]) : undefined;
  }, (v) => v.map(fmt).join(',')),
  f('st', 'smTemp', (s) => num(s, LIMITS.temp.min, LIMITS.temp.max), fmt),
  f('t', 'text', text, (v) => v),
  f('dm', 'dModel', (s) => {
    const v = int(s, 1, 64);
    return v !== undefined && (LIMITS.dModel as readonly number[]).includes(v) ? v : undefined;
  }, String),
  f('es', 'embSeed', (s) => int(s, 0, 999999), String),
  f('xe', 'xEdits', (s) => overrides(s, WORD_KEY), writeOverrides),
  f('wp', 'preset', (s) => ((WEIGHT_PRESETS as readonly string[]).includes(s) ? (s as WeightPreset) : undefined), (v) => v),
  f('ws', 'wSeed', (s) => int(s, 0, 999999), String),
  f('th', 'trainedHead', (s) => int(s, 0, LIMITS.heads.max - 1), String),
  f('wq', 'wqEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
  f('wk', 'wkEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
  f('wv', 'wvEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
  f('dk', 'dk', (s) => int(s, LIMITS.dProj.min, LIMITS.dProj.max), String),
  f('dv', 'dv', (s) => int(s, LIMITS.dProj.min, LIMITS.dProj.max), String),
  f('c', 'causal', bool, (v) => (v ? '1' : '0')),
  f('sc', 'scaled', bool, (v) => (v ? '1' : '0')),
  f('tau', 'attnTemp', (s) => num(s, LIMITS.temp.min, LIMITS.temp.max), fmt),
  f('qi', 'query', (s) => int(s, 0, LIMITS.tokens - 1), String),
  f('h', 'heads', (s) => int(s, LIMITS.heads.min, LIMITS.heads.max), String),
  f('hd', 'headDim', (s) => int(s, LIMITS.headDim.min, LIMITS.headDim.max), String),
  f('ms', 'mhSeed', (s) => int(s, 0, 999999), String),
  f('mc', 'mhCausal', bool, (v) => (v ? '1' : '0')),
  f('mt', 'mhTrained', bool, (v) => (v ? '1' : '0')),
  f('wo', 'woEdits', (s) => overrides(s, CELL_KEY), writeOverrides),
  f('kq', 'kvQuery', (s) => numList(s, 2, 2, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('kk', 'kvKeys', (s) => numList(s, 6, 6, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('kv', 'kvValues', (s) => numList(s, 3, 3, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('kw', 'kvWord', (s) => (/^[\p{L}\p{N}' -]{0,24}$/u.test(s) ? s : undefined), (v) => v),
  f('ps', 'pullSentence', (s) => int(s, 0, 2), String),
  f('pw', 'pullWord', (s) => int(s, 0, LIMITS.tokens - 1), String),
  f('pe', 'pullEdits', (s) => {
    const o = overrides(s, WORD_KEY);
    return o && [...o.values()].every((v) => v >= -1.5 && v <= 3) ? o : undefined; // inside the drawn plane
  }, writeOverrides),
  f('pi', 'pullIters', (s) => int(s, 0, LIMITS.pullIters), String),
  f('rk', 'rootDk', (s) => int(s, 1, LIMITS.rootDk), String),
  f('rs', 'rootSeed', (s) => int(s, 0, 999999), String),
  f('ci', 'traceRow', (s) => int(s, 0, LIMITS.tokens - 1), String),
  f('cj', 'traceCol', (s) => int(s, 0, LIMITS.tokens - 1), String),
  f('as', 'asymSeparate', bool, (v) => (v ? '1' : '0')),
  f('aq', 'asymWq', (s) => numList(s, 4, 4, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('ak', 'asymWk', (s) => numList(s, 4, 4, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('tq', 'spWq', (s) => numList(s, 4, 4, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('tk', 'spWk', (s) => numList(s, 4, 4, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('tv', 'spWv', (s) => numList(s, 4, 4, LIMITS.kvAbs), (v) => v.map(fmt).join(',')),
  f('nx', 'stabLogits', (s) => numList(s, LIMITS.stab.min, LIMITS.stab.max, LIMITS.stab.abs), (v) => v.map(fmt).join(',')),
  f('cn', 'costN', (s) => int(s, LIMITS.cost.n.min, LIMITS.cost.n.max), String),
  f('cd', 'costD', (s) => int(s, LIMITS.cost.d.min, LIMITS.cost.d.max), String),
  f('ch', 'costHeads', (s) => int(s, LIMITS.cost.heads.min, LIMITS.cost.heads.max), String),
  f('cl', 'costLayers', (s) => int(s, LIMITS.cost.layers.min, LIMITS.cost.layers.max), String),
  f('cb', 'costBytes', (s) => {
    const v = int(s, 1, 4);
    return v !== undefined && (LIMITS.cost.bytes as readonly number[]).includes(v) ? v : undefined;
  }, String),
  f('lt', 'learnTask', (s) => ((LEARN_TASKS as readonly string[]).includes(s) ? (s as LearnTask) : undefined), (v) => v),
  f('ll', 'learnLayers', orNull((s) => int(s, LIMITS.learn.layers.min, LIMITS.learn.layers.max)), writeOrNull),
  f('lh', 'learnHeads', orNull((s) => int(s, LIMITS.learn.heads.min, LIMITS.learn.heads.max)), writeOrNull),
  f('ld', 'learnDModel', orNull((s) => {
    const v = int(s, 1, 1024);
    return v !== undefined && (LIMITS.learn.dModel as readonly number[]).includes(v) ? v : undefined;
  }), writeOrNull),
  f('lr', 'learnLr', orNull((s) => num(s, LIMITS.learn.lr.min, LIMITS.learn.lr.max)), writeOrNull),
  f('ls', 'learnSentence', text, (v) => v),
];

export function parseQuery(search: string): ParseResult {
  const state = defaultState();
  const rejected: string[] = [];
  let unknown = 0;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(search);
  } catch {
    return { state, rejected: ['(whole query)'], unknown: 0 };
  }
  const byParam = new Map(FIELDS.map((fl) => [fl.param, fl]));
  const seen = new Set<string>();
  for (const [name, value] of params) {
    const field = byParam.get(name);
    if (!field) { unknown++; continue; }
    if (seen.has(name)) { rejected.push(name); continue; } // a repeated parameter is ambiguous: keep the default
    seen.add(name);
    const v = field.parse(value);
    if (v === undefined) rejected.push(name);
    else (state as unknown as Record<string, unknown>)[field.key] = v;
  }
  // A parameter rejected for repetition must not keep the first copy's value either.
  for (const name of rejected) {
    const field = byParam.get(name);
    if (field) (state as unknown as Record<string, unknown>)[field.key] = defaultState()[field.key];
  }
  // The multi-head lab once opened on random weights without the causal mask: a link that sets its random-weight
  // parameters without `mt` was made then, and meant random weights (and no mask unless `mc` says so). toQuery
  // writes `mt` whenever it writes one of these.
  if (!seen.has('mt') && RANDOM_MH.some((p) => seen.has(p) && !rejected.includes(p))) {
    state.mhTrained = false;
    if (!seen.has('mc')) state.mhCausal = false;
  }
  // The learn lab's heads must divide its d_model (each head is d_model / heads wide): heads that do not are
  // invalid there and fall back to the task's default (which divides every d_model offered).
  const model = learnModel(state);
  if (model.dModel % model.heads !== 0) {
    rejected.push('lh');
    state.learnHeads = null;
  }
  return { state, rejected: [...new Set(rejected)], unknown };
}

/** The learn lab's model settings as the URL state gives them: its task's defaults where the state says null. */
export function learnModel(state: AppState): { layers: number; heads: number; dModel: number; lr: number } {
  const d = TASKS[state.learnTask].defaults;
  return {
    layers: state.learnLayers ?? d.layers,
    heads: state.learnHeads ?? d.heads,
    dModel: state.learnDModel ?? d.dModel,
    lr: state.learnLr ?? d.lr,
  };
}

/** The multi-head lab's parameters of its random weights (see parseQuery: without `mt` they mean mt=0). */
const RANDOM_MH = ['h', 'hd', 'ms', 'wo'];

/** Writes only what differs from the defaults, so shared links stay short. */
export function toQuery(state: AppState): string {
  const d = defaultState();
  const params = new URLSearchParams();
  for (const fl of FIELDS) {
    const w = (fl.write as (v: unknown) => string)(state[fl.key]);
    if (w !== (fl.write as (v: unknown) => string)(d[fl.key])) params.set(fl.param, w);
  }
  // `mt` at its default is still written next to h, hd, ms or wo, which alone mean random weights (see parseQuery).
  if (RANDOM_MH.some((p) => params.has(p)) && !params.has('mt')) params.set('mt', '1');
  const q = params.toString();
  return q ? `?${q}` : '';
}
