// Float32 values as text: what the exports (CSV, JSON) and the NumPy code write for every number.

/** Shortest decimal that reads back (decimal → double → float32) as the same float32; other doubles in full. */
export function f32repr(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  if (Object.is(v, -0)) return '-0';
  // A value that is not a float32 (a float64 computed in JS) keeps every digit of its double.
  if (Math.fround(v) !== v) return String(v);
  for (let p = 1; p <= 9; p++) {
    const s = v.toPrecision(p);
    if (Math.fround(Number(s)) === v) return String(Number(s)); // String(Number()) drops "e+0" and trailing zeros
  }
  return String(v); // unreachable: 9 significant digits always round-trip a float32
}
