// Where the engine's modules are: every init() on the page and in its workers is handed the four .wasm files by URL
// (the page's engine-files.ts makes the list; a worker receives it in its first message). So the offline copy
// carries each module once, in the page, instead of once in the page and again inside each worker's script, and
// the build leaves the package's own copies inside its JS out of every bundle (web/vite.config.ts).
import { init, type InitOptions, type Lab, type WasmFile } from 'attnlab';

/** Each module file's URL: hashed files beside the page, or data: URLs inside the offline copy. */
export type WasmFiles = Record<WasmFile, string>;

/** init() with the module `options` choose loaded from `files`. */
export function initFrom(files: WasmFiles, options: Omit<InitOptions, 'wasmUrl' | 'wasmBinary'> = {}): Promise<Lab> {
  return init({ ...options, wasmUrl: (file) => files[file] });
}
