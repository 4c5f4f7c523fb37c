// The one place the page loads the attnlab engine. Every number the labs show comes from the functions
// returned here; the page never re-implements softmax or attention in JS.
import { init } from 'attnlab';

/** The subset of the package API the explorer uses (checked against the package's own types at build). */
export interface Engine {
  backend: string;
  softmax(x: Float32Array, opts: { cols: number; temperature?: number; log?: boolean }): Float32Array;
  attention(opts: {
    q: Float32Array; k: Float32Array; v: Float32Array;
    nq: number; nk: number; dk: number; dv: number;
    causal?: boolean; scale?: number; mask?: Float32Array | null;
    returnScores?: boolean; returnWeights?: boolean; returnRawScores?: boolean;
  }): { output: Float32Array; scores?: Float32Array; weights?: Float32Array; rawScores?: Float32Array };
  multiHeadAttention(opts: {
    x: Float32Array; n: number; dModel: number; heads: number; kvHeads?: number; dk: number; dv: number;
    wq: Float32Array; wk: Float32Array; wv: Float32Array; wo: Float32Array;
    causal?: boolean; scale?: number; returnIntermediates?: boolean;
  }): {
    output: Float32Array; concat?: Float32Array;
    heads?: { q: Float32Array; k: Float32Array; v: Float32Array; scores: Float32Array; weights: Float32Array; output: Float32Array }[];
  };
  buildInfo(): { version: string; backend: string; simd: boolean; kernels?: unknown };
}

let loading: Promise<Engine> | undefined;

/** Loads the engine once; later calls share the same instance. */
export function loadEngine(): Promise<Engine> {
  // No cast: if the package's types drift from what the page uses, the type check fails.
  loading ??= init().then((lab): Engine => lab);
  return loading;
}
