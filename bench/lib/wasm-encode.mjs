// The few pieces of the WebAssembly binary format that the benches' hand-assembled modules need (peak.mjs: the
// register-only SIMD kernel; lm/stream.mjs: the streaming read). Opcodes from the WebAssembly core spec and its
// SIMD proposal; SIMD opcodes are 0xfd followed by their number as unsigned LEB128.

export const uleb = (n) => { const out = []; do { let b = n & 0x7f; n >>>= 7; if (n) b |= 0x80; out.push(b); } while (n); return out; };
export const vec = (bytes) => [...uleb(bytes.length), ...bytes];
export const section = (id, bytes) => [id, ...vec(bytes)];
export const str = (s) => vec([...new TextEncoder().encode(s)]);
export const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
const simd = (n) => [0xfd, ...uleb(n)];

export const I32 = 0x7f, F32 = 0x7d, V128 = 0x7b;
export const op = {
  localGet: (i) => [0x20, ...uleb(i)], localSet: (i) => [0x21, ...uleb(i)], localTee: (i) => [0x22, ...uleb(i)],
  i32Const: (v) => [0x41, ...uleb(v)], f32Const: (x) => [0x43, ...f32(x)],
  i32Add: [0x6a], i32Sub: [0x6b], i32LtU: [0x49], f32Add: [0x92],
  loop: [0x03, 0x40], brIf: (d) => [0x0d, ...uleb(d)], end: [0x0b],
  splat: simd(0x13), extract: (lane) => [...simd(0x1f), lane],
  add: simd(0xe4), mul: simd(0xe6),
  // v128.load with a 16-byte alignment hint (log2 = 4) and a constant offset
  v128Load: (offset) => [...simd(0x00), 4, ...uleb(offset)],
  i32x4Add: simd(0xae), i32x4Extract: (lane) => [...simd(0x1b), lane],
};

export const MAGIC = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
