// The module with the language-model engine and the tokenizer (the modules with the small GPT), for a lab whose own
// module lacks them: loader.js says how to instantiate it (setModelModule), and lab.loadModel and lab.loadTokenizer
// get it here the first time they need it (one instance per lab, shared by its models and tokenizers).
import { hasLm } from './variant.js';

// Per operators-only module: how to get the module with the language-model engine (a promise, made once).
const modelModules = new WeakMap();

/**
 * loader.js: for a lab whose module lacks the language-model engine, `compile()` resolves with the compiled module
 * that has it (the lab's workers instantiate it themselves, for models placed on them) and `instantiate(module)`
 * makes it on this thread; each once.
 */
export function setModelModule(m, { compile, instantiate }) {
  let compiled, made;
  const get = () => (made ??= (compiled ??= compile()).then(instantiate));
  get.compiled = () => (compiled ??= compile());
  modelModules.set(m, get);
}

/** `m` itself when it has the language-model engine, else the module set for it (loaded on first use). */
export async function moduleWithModels(m, fn) {
  if (hasLm(m)) return m;
  const make = modelModules.get(m);
  if (!make) throw new Error(`${fn}: this lab's module has no language-model engine; load the lab with init({ gpt: true })`);
  try {
    return await make();
  } catch (e) {
    throw new Error(`${fn}: this lab runs the operators' module, and the module with the language-model engine could not be loaded: ${e?.message ?? e}`, { cause: e });
  }
}

/** The compiled module with the language-model engine for workers whose own module lacks it; null when `m` has it. */
export async function compiledModelModule(m, fn) {
  if (hasLm(m)) return null;
  const make = modelModules.get(m);
  if (!make) throw new Error(`${fn}: this lab's module has no language-model engine; load the lab with init({ gpt: true })`);
  return make.compiled();
}
