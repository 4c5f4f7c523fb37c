// Reads a safetensors file's header (u64 little-endian length, then JSON) and views its float32 tensors in place.
// The benches' own reader: what a runtime without one (TensorFlow.js) needs, and the weights' byte count.

/** { header: {name: {dtype, shape, data_offsets}}, dataStart } of a safetensors file's bytes (or its first 8 + n). */
export function readHeader(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  delete header.__metadata__;
  return { header, dataStart: 8 + n };
}

/** {name: {data: Float32Array, shape}} for an F32 file; the arrays copy the bytes (aligned, owned). */
export function readF32Tensors(bytes) {
  const { header, dataStart } = readHeader(bytes);
  const out = {};
  for (const [name, h] of Object.entries(header)) {
    if (h.dtype !== 'F32') throw new Error(`model.safetensors: ${name} is ${h.dtype}; this reader takes F32 only`);
    const [a, b] = h.data_offsets;
    const data = new Float32Array((b - a) / 4);
    new Uint8Array(data.buffer).set(bytes.subarray(dataStart + a, dataStart + b));
    out[name] = { data, shape: h.shape };
  }
  return out;
}

/**
 * Bytes of weights one decode step reads: every tensor once, except the position table, of which it reads one
 * row (the token table is read whole: it is also the tied output projection).
 */
export function decodeWeightBytes(bytes, config) {   // (bytes: the file, or its head)
  const { header } = readHeader(bytes);
  let total = 0;
  for (const [name, h] of Object.entries(header)) {
    const size = h.data_offsets[1] - h.data_offsets[0];
    total += name.endsWith('wpe.weight') ? size / config.n_positions : size;
  }
  return total;
}
