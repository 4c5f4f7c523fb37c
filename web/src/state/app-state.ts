// The explorer's whole state: plain data, small enough to live in the URL (web/URL_STATE.md). Each lab defines its
// own slice (its fields, defaults, URL parameters and limits) beside its code, in labs/*/state.ts; this file only
// puts the slices together, in the order the URL writes their parameters.
import { attentionSlice, causalSlice, multiheadSlice, sqrtDkSlice, type AttentionState, type CausalState, type MultiheadState, type SqrtDkState } from '../labs/attention/state';
import { costSlice, type CostState } from '../labs/cost/state';
import { asymSlice, kvLookupSlice, pullSlice, spacesSlice, type AsymState, type KvLookupState, type PullState, type SpacesState } from '../labs/intuition/state';
import { learnSlice, type LearnState } from '../labs/learn/state';
import { modelViewSlice, type ModelViewState } from '../labs/model-view/state';
import { softmaxSlice, stabilitySlice, type SoftmaxState, type StabilityState } from '../labs/softmax/state';
import type { Field, Slice } from './params';

export type AppState = SoftmaxState & AttentionState & MultiheadState & KvLookupState & PullState & SqrtDkState & CausalState
  & AsymState & SpacesState & StabilityState & CostState & LearnState & ModelViewState;

/** Every lab's slice, in the order the URL (and a state file) writes their parameters. */
export const SLICES = [
  softmaxSlice, attentionSlice, multiheadSlice, kvLookupSlice, pullSlice, sqrtDkSlice, causalSlice, asymSlice, spacesSlice,
  stabilitySlice, costSlice, learnSlice, modelViewSlice,
] as unknown as Slice<AppState>[];

/** The parameter table, every lab's in turn; its order is the order parameters are written in. */
export const FIELDS: Field<AppState>[] = SLICES.flatMap((s) => s.fields);

export function defaultState(): AppState {
  return Object.assign({}, ...SLICES.map((s) => s.defaults())) as AppState;
}
