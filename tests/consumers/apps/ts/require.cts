// CommonJS TypeScript requiring the ES module package (module nodenext, TypeScript ≥ 5.8, Node ^20.19 / >=22.12).
import attnlab = require('attnlab');
import inline = require('attnlab/inline');

export async function viaRequire(): Promise<number> {
  const lab = await attnlab.init();
  const { weights } = lab.attention({ q: new Float32Array(4), k: new Float32Array(8), v: new Float32Array(8), dk: 2, returnWeights: true });
  return weights.length + (await inline.init()).softmax(new Float32Array([1])).length;
}
