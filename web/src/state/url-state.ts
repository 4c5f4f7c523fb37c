// AppState <-> URL query string. Parsing is strict: every parameter is validated on its own (by the field its lab
// defines: labs/*/state.ts), and an invalid one falls back to its default and is reported by name (the page shows
// the names with textContent only).
import { type AppState, FIELDS, SLICES, defaultState } from './app-state';

export interface ParseResult {
  state: AppState;
  /** Names of known parameters whose values were rejected. */
  rejected: string[];
  /** How many parameters were not ours (ignored). */
  unknown: number;
}

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
  // Each lab's rules across its own parameters.
  for (const slice of SLICES) slice.afterParse?.(state, seen, rejected);
  return { state, rejected: [...new Set(rejected)], unknown };
}

/** Writes only what differs from the defaults, so shared links stay short. */
export function toQuery(state: AppState): string {
  const d = defaultState();
  const params = new URLSearchParams();
  for (const fl of FIELDS) {
    const w = (fl.write as (v: unknown) => string)(state[fl.key]);
    if (w !== (fl.write as (v: unknown) => string)(d[fl.key])) params.set(fl.param, w);
  }
  for (const slice of SLICES) slice.afterWrite?.(params);
  const q = params.toString();
  return q ? `?${q}` : '';
}
