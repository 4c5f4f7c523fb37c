// The plain-JS baseline behind the same adapter interface: the explorer's speed lab's own file, so the page and
// the bench time the same code.
import { attention, softmax } from '../../web/src/workers/plainjs.mjs';

export async function create() {
  return {
    info: {
      library: 'plain JS', version: process.version,
      how: 'Float32Array, 4×4 register blocks, key tiles of 64 with online softmax, causal blocks stop at the diagonal (the same code as the explorer\'s speed lab)',
    },
    attention({ q, k, v, n, d, causal, scale }) {
      return { run: () => attention(q, k, v, n, n, d, d, causal, scale) };
    },
    softmax({ x, cols }) {
      return { run: () => softmax(x, cols) };
    },
  };
}
