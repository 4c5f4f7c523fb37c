// The small GPT as a Hugging Face model folder in GPT-2's layout (transformers' GPT2LMHeadModel): the engine's
// nanoGPT state dict renamed and transposed where GPT-2 uses Conv1D (weights stored [in, out]; nanoGPT's
// nn.Linear stores [out, in]), the tied lm_head left out (it is transformer.wte.weight), float16 tensors in a
// safetensors file, and config.json / generation_config.json / tokenizer_config.json beside it.

// GPT-2's Conv1D layers: their weights are the transposes of nanoGPT's Linear weights.
const CONV1D = /\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.weight$/;

const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);

/** IEEE binary16 bits of a float32 value, rounded to nearest, ties to even (as NumPy's astype(float16)). */
export function f16Bits(x) {
  f32[0] = x;
  const b = u32[0], sign = (b >>> 16) & 0x8000, exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) throw new RangeError(`f16Bits: ${x} is not finite`);
  const e = exp - 112; // the float16 exponent field (bias 15 against float32's 127)
  if (e <= 0) {
    // A float16 subnormal (units of 2⁻²⁴) or zero.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e, half = 1 << (shift - 1), rest = mant & ((1 << shift) - 1);
    let h = mant >>> shift;
    if (rest > half || (rest === half && h & 1)) h++;
    return sign | h; // 0x400 after rounding up is the smallest normal, as it should be
  }
  let h = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++; // a carry into the exponent is correct rounding
  if (h >= 0x7c00) throw new RangeError(`f16Bits: ${x} is beyond float16's range (65504)`);
  return sign | h;
}

/** The float value of float16 bits. */
export function f16Value(h) {
  const sign = h & 0x8000 ? -1 : 1, e = (h >>> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/**
 * GPT-2's tensors from the engine's weights (`GPT.getWeights()`, nanoGPT names and [out, in] Linear weights):
 * `{ name: { shape, data: Float32Array } }` in GPT-2's names and shapes, lm_head.weight left out (tied).
 */
export function gpt2Tensors(weights, shapes) {
  const out = {};
  for (const [name, data] of Object.entries(weights)) {
    if (name === 'lm_head.weight') continue;
    const shape = shapes[name];
    if (CONV1D.test(name)) {
      const [rows, cols] = shape, t = new Float32Array(data.length);
      for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) t[c * rows + r] = data[r * cols + c];
      out[name] = { shape: [cols, rows], data: t };
    } else out[name] = { shape: [...shape], data };
  }
  return out;
}

/** The engine's weights (nanoGPT names, [out, in]) from GPT-2's tensors: gpt2Tensors' inverse. */
export function nanoGptWeights(tensors) {
  const out = {};
  for (const [name, { shape, data }] of Object.entries(tensors)) {
    if (CONV1D.test(name)) {
      const [rows, cols] = shape, t = new Float32Array(data.length);
      for (let r = 0; r < rows; ++r) for (let c = 0; c < cols; ++c) t[c * rows + r] = data[r * cols + c];
      out[name] = t;
    } else out[name] = Float32Array.from(data);
  }
  return out;
}

/** A safetensors file of float16 tensors, names in sorted order (as safetensors' own writer orders them). */
export function f16Safetensors(tensors, metadata = { format: 'pt' }) {
  const names = Object.keys(tensors).sort();
  const header = { __metadata__: metadata };
  let offset = 0;
  for (const name of names) {
    const bytes = tensors[name].data.length * 2;
    header[name] = { dtype: 'F16', shape: tensors[name].shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((8 + json.length) % 8)) % 8); // the data starts 8-byte aligned (safetensors pads with spaces)
  const head = new TextEncoder().encode(json);
  const file = new Uint8Array(8 + head.length + offset);
  const view = new DataView(file.buffer);
  view.setBigUint64(0, BigInt(head.length), true);
  file.set(head, 8);
  let at = 8 + head.length;
  for (const name of names) {
    for (const x of tensors[name].data) view.setUint16(at, f16Bits(x), true), (at += 2);
  }
  return file;
}

/** The tensors of a safetensors file (F16 and F32 read), `{ name: { shape, data: Float32Array } }`, and its metadata. */
export function readSafetensors(file) {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + n)));
  const tensors = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [a, b] = t.data_offsets, count = t.shape.reduce((p, d) => p * d, 1), data = new Float32Array(count);
    if (t.dtype === 'F16') for (let i = 0; i < count; ++i) data[i] = f16Value(view.getUint16(8 + n + a + 2 * i, true));
    else if (t.dtype === 'F32') for (let i = 0; i < count; ++i) data[i] = view.getFloat32(8 + n + a + 4 * i, true);
    else throw new Error(`readSafetensors: ${name} has dtype ${t.dtype}`);
    if (b - a !== count * (t.dtype === 'F16' ? 2 : 4)) throw new Error(`readSafetensors: ${name}'s offsets do not match its shape`);
    tensors[name] = { shape: t.shape, data };
  }
  return { tensors, metadata: header.__metadata__ ?? {} };
}

/** transformers' GPT2Config of the engine's config. The small GPT's GELU is the exact (erf) one: ACT2FN's "gelu". */
export function gpt2Config(config, eot) {
  return {
    architectures: ['GPT2LMHeadModel'],
    model_type: 'gpt2',
    vocab_size: config.vocabSize,
    n_positions: config.context,
    n_embd: config.dModel,
    n_layer: config.layers,
    n_head: config.heads,
    n_inner: null,
    activation_function: 'gelu',
    layer_norm_epsilon: 1e-5,
    initializer_range: 0.02,
    resid_pdrop: 0,
    embd_pdrop: 0,
    attn_pdrop: 0,
    scale_attn_weights: true,
    scale_attn_by_inverse_layer_idx: false,
    reorder_and_upcast_attn: false,
    tie_word_embeddings: true,
    bos_token_id: eot,
    eos_token_id: eot,
    torch_dtype: 'float16',
    use_cache: true,
  };
}

/** generation_config.json: the end-of-text token and the sampling the model card's samples used. */
export function generationConfig(eot, sampling) {
  return { bos_token_id: eot, eos_token_id: eot, do_sample: true, temperature: sampling.temperature, top_k: sampling.topK };
}

/** tokenizer_config.json: the special tokens by role, and no clean-up of spaces on decoding (GPT-2's byte-level BPE is exact). */
export function tokenizerConfig(context) {
  return {
    tokenizer_class: 'GPT2Tokenizer',
    bos_token: '<|endoftext|>',
    eos_token: '<|endoftext|>',
    unk_token: '<|endoftext|>',
    add_prefix_space: false,
    clean_up_tokenization_spaces: false,
    model_max_length: context,
  };
}
