// What every consumer app runs, through whichever entry and tool chain it was built with: both modules (SIMD and
// scalar), one softmax and one attention call with known answers, and where each module came from (checked by
// tests/consumers/support.mjs).
// check(init, { gpt: true }) loads the variant with the small GPT instead and also trains it one step and
// generates from it; without gpt, the lab's createGPT must refuse and say how to load it.
export async function check(init, { gpt = false } = {}) {
  const lab = await init(gpt ? { gpt } : undefined);
  const p = lab.softmax(new Float32Array([0, Math.log(3)]));
  const { output, weights } = lab.attention({
    q: new Float32Array([1]), k: new Float32Array([0, 0]), v: new Float32Array([10, 20]), dk: 1, returnWeights: true,
  });
  const scalar = await init({ simd: false, ...(gpt ? { gpt } : {}) });
  const r = {
    backend: lab.backend, version: lab.buildInfo().version, p: Array.from(p), output: Array.from(output),
    weights: Array.from(weights), scalar: scalar.backend, scalarP: Array.from(scalar.softmax(new Float32Array([0, Math.log(3)]))),
    // Where each module came from ('file' or 'inline') and, where attnlab fell back to its inline copy, why.
    source: lab.buildInfo().source, scalarSource: scalar.buildInfo().source,
    fallback: lab.buildInfo().fallback, scalarFallback: scalar.buildInfo().fallback,
  };
  const config = { vocabSize: 5, context: 4, dModel: 8, heads: 2, layers: 1, seed: 7 };
  if (!gpt) {
    try {
      lab.createGPT(config);
      r.gptRefusal = 'createGPT did not throw';
    } catch (e) {
      r.gptRefusal = String(e.message);
    }
    return r;
  }
  for (const [name, l] of [['gpt', lab], ['scalarGpt', scalar]]) {
    const model = l.createGPT(config);
    const loss = model.trainStep(new Int32Array([0, 1, 2, 3]), new Int32Array([1, 2, 3, 4]));
    r[name] = { parameters: model.parameterCount, loss, tokens: Array.from(model.generate(new Int32Array([0]), { maxTokens: 3, seed: 1 })) };
    model.dispose();
  }
  return r;
}

/** check() that never rejects: an error becomes { error } (what a page or a worker reports back). */
export function report(init, options) {
  return check(init, options).catch((e) => ({ error: String((e && e.message) || e) }));
}
