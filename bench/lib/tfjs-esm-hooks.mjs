// Node module hooks that load TensorFlow.js from its ES module build (tfjs-core's dist/index.js and the wasm
// backend's), whose imports omit the ".js" extension. Only that build lets tfjs-core's gradients
// (dist/register_all_gradients.js, which the CommonJS bundle lacks) register into the same engine the wasm backend
// runs on: tf.variableGrads needs them. Registered by bench/lib/tfjs-gradients.mjs through module.register().
const ESM_ENTRY = {
  '@tensorflow/tfjs-core': '@tensorflow/tfjs-core/dist/index.js',
  '@tensorflow/tfjs-backend-wasm': '@tensorflow/tfjs-backend-wasm/dist/index.js',
};

export async function resolve(specifier, context, next) {
  if (ESM_ENTRY[specifier]) return next(ESM_ENTRY[specifier], context);
  try {
    return await next(specifier, context);
  } catch (e) {
    const fromTfjs = context.parentURL?.includes('/node_modules/@tensorflow/');
    if (!fromTfjs || !['ERR_MODULE_NOT_FOUND', 'ERR_UNSUPPORTED_DIR_IMPORT'].includes(e.code)) throw e;
    for (const candidate of [`${specifier}.js`, `${specifier}/index.js`]) {
      try {
        return await next(candidate, context);
      } catch {
        // try the next form
      }
    }
    throw e;
  }
}
