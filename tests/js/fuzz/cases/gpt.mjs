// The small GPT: a training step on the calling thread against the same step on the workers (two models made
// alike), the forward with its attention maps, and creating a model. A rejected call must leave both models as
// they were (weights and step count).
import { bad, badFlag, badSize, pickMutation, unknownKey } from './common.mjs';
import { u } from '../../support/reference.mjs';

const TRAIN_KEYS = ['lr', 'weightDecay', 'beta1', 'beta2', 'eps', 'gradClip'];
const CONFIG_KEYS = ['vocabSize', 'context', 'dModel', 'heads', 'kvHeads', 'layers', 'mlp', 'position', 'tied', 'bias', 'seed'];

function drawConfig(r) {
  const heads = r.pick([1, 2, 4]), c = { vocabSize: r.int(2, 40), context: r.int(1, 8), dModel: heads * r.int(1, 4), heads, layers: r.int(1, 2), seed: r.int(0, 1000) };
  if (heads > 1 && r.bool(0.3)) c.kvHeads = heads / r.pick([1, 2]);
  for (const key of ['mlp', 'tied', 'bias']) if (r.bool(0.3)) c[key] = r.bool();
  if (r.bool(0.3)) c.position = r.pick(['learned', 'rope']);
  if (c.position === 'rope' && (c.dModel / heads) % 2) c.dModel *= 2;  // (rotation needs an even head width)
  return c;
}

const ints = (r, n, hi) => Int32Array.from({ length: n }, () => r.int(0, hi - 1));
const bits = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const ulp = (x) => 2 ** (Math.floor(Math.log2(Math.abs(x))) - 23);

function weights(model) {
  if (!model || !model.config) return null;
  try {
    return { steps: model.steps, weights: model.getWeights() };
  } catch {
    return null;  // disposed
  }
}

function sameWeights(a, b) {
  if (!a || !b) return a === b;
  return a.steps === b.steps && Object.keys(a.weights).every((k) => bits(a.weights[k]).equals(bits(b.weights[k])));
}

