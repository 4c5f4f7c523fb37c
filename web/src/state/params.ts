// What every lab's URL state is built from: how a value is read from the query string (strictly: anything else is
// rejected) and written back, the limits more than one lab shares, and the shape of a lab's slice of the state
// (its fields, defaults and URL parameters, defined in the lab's own folder: labs/*/state.ts).

/** Sparse edits of a matrix: "row.col" -> value. X edits are keyed by word instead of row ("word.col"). */
export type Overrides = Map<string, number>;

/** Limits shared by several labs; each lab's own are in its state.ts. */
export const LIMITS = {
  temp: { min: 0.01, max: 100 },
  textChars: 240,
  tokens: 32,
  cell: 1000, // |edited matrix value|
  edits: 512, // edited cells per matrix
} as const;

const NUM = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?$/;
const INT = /^\d{1,6}$/;
export const WORD_KEY = /^([\p{L}\p{N}']{1,24})\.(\d{1,2})$/u;
export const CELL_KEY = /^(\d{1,2})\.(\d{1,2})$/;

export function num(s: string, min: number, max: number): number | undefined {
  if (!NUM.test(s)) return undefined;
  const v = Number(s);
  return Number.isFinite(v) && v >= min && v <= max ? v : undefined;
}
export function int(s: string, min: number, max: number): number | undefined {
  if (!INT.test(s)) return undefined;
  const v = Number(s);
  return v >= min && v <= max ? v : undefined;
}
/** The number of a random draw ("random weights #N"). */
export const seed = (s: string) => int(s, 0, 999999);
/** A token index, from 0 (clamped to the last token where it is used). */
export const tokenIndex = (s: string) => int(s, 0, LIMITS.tokens - 1);
/** A setting that may be left to its default: '' is null (the file form writes every field, defaults as ''). */
export function orNull(parse: (s: string) => number | undefined): (s: string) => number | null | undefined {
  return (s) => (s === '' ? null : parse(s));
}
export const fmt = (v: number) => String(Math.round(v * 1e6) / 1e6);
export const writeOrNull = (v: number | null) => (v === null ? '' : fmt(v));
export function bool(s: string): boolean | undefined {
  return s === '1' ? true : s === '0' ? false : undefined;
}
export const writeBool = (v: boolean) => (v ? '1' : '0');
export function overrides(s: string, key: RegExp): Overrides | undefined {
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
export const writeOverrides = (m: Overrides) => [...m].map(([k, v]) => `${k}:${fmt(v)}`).join(',');

/** Free text of the attention lab's kind: at most the text limit, no control characters. */
export const text = (s: string) => (s.length <= LIMITS.textChars && !/\p{Cc}/u.test(s) ? s : undefined);

/** A list of min…max numbers, each |x| ≤ abs. */
export function numList(s: string, min: number, max: number, abs: number): number[] | undefined {
  const xs = s.split(',').map((p) => num(p, -abs, abs));
  return xs.length >= min && xs.length <= max && xs.every((x) => x !== undefined) ? (xs as number[]) : undefined;
}
export const writeList = (v: number[]) => v.map(fmt).join(',');

/** One URL parameter: its name in the query, the state field it holds, and how it is read and written. */
export type Field<S> = {
  [K in keyof S]: { param: string; key: K; parse(s: string): S[K] | undefined; write(v: S[K]): string };
}[keyof S];

/** A field maker for state S: field('sx', 'logits', parse, write), with the value's type checked against S. */
export function fieldsOf<S>() {
  return <K extends keyof S>(param: string, key: K, parse: (s: string) => S[K] | undefined, write: (v: S[K]) => string): Field<S> =>
    ({ param, key, parse, write }) as unknown as Field<S>;
}

/** A lab's slice of the page's state: its defaults and its URL parameters, with any rule across them. */
export interface Slice<S> {
  /** The slice at its defaults (a new object each call: Maps inside are its own). */
  defaults(): S;
  /** Its URL parameters, in the order they are written (web/URL_STATE.md). */
  fields: Field<S>[];
  /**
   * After the whole query was read: a rule across this lab's parameters. `given`: the parameters the query set;
   * `rejected`: the names rejected so far (a rule may add its own).
   */
  afterParse?(state: S, given: ReadonlySet<string>, rejected: string[]): void;
  /** After the parameters that differ from the defaults were written: what this lab writes even at its default. */
  afterWrite?(params: URLSearchParams): void;
}
