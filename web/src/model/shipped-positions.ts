// The learned position vectors (GPT-2's wpe) of the model that ships with the page, read from its safetensors file:
// the engine keeps a model's weights to itself, and the positions lab draws these vectors. The file is the one the
// real model loads from (the browser's cache serves it again). Float16 and bfloat16 widen to float32 exactly.
import weightsUrl from '../../models/kjv-fortunes-gpt/model.safetensors?url';

export interface PositionVectors { wpe: Float32Array; positions: number; dModel: number }

const NAME = 'transformer.wpe.weight';

/** IEEE half-precision bits → the same number as a float32 (every half is exactly a float32). */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** Reads `transformer.wpe.weight` out of a safetensors file's bytes. */
export function readPositions(bytes: Uint8Array): PositionVectors {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
  const t = header[NAME];
  if (!t) throw new Error(`the model has no ${NAME} (its positions are not learned vectors)`);
  const [positions, dModel] = t.shape;
  const at = 8 + n + t.data_offsets[0];
  const wpe = new Float32Array(positions * dModel);
  for (let i = 0; i < wpe.length; i++) {
    if (t.dtype === 'F32') wpe[i] = view.getFloat32(at + 4 * i, true);
    else if (t.dtype === 'F16') wpe[i] = halfToFloat(view.getUint16(at + 2 * i, true));
    else if (t.dtype === 'BF16') wpe[i] = new Float32Array(new Uint32Array([view.getUint16(at + 2 * i, true) << 16]).buffer)[0];
    else throw new Error(`${NAME}: dtype ${t.dtype} is not read here`);
  }
  return { wpe, positions, dModel };
}

let loading: Promise<PositionVectors> | undefined;

/** The shipped model's position vectors (fetched once). */
export function shippedPositions(): Promise<PositionVectors> {
  loading ??= fetch(weightsUrl).then(async (res) => {
    if (!res.ok) throw new Error(`the model's weights did not load (${res.status})`);
    return readPositions(new Uint8Array(await res.arrayBuffer()));
  });
  loading.catch(() => { loading = undefined; });
  return loading;
}
