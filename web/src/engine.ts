// The one place the page loads the attnlab engine. Every softmax, attention and matrix product the labs show
// comes from the functions returned here; what the page computes itself is listed in docs/explorer.md.
import { wasmFiles } from './engine-files';
import { initFrom } from './wasm-files';
import type { Lab } from 'attnlab';

export interface MatmulOptions { m: number; k: number; n: number; transposeB?: boolean }

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
  matmul(a: Float32Array, b: Float32Array, opts: MatmulOptions): Float32Array;
  rope(x: Float32Array, opts: { dk: number; positions?: Int32Array; base?: number }): Float32Array;
  buildInfo(): { version: string; backend: string; simd: boolean; kernels?: unknown };
  /** A Hugging Face checkpoint into the engine (the model panel, web/src/labs/model/). */
  loadModel: Lab['loadModel'];
}

/** How many engine calls the page has made: main.ts shows how many one edit cost. */
export const engineCalls = { total: 0 };

let loading: Promise<Engine> | undefined;
let models: Promise<Lab> | undefined;

/** Loads the engine once; later calls share the same instance. */
export function loadEngine(): Promise<Engine> {
  loading ??= initFrom(wasmFiles).then((lab): Engine => {
    // No cast on the functions: if the package's types drift from what the page uses, the type check fails.
    const counted = <A extends unknown[], R>(f: (...args: A) => R) => (...args: A): R => {
      engineCalls.total += 1;
      return f(...args);
    };
    return {
      backend: lab.backend,
      buildInfo: lab.buildInfo,
      softmax: counted(lab.softmax),
      attention: counted(lab.attention),
      multiHeadAttention: counted(lab.multiHeadAttention),
      matmul: counted(lab.matmul),
      rope: counted(lab.rope),
      // Real models run in an engine of their own, loaded on first use from the page's module files (the offline
      // copy's operators-only entry cannot find the module with the models by itself).
      loadModel: (source, options) => (models ??= initFrom(wasmFiles, { gpt: true })).then((m) => m.loadModel(source, options)),
    };
  });
  return loading;
}
