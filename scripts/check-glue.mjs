// One glue for every module: checks that the glue GLUE (the GPT module's) can run each .wasm given after it.
// The glue hands the module its imports by name and reads the exports it needs by name (the modules are linked
// without minified names, src/wasm/CMakeLists.txt): every import of each module must be in the glue's import
// object, and every export the glue reads must be in the module, but for the i64 call helpers (dynCall_*) of
// imports that module does not have (the glue binds them lazily and never calls them for it).
// Usage: node scripts/check-glue.mjs GLUE WASM...
import { readFileSync } from 'node:fs';

const [glueFile, ...modules] = process.argv.slice(2);
const glue = readFileSync(glueFile, 'utf8');
const importObject = glue.match(/asmLibraryArg\s*=\s*\{([^}]*)\}/);
if (!importObject) throw new Error(`check-glue: no asmLibraryArg in ${glueFile}`);
const provided = new Set([...importObject[1].matchAll(/"([^"]+)":/g)].map((m) => m[1]));
const read = new Set([...glue.matchAll(/Module\["asm"\]\["([^"]+)"\]/g)].map((m) => m[1]));
let failed = false;
for (const file of modules) {
  const m = new WebAssembly.Module(readFileSync(file));
  const missingImports = WebAssembly.Module.imports(m).filter((i) => !provided.has(i.name)).map((i) => `${i.module}.${i.name}`);
  const exports = new Set(WebAssembly.Module.exports(m).map((e) => e.name));
  const missingExports = [...read].filter((name) => !exports.has(name) && !name.startsWith('dynCall_'));
  if (missingImports.length || missingExports.length) {
    failed = true;
    console.error(`check-glue: ${glueFile} cannot run ${file}: imports it lacks ${JSON.stringify(missingImports)}, exports the module lacks ${JSON.stringify(missingExports)}`);
  }
}
if (failed) process.exit(1);
