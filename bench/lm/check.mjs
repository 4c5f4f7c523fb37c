// The LM bench's self-check (`node bench/lm/run.mjs --check`, run by tests/js/lm-bench-check.test.mjs): on a
// 3-layer model, every runtime's logits against the float64 forward (bench/lm/gpt2_reference.py) within the
// bound derived there from float32 arithmetic — the prefill over the whole sequence, and each decode step's
// where the runtime hands its logits over — and greedy tokens equal to float64's, every one of which the bound
// decides (so a runtime within the bound cannot choose another).
import path from 'node:path';
import { prompt as makePrompt, reference } from './files.mjs';

const PROMPT = 12, STEPS = 20;

/** max |got − ref| / bound over all elements (NaN or ±Infinity in got: Infinity), and the largest |got − ref|. */
export function compareLogits(got, ref, bound) {
  if (!got || got.length !== ref.length) return { maxErrOverBound: Infinity, maxAbsErr: Infinity, why: `${got?.length ?? 'no'} values for ${ref.length}` };
  let worst = 0, maxAbsErr = 0;
  for (let i = 0; i < ref.length; ++i) {
    const e = Math.abs(got[i] - ref[i]);
    if (!(e <= maxAbsErr)) maxAbsErr = Number.isNaN(e) ? Infinity : e;
    const r = e / bound[i];
    if (!(r <= worst)) worst = Number.isNaN(r) ? Infinity : r;
  }
  return { maxErrOverBound: worst, maxAbsErr };
}

export async function runCheck({ ck, startAll, ask, log, workers }) {
  const { config } = ck.manifest;
  const ids = makePrompt(PROMPT, config.vocab_size);
  log(`model: ${config.n_layer} layers, d ${config.n_embd}, ${config.n_head} heads, vocabulary ${config.vocab_size} (${ck.manifest.parameters} parameters, seed ${ck.manifest.seed}), ${path.basename(ck.dir)}`);
  const refs = {};
  let ok = true;
  for (const dtype of ['F32', 'F16', 'BF16']) {
    refs[dtype] = reference(ck.dir, dtype, ids, { steps: STEPS }, log);
    const undecided = refs[dtype].decided.indexOf(false);
    // A greedy step the bound does not decide could legitimately go either way: the check needs none.
    if (undecided >= 0) { log(`  ${dtype} reference: greedy step ${undecided} is within the bound of a tie; the check's prompt or seed must change`); ok = false; }
  }
  const r = refs.F32;
  log(`prompt ${PROMPT} tokens, ${STEPS} greedy tokens (float64: ${r.greedy.join(' ')}); bound up to ${r.maxBound.toExponential(2)} on logits up to ${r.logitScale.toFixed(2)}`);
  await startAll(ck);
  log('');
  for (const w of workers) {
    const name = `${w.label} ${w.dtype}`.padEnd(22);
    if (w.missing) {
      // Only attnlab may be missing, and only while its package has no loadModel (adapters/attnlab.mjs).
      if (w.runtime === 'attnlab') log(`  ${name} skipped: ${w.missing}`);
      else { log(`  ${name} FAILED: ${w.missing}`); ok = false; }
      continue;
    }
    if (w.failed || !w.load) { log(`  ${name} FAILED: ${w.failed ?? 'not loaded'}`); ok = false; continue; }
    const ref = refs[w.dtype];
    const sequence = [...ids, ...ref.greedy.slice(0, -1)];
    const p = await ask(w, { type: 'prefill', ids: sequence, reps: 1, warmup: 0, rows: sequence.map((_, i) => i), vocab: config.vocab_size });
    const g = p.failed ? p : await ask(w, { type: 'generate', ids, steps: STEPS, keepLogits: true });
    if (p.failed || g.failed) { log(`  ${name} FAILED: ${p.failed ?? g.failed}`); ok = false; continue; }
    const prefill = compareLogits(p.rows.flat(), ref.logits, ref.bound);
    // The step that chose token t read the logits of row PROMPT − 1 + t.
    const V = config.vocab_size, from = (PROMPT - 1) * V;
    const steps = g.stepLogits ? compareLogits(g.stepLogits.flat(), ref.logits.subarray(from), ref.bound.subarray(from)) : null;
    let same = 0;
    while (same < STEPS && g.tokens[same] === ref.greedy[same]) ++same;
    const good = prefill.maxErrOverBound <= 1 && (!steps || steps.maxErrOverBound <= 1) && same === STEPS && g.tokens.length === STEPS;
    ok &&= good;
    log(`  ${name} ${good ? 'ok    ' : 'FAILED'}  prefill of ${sequence.length}: max |err| ${prefill.maxAbsErr.toExponential(2)} = ${prefill.maxErrOverBound.toFixed(3)} of the bound` +
      `${steps ? `; decode steps: ${steps.maxErrOverBound.toFixed(3)} of the bound` : '; decode steps: logits not handed over'}; greedy ${same}/${STEPS} tokens equal` +
      `${same < STEPS ? ` (got ${g.tokens.join(' ')})` : ''}`);
  }
  return ok;
}
