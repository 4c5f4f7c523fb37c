// Disposing during calls: a lab disposed while an async twin runs (the call rejects with an Error when its work was
// on the workers, resolves with the calling thread's bits when it never left it, and writes nothing into `out`
// when it rejects; later twins reject, the synchronous functions keep working, dispose() again is harmless); a
// model disposed during its trainStepAsync; a lab disposed during a model's trainStepAsync.
import { clone } from '../json.mjs';
import { attention } from './attention.mjs';
import { attentionBackward } from './attention-backward.mjs';
import { gpt } from './gpt.mjs';
import { matmul } from './matmul.mjs';
import { multiHeadAttention } from './multihead.mjs';
import { rope } from './rope.mjs';
import { softmax, softmaxBackward } from './softmax.mjs';

const OPS = { softmax, softmaxBackward, matmul, rope, attention, attentionBackward, multiHeadAttention };

const settle = (p) => Promise.resolve(p).then((value) => ({ value }), (error) => ({ error }));
const describeError = (e) => `${e?.constructor?.name}: ${e?.message}`;

export const dispose = {
  op: 'dispose',
  fn: 'dispose',
  draw(r) {
    const kind = r.pick(['lab', 'lab', 'lab', 'model', 'labStep']);
    if (kind === 'lab') {
      const name = r.pick(Object.keys(OPS));
      return { kind, name, args: OPS[name].draw(r) };
    }
    const g = gpt.draw(r);
    for (let i = 0; i < 4 && g.call.kind !== 'trainStep'; ++i) Object.assign(g, gpt.draw(r));
    return g.call.kind === 'trainStep' ? { kind, step: g } : { kind: 'lab', name: 'softmax', args: softmax.draw(r) };
  },
  mutate: () => null,
  // Runs the case itself (it needs labs of its own); returns its failures.
  async run(env, c) {
    const failures = [], fail = (check, detail) => failures.push({ check, detail });
    const a = c.args;
    if (a.kind === 'lab') {
      const op = OPS[a.name];
      const lab = await env.freshLab(c);
      try {
        const want = op.sync(lab, clone(a.args));
        const aArgs = clone(a.args), out = op.outs?.(aArgs).find((o) => ArrayBuffer.isView(o));
        const before = out && Buffer.from(out.buffer).slice();
        // Whether the twin sent the call to the workers: a call it keeps on the calling thread is counted as kept
        // when it starts (lab.threadStats()).
        const kept = lab.threadStats().inlineCalls;
        const call = op.async(lab, aArgs);
        const willCut = lab.threadStats().inlineCalls === kept;
        lab.dispose();
        const got = await settle(call);
        if (willCut) {
          if (!got.error) fail('a call on the workers resolved after dispose()', 'it should reject');
          else if (!(got.error instanceof Error && /disposed/.test(got.error.message))) fail('dispose() rejection does not say so', describeError(got.error));
          if (out && !Buffer.from(out.buffer).equals(before)) fail('wrote into out', `${op.op}'s async twin wrote into out, then rejected after dispose()`);
        } else if (got.error) {
          fail('a call on the calling thread rejected after dispose()', describeError(got.error));
        } else if (env.differs(got.value, want)) {
          fail('async differs from sync', `after dispose(): ${env.differs(got.value, want)}`);
        }
        const later = await settle((() => { try { return op.async(lab, clone(a.args)); } catch (e) { return Promise.reject(e); } })());
        if (!later.error || !/disposed/.test(later.error.message)) fail('an async twin after dispose() did not reject', later.error ? describeError(later.error) : 'it resolved');
        const again = op.sync(lab, clone(a.args));
        if (env.differs(again, want)) fail('the synchronous function changed after dispose()', env.differs(again, want));
        lab.dispose();
      } catch (e) {
        fail('threw', describeError(e));
        lab.dispose();
      }
      return failures;
    }
    const { config, call } = a.step;
    if (a.kind === 'model') {
      const lab = await env.lab({ ...c, op: 'gpt' });
      const model = lab.createGPT(config), other = lab.createGPT(config);
      const p = settle(model.trainStepAsync(call.tokens, call.targets, call.opts));
      model.dispose();
      const got = await p;
      if (!got.error || !/disposed/.test(got.error.message)) fail('a step of a model disposed during it did not reject', got.error ? describeError(got.error) : `it resolved with ${got.value}`);
      const sync = settle((() => { try { return model.trainStep(call.tokens, call.targets, call.opts); } catch (e) { return Promise.reject(e); } })());
      const s = await sync;
      if (!s.error || !/disposed/.test(s.error.message)) fail('a disposed model still trains', s.error ? describeError(s.error) : 'it returned');
      model.dispose();
      const o = await settle(other.trainStepAsync(call.tokens, call.targets, call.opts));
      if (o.error || !Number.isFinite(o.value)) fail('another model of the lab no longer trains', o.error ? describeError(o.error) : `loss ${o.value}`);
      other.dispose();
      return failures;
    }
    const lab = await env.freshLab({ ...c, op: 'gpt' });
    const model = lab.createGPT(config);
    const p = settle(model.trainStepAsync(call.tokens, call.targets, call.opts));
    lab.dispose();
    const got = await p;
    if (!got.error || !/disposed/.test(got.error.message)) fail('a step during the lab\u2019s dispose() did not reject', got.error ? describeError(got.error) : `it resolved with ${got.value}`);
    if (model.steps !== 0) fail('the step was applied', `steps ${model.steps}`);
    try {
      if (!Number.isFinite(model.trainStep(call.tokens, call.targets, call.opts))) fail('trainStep after dispose()', 'not a finite loss');
    } catch (e) {
      fail('trainStep after the lab\u2019s dispose() threw', describeError(e));
    }
    const later = await settle(model.trainStepAsync(call.tokens, call.targets, call.opts));
    if (!later.error || !/disposed/.test(later.error.message)) fail('trainStepAsync after dispose() did not reject', later.error ? describeError(later.error) : 'it resolved');
    model.dispose();
    return failures;
  },
};
