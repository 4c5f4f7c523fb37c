// What every consumer app runs, through whichever entry and tool chain it was built with: both modules,
// one softmax and one attention call with known answers (checked by tests/consumers/support.mjs).
export async function check(init) {
  const lab = await init();
  const p = lab.softmax(new Float32Array([0, Math.log(3)]));
  const { output, weights } = lab.attention({
    q: new Float32Array([1]), k: new Float32Array([0, 0]), v: new Float32Array([10, 20]), dk: 1, returnWeights: true,
  });
  const scalar = await init({ simd: false });
  return {
    backend: lab.backend, version: lab.buildInfo().version, p: Array.from(p), output: Array.from(output),
    weights: Array.from(weights), scalar: scalar.backend, scalarP: Array.from(scalar.softmax(new Float32Array([0, Math.log(3)]))),
  };
}

/** check() that never rejects: an error becomes { error } (what a page or a worker reports back). */
export function report(init) {
  return check(init).catch((e) => ({ error: String((e && e.message) || e) }));
}
