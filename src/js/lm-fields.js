// The language-model engine's call descriptors (src/wasm/lm_call.h): their field names in order, read from the
// module once (lmCallFields), so the wrapper, the loader and the workers cannot disagree with the engine.
const cache = new WeakMap();

/** { loader: [...], forward: [...], generate: [...] } for module `m`. */
export function fieldsOf(m) {
  let f = cache.get(m);
  if (!f) {
    f = Object.fromEntries(m.lmCallFields().split(';').map((part) => {
      const [name, list] = part.split(':');
      return [name, list.split(',').filter(Boolean)];
    }));
    cache.set(m, f);
  }
  return f;
}

/** A setter for descriptor `call` (a Float64Array) of field list `F`. */
export const setter = (call, F) => (field, value) => (call[F.indexOf(field)] = value);
