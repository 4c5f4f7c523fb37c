// trainStep's arguments, shared by GPT.trainStep (gpt.js) and GPT.trainStepAsync (gpt-async.js): types checked
// here, values by the engine, written into a descriptor of gptTrainStep or gptApplyGradients. A module of its own
// so that gpt.js and gpt-async.js import it, not each other.
import { option } from './call.js';
import { checkKeys, int32Array, optionalNumber, options } from './checks.js';

export const TRAIN_OPTIONS = ['lr', 'weightDecay', 'beta1', 'beta2', 'eps', 'gradClip'];
const TRAIN_FIELDS = ['lr', 'weight_decay', 'beta1', 'beta2', 'eps', 'grad_clip'];

/**
 * trainStep's arguments type-checked and written into a descriptor of gptTrainStep or gptApplyGradients (the
 * engine fills in AdamW's defaults and checks the values); returns the tensors.
 */
export function trainArgs(fn, call, d, tokens, targets, opts = {}) {
  int32Array(fn, 'tokens', tokens);
  int32Array(fn, 'targets', targets);
  writeTrainOptions(fn, call, d, opts);
  return { tokens, targets };
}

export function writeTrainOptions(fn, call, d, opts = {}) {
  options(fn, opts);
  checkKeys(fn, opts, TRAIN_OPTIONS);
  TRAIN_OPTIONS.forEach((key, i) => option(d, call.F[TRAIN_FIELDS[i]], optionalNumber(fn, key, opts[key])));
}
