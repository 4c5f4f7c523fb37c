// The whole state as a JSON file, and back. The file uses the URL's parameter names and value strings
// (app-state FIELDS), so both forms share one validator: a file is turned into a query string and read
// by parseQuery, field by field. Hostile files are inert: only strings reach the parsers, nothing is
// parsed as HTML, and every rejected field is reported by the name the file used.
import type { AppState } from './app-state';
import { FIELDS } from './app-state';
import { parseQuery } from './url-state';

export const STATE_FORMAT = 'attnlab-state';
export const STATE_VERSION = 1;
/** A state file is a few kB; anything much larger is not one (and must not make the page parse megabytes). */
export const MAX_STATE_BYTES = 256 * 1024;

type Json = Record<string, unknown>;

/** Every field (defaults too, so the file stands on its own), in FIELDS order, after format and version. */
export function stateToJson(state: AppState): Json {
  const out: Json = { format: STATE_FORMAT, version: STATE_VERSION };
  for (const fl of FIELDS) out[fl.param] = (fl.write as (v: unknown) => string)(state[fl.key]);
  return out;
}

export function stateToJsonText(state: AppState): string {
  return `${JSON.stringify(stateToJson(state), null, 2)}\n`;
}

export type ImportResult =
  | { ok: true; state: AppState; rejected: string[]; unknown: number }
  | { ok: false; error: string };

/**
 * Reads a state file. Keys may be URL parameter names ("dm") or state names ("dModel"); values must be
 * the strings the export writes. Wrong types and invalid values are rejected by name (that field keeps
 * its default, as in a link); unknown keys are counted and ignored; a file that is not a state file at
 * all changes nothing.
 */
export function parseStateJson(text: string): ImportResult {
  if (text.length > MAX_STATE_BYTES) return { ok: false, error: `The file is too large for a state file (over ${MAX_STATE_BYTES / 1024} kB).` };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, error: 'The file is not valid JSON.' };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, error: 'The file is not a state file: it must hold one JSON object.' };
  }
  const obj = data as Json;
  const has = (k: string) => Object.prototype.hasOwnProperty.call(obj, k);
  if (has('format') && obj.format !== STATE_FORMAT) return { ok: false, error: `The file is not a state file ("format" must be "${STATE_FORMAT}").` };
  if (has('version') && obj.version !== STATE_VERSION) return { ok: false, error: `The file's "version" is not ${STATE_VERSION}, the only version this page reads.` };

  const byName = new Map<string, (typeof FIELDS)[number]>();
  for (const fl of FIELDS) { byName.set(fl.param, fl); byName.set(fl.key, fl); }
  const params = new URLSearchParams();
  const fileName = new Map<string, string>(); // URL param → the key the file used, for the notice
  const rejected: string[] = [];
  let unknown = 0;
  let known = 0;
  for (const [key, value] of Object.entries(obj)) {
    if (key === 'format' || key === 'version') continue;
    const fl = byName.get(key);
    if (!fl) { unknown++; continue; }
    known++;
    // A field given twice (as "dm" and "dModel") is ambiguous, like a repeated URL parameter.
    if (fileName.has(fl.param)) { rejected.push(fileName.get(fl.param)!, key); params.delete(fl.param); continue; }
    fileName.set(fl.param, key);
    if (typeof value !== 'string') { rejected.push(key); continue; }
    params.set(fl.param, value);
  }
  if (known === 0) return { ok: false, error: 'The file holds no attnlab state fields.' };
  const parsed = parseQuery(params.toString());
  for (const p of parsed.rejected) rejected.push(fileName.get(p) ?? p);
  // Named in the file's own order, whichever check rejected them.
  const order = Object.keys(obj);
  const names = [...new Set(rejected)].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  // Nothing valid at all: keep the current view rather than reset it to the defaults.
  if (names.length >= known) return { ok: false, error: `no field was valid (${names.join(', ')}).` };
  return { ok: true, state: parsed.state, rejected: names, unknown };
}