export const gpt = {
  op: 'gpt',
  fn: 'GPT',
  gpt: true,
  prefix: (a) => (a.call.kind === 'create' ? 'createGPT' : a.call.kind === 'forward' ? 'GPT.forward' : 'GPT.trainStep'),
  draw(r) {
    const config = drawConfig(r), kind = r.pick(['trainStep', 'trainStep', 'forward', 'create']);
    if (kind === 'create') return { config, call: { kind } };
    if (kind === 'forward') {
      const batch = r.int(1, 3), t = r.int(1, config.context), opts = {};
      if (batch > 1 || r.bool(0.3)) opts.batch = batch;
      if (r.bool(0.5)) opts.returnAttention = true;
      return { config, call: { kind, tokens: ints(r, batch * t, config.vocabSize), opts } };
    }
    const n = r.int(1, 4) * config.context;
    const targets = ints(r, n, config.vocabSize);
    for (let i = 1; i < n; ++i) if (r.bool(0.15)) targets[i] = -1;  // (-1: ignored; one counted at least)
    // β₁ = β₂ = 0, eps = 1: the step moves each weight by lr·g/(|g| + 1), which shows the gradient itself, and whose
    // slope in g is at most lr — what the comparison's bound needs (Adam's usual steps are nearly sign(g)·lr).
    const opts = { lr: r.pick([0.01, 0.05, 0.1]), beta1: 0, beta2: 0, eps: 1, weightDecay: 0 };
    return { config, call: { kind, tokens: ints(r, n, config.vocabSize), targets, opts } };
  },
  setup(lab, a) {
    if (a.call.kind === 'create') return { lab };
    const ctx = { lab, a: lab.createGPT(a.config), b: lab.createGPT(a.config) };
    ctx.w0 = ctx.a.getWeights();
    return ctx;
  },
  teardown(ctx) {
    ctx.a?.dispose(), ctx.b?.dispose(), ctx.made?.dispose();
  },
  sync(lab, a, ctx) {
    const { call } = a;
    if (call.kind === 'create') {
      const made = lab.createGPT(call.config ?? a.config);
      ctx.made?.dispose();
      return (ctx.made = made);
    }
    if (call.kind === 'forward') return ctx.a.forward(call.tokens, call.opts);
    return ctx.a.trainStep(call.tokens, call.targets, call.opts);
  },
  async(lab, a, ctx) {
    if (a.call.kind === 'trainStep') return ctx.b.trainStepAsync(a.call.tokens, a.call.targets, a.call.opts);
    // (no async twin: b, a's twin, must give the same bits and the same errors)
    if (a.call.kind === 'forward') return Promise.resolve().then(() => ctx.b.forward(a.call.tokens, a.call.opts));
    return null;
  },
  state: (ctx) => ({ a: weights(ctx.a), b: weights(ctx.b) }),
  sameState: (x, y) => sameWeights(x.a, y.a) && sameWeights(x.b, y.b),
  mutates: (a) => a.call.kind !== 'forward',
  // trainStep on the workers sums the parts' gradients in another order: the loss to an ulp, each weight's move
  // within the bound of gpt-async.test.mjs (each float32 gradient within 2⁻¹⁴·(max|g| + |g|) of the exact one, so
  // the two within 2⁻¹³ of that; the step's slope in g is ≤ lr; the weights rounded once more).
  compare(a, got, want, ctx) {
    if (a.call.kind !== 'trainStep') return undefined;  // (compared bit for bit)
    if (!(Math.abs(got - want) <= ulp(want))) return `loss ${got} on the workers, ${want} on the calling thread`;
    const wa = ctx.a.getWeights(), wb = ctx.b.getWeights();
    for (const key of Object.keys(ctx.w0)) {
      const da = wa[key].map((w, i) => w - ctx.w0[key][i]), db = wb[key].map((w, i) => w - ctx.w0[key][i]);
      const scale = da.reduce((m, d) => Math.max(m, Math.abs(d)), 0);
      for (let i = 0; i < da.length; ++i) {
        const tol = 2 ** -13 * (scale + Math.abs(da[i])) + 2 * ulp(wa[key][i] || 1e-30);
        if (!(Math.abs(db[i] - da[i]) <= tol)) return `${key}[${i}] moved ${db[i]} on the workers, ${da[i]} on the calling thread (bound ${tol})`;
      }
    }
    if (ctx.a.steps !== 1 || ctx.b.steps !== 1) return `steps ${ctx.a.steps} and ${ctx.b.steps} after one step`;
    return null;
  },
  check(a, got, ctx) {
    const { call } = a, c = a.config;
    if (call.kind === 'create') {
      for (const key of Object.keys(c)) if (got.config[key] !== c[key]) throw new Error(`config.${key} is ${got.config[key]}, asked for ${c[key]}`);
      return;
    }
    if (call.kind === 'trainStep') {
      if (!Number.isFinite(got) || got < 0) throw new Error(`loss ${got}`);
      return;
    }
    // The forward: logits finite; each attention map's rows are probabilities that see only earlier tokens (exact
    // zeros above the diagonal) and sum to 1 within the rounding of a float32 softmax row: t terms summed (γ(t)),
    // each a product with 1/Σ (2u), plus the exp's flush to zero of terms below 2⁻¹²⁶.
    const batch = call.opts.batch ?? 1, t = call.tokens.length / batch;
    if (got.logits.length !== call.tokens.length * c.vocabSize) throw new Error(`logits.length ${got.logits.length}`);
    const i = got.logits.findIndex((x) => !Number.isFinite(x));
    if (i >= 0) throw new Error(`logits[${i}] = ${got.logits[i]}`);
    if (!call.opts.returnAttention) return;
    if (got.attention.length !== c.layers) throw new Error(`${got.attention.length} attention maps for ${c.layers} layers`);
    const tol = (t * u) / (1 - t * u) + 2 * u * 1.01 + t * 2 ** -126;
    got.attention.forEach((map, l) => {
      for (let row = 0; row < map.length / t; ++row) {
        const q = row % t;
        let sum = 0;
        for (let j = 0; j < t; ++j) {
          const p = map[row * t + j];
          if (j > q ? p !== 0 : !(p >= 0 && p <= 1)) throw new Error(`attention[${l}] row ${row}: entry ${j} is ${p}`);
          sum += p;
        }
        if (!(Math.abs(sum - 1) <= tol)) throw new Error(`attention[${l}] row ${row} sums to ${sum}`);
      }
    });
  },
  mutate(r, a) {
    const { call, config } = a, withCall = (p) => ({ ...a, call: { ...call, ...p } });
    if (call.kind === 'create') {
      const with_ = (p) => withCall({ config: { ...config, ...p } });
      return pickMutation(r, [
        () => { const name = r.pick(['vocabSize', 'context', 'dModel', 'heads', 'layers']); return bad(`${name} left out`, with_({ [name]: undefined }), 'TypeError', [name]); },
        () => { const name = r.pick(['vocabSize', 'context', 'dModel', 'heads', 'layers', 'kvHeads']), s = badSize(r); return bad(`${name} not a size`, with_({ [name]: s.value }), s.cls, [name]); },
        () => bad('heads does not divide dModel', with_({ heads: config.dModel + 1, kvHeads: undefined }), 'RangeError', ['heads', 'dModel']),
        () => (config.heads > 1 ? bad('kvHeads does not divide heads', with_({ kvHeads: config.heads + 1 }), 'RangeError', ['kvHeads']) : null),
        () => bad('position not a kind', with_({ position: r.pick(['alibi', '']) }), 'RangeError', ['position']),
        () => { const key = r.pick(['mlp', 'tied', 'bias']); return bad(`${key} not a boolean`, with_({ [key]: badFlag(r) }), 'TypeError', [key]); },
        () => bad('seed not a 32-bit integer', with_({ seed: r.pick([-1, 1.5, 2 ** 32]) }), 'RangeError', ['seed']),
        () => { const k = unknownKey(r, CONFIG_KEYS); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
        () => bad('a model past 2^31 parameters', with_({ vocabSize: 2 ** 24, dModel: 256 * config.heads }), 'RangeError', ['vocabSize', 'dModel', 'context', 'layers'], 'past2^31'),
      ]);
    }
    if (call.kind === 'forward') {
      const with_ = (p) => withCall({ opts: { ...call.opts, ...p } });
      const batch = call.opts.batch ?? 1;
      return pickMutation(r, [
        () => bad('tokens not an Int32Array', withCall({ tokens: r.pick([Array.from(call.tokens), Float32Array.from(call.tokens)]) }), 'TypeError', ['tokens']),
        () => bad('a token past the vocabulary', withCall({ tokens: call.tokens.map((x, i) => (i === 0 ? config.vocabSize : x)) }), 'RangeError', ['tokens']),
        () => bad('a negative token', withCall({ tokens: call.tokens.map((x, i) => (i === call.tokens.length - 1 ? -1 : x)) }), 'RangeError', ['tokens']),
        () => (batch > 1 ? bad('tokens not whole sequences', withCall({ tokens: call.tokens.slice(1) }), 'RangeError', ['tokens', 'batch']) : null),
        () => bad('sequences longer than the context', withCall({ tokens: new Int32Array(batch * (config.context + 1)) }), 'RangeError', ['tokens', 'context']),
        () => { const s = badSize(r); return bad('batch not a size', with_({ batch: s.value }), s.cls, ['batch']); },
        () => bad('returnAttention not a boolean', with_({ returnAttention: badFlag(r) }), 'TypeError', ['returnAttention']),
        () => { const k = unknownKey(r, ['batch', 'returnAttention']); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      ]);
    }
    const with_ = (p) => withCall({ opts: { ...call.opts, ...p } });
    const n = call.tokens.length;
    return pickMutation(r, [
      () => bad('tokens not an Int32Array', withCall({ tokens: r.pick([Array.from(call.tokens), Float32Array.from(call.tokens), Uint32Array.from(call.tokens)]) }), 'TypeError', ['tokens']),
      () => bad('targets not an Int32Array', withCall({ targets: Float64Array.from(call.targets) }), 'TypeError', ['targets']),
      () => bad('targets of another length', withCall({ targets: call.targets.slice(1) }), 'RangeError', ['targets']),
      () => (config.context > 1 ? bad('tokens not whole sequences', withCall({ tokens: call.tokens.slice(0, n - 1), targets: call.targets.slice(0, n - 1) }), 'RangeError', ['tokens', 'context']) : null),
      () => bad('a token past the vocabulary', withCall({ tokens: call.tokens.map((x, i) => (i === n - 1 ? config.vocabSize + r.int(0, 3) : x)) }), 'RangeError', ['tokens']),
      () => bad('a negative token', withCall({ tokens: call.tokens.map((x, i) => (i === 0 ? -1 : x)) }), 'RangeError', ['tokens']),
      () => bad('a target below −1 or past the vocabulary', withCall({ targets: call.targets.map((x, i) => (i === n - 1 ? r.pick([-2, config.vocabSize]) : x)) }), 'RangeError', ['targets']),
      () => bad('no target counted', withCall({ targets: call.targets.map(() => -1) }), 'RangeError', ['targets']),
      () => { const key = r.pick(TRAIN_KEYS); return bad(`${key} not finite`, with_({ [key]: r.pick([Number.NaN, Infinity]) }), 'RangeError', [key]); },
      () => bad('beta1 not in [0, 1)', with_({ beta1: r.pick([1, 1.5, -0.1]) }), 'RangeError', ['beta1']),
      () => bad('eps not positive', with_({ eps: r.pick([0, -1]) }), 'RangeError', ['eps']),
      () => bad('lr negative', with_({ lr: -0.1 }), 'RangeError', ['lr']),
      () => { const key = r.pick(TRAIN_KEYS); return bad(`${key} not a number`, with_({ [key]: r.pick(['0.1', null]) }), 'TypeError', [key]); },
      () => { const k = unknownKey(r, TRAIN_KEYS); return bad('unknown option', with_({ [k]: 1 }), 'TypeError', [k]); },
      () => bad('options not an object', withCall({ opts: r.pick([null, 5]) }), 'TypeError', ['options']),
    ]);
  },
};
