// Colour scales. Both are readable with the common colour-vision deficiencies:
// viridis (sequential, for weights in [0, 1]) and a blue–white–orange diverging scale (for signed values).
// Colours come from 256-entry lookup tables (with the matching text colour), so recolouring a few thousand
// cells on each edit costs an array read per cell.
import { color, interpolateRgbBasis, interpolateViridis } from 'd3';

export type Palette = 'seq' | 'div' | 'none';

const blueOrange = interpolateRgbBasis(['#1d4e89', '#5b93c7', '#f4f4f4', '#f2a65a', '#b35806']);
const STEPS = 256;

/**
 * Black or white text, whichever contrasts more with the background (WCAG 2 contrast ratios). Against pure black
 * and white the better of the two is never below 4.58:1 (at background luminance 0.179), so every cell meets the
 * 4.5:1 minimum for normal text; a softer #111 would fall to 4.35:1 around that point.
 */
export function inkFor(background: string): string {
  const c = color(background)?.rgb();
  if (!c) return 'inherit';
  const lin = (u: number) => {
    const s = u / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const L = 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  const onBlack = (L + 0.05) / 0.05, onWhite = 1.05 / (L + 0.05);
  return onBlack >= onWhite ? '#000' : '#fff';
}

function table(interp: (t: number) => string): { bg: string[]; ink: string[] } {
  const bg = Array.from({ length: STEPS }, (_, i) => color(interp(i / (STEPS - 1)))!.formatHex());
  return { bg, ink: bg.map(inkFor) };
}
const LUT = { seq: table(interpolateViridis), div: table(blueOrange) };

export interface Scale {
  palette: Palette;
  /** Domain: [0, max] for sequential, [-max, max] for diverging. */
  max: number;
  colour(v: number): string;
  ink(v: number): string;
}

/** Rounds a domain bound up to 1, 2 or 5 × 10ᵏ, so small edits rarely shift every colour. */
function niceMax(x: number): number {
  const p = 10 ** Math.floor(Math.log10(x));
  const f = x / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

export function makeScale(palette: Palette, values: ArrayLike<number>, fixedMax?: number): Scale {
  let max = fixedMax ?? 0;
  if (fixedMax === undefined) {
    for (let i = 0; i < values.length; i++) {
      const a = Math.abs(values[i]);
      if (Number.isFinite(a) && a > max) max = a;
    }
    max = max === 0 ? 1 : niceMax(max);
  }
  const index = (v: number): number => {
    const t = palette === 'seq' ? v / max : (v / max + 1) / 2;
    return Math.round(Math.min(1, Math.max(0, t)) * (STEPS - 1));
  };
  const lut = palette === 'none' ? undefined : LUT[palette];
  return {
    palette,
    max,
    colour: (v) => (!Number.isFinite(v) ? 'var(--masked)' : lut ? lut.bg[index(v)] : 'transparent'),
    ink: (v) => (!Number.isFinite(v) || !lut ? 'inherit' : lut.ink[index(v)]),
  };
}
