// The cost lab's URL state (web/URL_STATE.md): tokens, model width, heads, layers and bytes per number (cn, cd, ch,
// cl, cb), within the cost model's own bounds (model/cost.ts).
import { COST_LIMITS } from '../../model/cost';
import { fieldsOf, int, type Slice } from '../../state/params';

export interface CostState {
  costN: number;
  costD: number;
  costHeads: number;
  costLayers: number;
  costBytes: number;
}

const costField = fieldsOf<CostState>();
const within = (lim: { min: number; max: number }) => (s: string) => int(s, lim.min, lim.max);
export const costSlice: Slice<CostState> = {
  // “Self-attention”'s example (n = 8k, d = 4k, fp32) with a typical 7B shape
  defaults: () => ({ costN: 8192, costD: 4096, costHeads: 32, costLayers: 32, costBytes: 4 }),
  fields: [
    costField('cn', 'costN', within(COST_LIMITS.n), String),
    costField('cd', 'costD', within(COST_LIMITS.d), String),
    costField('ch', 'costHeads', within(COST_LIMITS.heads), String),
    costField('cl', 'costLayers', within(COST_LIMITS.layers), String),
    costField('cb', 'costBytes', (s) => {
      const v = int(s, 1, 4);
      return v !== undefined && COST_LIMITS.bytes.includes(v) ? v : undefined;
    }, String),
  ],
};
