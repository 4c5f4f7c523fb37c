// The package's four .wasm files as URLs (its exports map names them; Vite's ?url import emits each once: a hashed
// file beside the page, or a data: URL inside the offline copy). Imported by the page only: its workers get this
// list in a message (wasm-files.ts), so no worker's script carries a module.
import gptScalar from 'attnlab/attnlab-gpt-scalar.wasm?url';
import gptSimd from 'attnlab/attnlab-gpt-simd.wasm?url';
import scalar from 'attnlab/attnlab-scalar.wasm?url';
import simd from 'attnlab/attnlab-simd.wasm?url';
import type { WasmFiles } from './wasm-files';

export const wasmFiles: WasmFiles = {
  'attnlab-simd.wasm': simd,
  'attnlab-scalar.wasm': scalar,
  'attnlab-gpt-simd.wasm': gptSimd,
  'attnlab-gpt-scalar.wasm': gptScalar,
};
