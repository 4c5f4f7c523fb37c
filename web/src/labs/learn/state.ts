// The learn lab's URL state (web/URL_STATE.md: lt, ll, lh, ld, lr, ls): the task on screen, its model's settings
// (null: the task's own default, model/train-tasks.ts, so a link names only what was changed) and the words task's
// sentence. Training itself is never in the URL.
import { TASKS, type ModelChoice, type TaskName } from '../../model/train-tasks';
import { fieldsOf, int, num, orNull, text, writeOrNull, type Slice } from '../../state/params';

export const LEARN_LIMITS = {
  layers: { min: 1, max: 4 },
  heads: { min: 1, max: 8 },
  dModel: [16, 32, 48, 64, 96, 128],
  lr: { min: 1e-4, max: 3e-2 },
} as const;

export interface LearnState {
  learnTask: TaskName;
  learnLayers: number | null;
  learnHeads: number | null;
  learnDModel: number | null;
  learnLr: number | null;
  /** The words task's example sentence. */
  learnSentence: string;
}

/** The learn lab's model settings as the state gives them: its task's defaults where the state says null. */
export function learnModel(state: LearnState): { layers: number; heads: number; dModel: number; lr: number } {
  const d = TASKS[state.learnTask].defaults;
  return {
    layers: state.learnLayers ?? d.layers,
    heads: state.learnHeads ?? d.heads,
    dModel: state.learnDModel ?? d.dModel,
    lr: state.learnLr ?? d.lr,
  };
}

const learnField = fieldsOf<LearnState>();
export const learnSlice: Slice<LearnState> = {
  defaults: () => ({
    learnTask: 'induction',
    learnLayers: null,
    learnHeads: null,
    learnDModel: null,
    learnLr: null,
    learnSentence: 'the capital of Spain is',
  }),
  fields: [
    learnField('lt', 'learnTask', (s) => (Object.hasOwn(TASKS, s) ? (s as TaskName) : undefined), (v) => v),
    learnField('ll', 'learnLayers', orNull((s) => int(s, LEARN_LIMITS.layers.min, LEARN_LIMITS.layers.max)), writeOrNull),
    learnField('lh', 'learnHeads', orNull((s) => int(s, LEARN_LIMITS.heads.min, LEARN_LIMITS.heads.max)), writeOrNull),
    learnField('ld', 'learnDModel', orNull((s) => {
      const v = int(s, 1, 1024);
      return v !== undefined && (LEARN_LIMITS.dModel as readonly number[]).includes(v) ? v : undefined;
    }), writeOrNull),
    learnField('lr', 'learnLr', orNull((s) => num(s, LEARN_LIMITS.lr.min, LEARN_LIMITS.lr.max)), writeOrNull),
    learnField('ls', 'learnSentence', text, (v) => v),
  ],
  // The heads must divide d_model (each head is d_model / heads wide): heads that do not are invalid there and
  // fall back to the task's default (which divides every d_model offered).
  afterParse(state, _given, rejected) {
    const model = learnModel(state);
    if (model.dModel % model.heads !== 0) {
      rejected.push('lh');
      state.learnHeads = null;
    }
  },
};

/** The state's keys of this lab. */
export const LEARN_KEYS = Object.keys(learnSlice.defaults()) as (keyof LearnState)[];

/**
 * What the lab shows, as its URL state: each setting null where it is the task's default (a link names only
 * changes). A size whose heads do not divide d_model is no model: the state keeps the last size of this task that
 * was one (`stored`: the state now), or, just switched to this task, its defaults.
 */
export function learnStateOf(task: TaskName, model: ModelChoice, sentence: string, isModel: boolean, stored: LearnState): Partial<LearnState> {
  const d = TASKS[task].defaults;
  const or = (v: number, def: number) => (v === def ? null : v);
  const size = isModel ? { learnLayers: or(model.layers, d.layers), learnHeads: or(model.heads, d.heads), learnDModel: or(model.dModel, d.dModel) }
    : stored.learnTask === task ? {} : { learnLayers: null, learnHeads: null, learnDModel: null };
  return { learnTask: task, ...size, learnLr: or(model.lr, d.lr), learnSentence: sentence };
}
