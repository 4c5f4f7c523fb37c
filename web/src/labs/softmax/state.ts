// The softmax labs' URL state (web/URL_STATE.md): the softmax lab's logits and temperature (sx, st), and the
// numerical-stability figure's logits (nx).
import { LIMITS, fieldsOf, fmt, num, numList, writeList, type Slice } from '../../state/params';

export const SOFTMAX_LIMITS = {
  logits: { min: 2, max: 12, abs: 1000 },
  stab: { min: 2, max: 8, abs: 1000 },
} as const;

export interface SoftmaxState {
  logits: number[];
  smTemp: number;
}

const softmaxField = fieldsOf<SoftmaxState>();
export const softmaxSlice: Slice<SoftmaxState> = {
  defaults: () => ({ logits: [4, -1, 2.1], smTemp: 1 }),
  fields: [
    softmaxField('sx', 'logits', (s) => {
      const { min, max, abs } = SOFTMAX_LIMITS.logits;
      const xs = s.split(',').map((p) => num(p, -abs, abs));
      return xs.length >= min && xs.length <= max && xs.every((x) => x !== undefined) ? (xs as number[]) : undefined;
    }, writeList),
    softmaxField('st', 'smTemp', (s) => num(s, LIMITS.temp.min, LIMITS.temp.max), fmt),
  ],
};

export interface StabilityState {
  stabLogits: number[];
}

const stabilityField = fieldsOf<StabilityState>();
export const stabilitySlice: Slice<StabilityState> = {
  defaults: () => ({ stabLogits: [90, 100, 110] }),
  fields: [
    stabilityField('nx', 'stabLogits', (s) => numList(s, SOFTMAX_LIMITS.stab.min, SOFTMAX_LIMITS.stab.max, SOFTMAX_LIMITS.stab.abs), writeList),
  ],
};
