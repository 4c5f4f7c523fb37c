// Number formatting for display. Tables keep ASCII minus signs so copied numbers paste into spreadsheets.

/** Compact display: 3 decimals for everyday magnitudes, exponent notation for tiny or huge ones. */
export function fmt(v: number, digits = 3): string {
  if (v === Number.NEGATIVE_INFINITY) return '−∞';
  if (v === Number.POSITIVE_INFINITY) return '∞';
  if (Number.isNaN(v)) return 'NaN';
  if (v === 0) return '0';
  const a = Math.abs(v);
  // A float32 value written as 10^-digits (0.01 is stored as 0.0099999998) is no tiny number: it prints as 0.01.
  if (a < 10 ** -digits * (1 - 2 ** -20) || a >= 1e5) return v.toExponential(2).replace('e+', 'e');
  return v.toFixed(digits).replace(/\.?0+$/, '') || '0';
}

/** Probabilities get enough digits to tell 0.999955 from 1 (the [100, 110] example of “Self-attention”). */
export function fmtProb(p: number): string {
  if (p === 0 || p === 1) return String(p);  // exactly 0 or 1 (float32 rounds to them), not 1.0000 beside a 0.999955
  if (p < 1e-4) return p.toExponential(2);
  if (p > 0.9999 && p < 1) return p.toFixed(6);
  return p.toFixed(4);
}

/** Exact text of a float32 value for data-value attributes (round-trips through Number()). */
export function exact(v: number): string {
  return String(v);
}

export function shape(rows: number, cols: number): string {
  return `${rows} × ${cols}`;
}

/** A whole number as Unicode subscript digits: 12 → "₁₂" (token and key indices in running text). */
export function sub(n: number): string {
  return String(n).replace(/\d/g, (d) => '₀₁₂₃₄₅₆₇₈₉'[Number(d)]);
}

/** A vector as "[0.1, −2.3]" with `digits` decimals (display only). */
export function vec(xs: ArrayLike<number>, digits = 3): string {
  return `[${Array.from(xs, (x) => fmt(x, digits)).join(', ')}]`;
}

/** A vector short enough to read: whole up to `max` numbers, else its first few, “…”, its last and its length. */
export function vecBrief(xs: ArrayLike<number>, digits = 3, max = 8): string {
  if (xs.length <= max) return vec(xs, digits);
  const a = Array.from(xs);
  return `[${a.slice(0, 3).map((x) => fmt(x, digits)).join(', ')}, …, ${fmt(a[a.length - 1], digits)}] (${a.length} numbers)`;
}
