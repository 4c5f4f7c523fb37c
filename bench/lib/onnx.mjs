// A tiny protobuf writer for the few ONNX messages the bench needs (ModelProto, GraphProto, NodeProto,
// AttributeProto, TensorProto, ValueInfoProto). Field numbers follow onnx/onnx.proto. The models are built at
// bench time for each shape and never written to the repository.

const utf8 = new TextEncoder();

class Writer {
  constructor() { this.bytes = []; }
  varint(value) {
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) { this.bytes.push(Number(v & 0x7fn) | 0x80); v >>= 7n; }
    this.bytes.push(Number(v));
    return this;
  }
  tag(field, wire) { return this.varint((field << 3) | wire); }
  int(field, value) { return this.tag(field, 0).varint(value); }
  float(field, value) {
    const b = new Uint8Array(new Float32Array([value]).buffer);
    this.tag(field, 5); this.bytes.push(...b);
    return this;
  }
  bytesField(field, data) {
    this.tag(field, 2).varint(data.length);
    for (let i = 0; i < data.length; i += 65536) this.bytes.push(...data.subarray(i, i + 65536));
    return this;
  }
  string(field, s) { return this.bytesField(field, utf8.encode(s)); }
  message(field, writer) { return this.bytesField(field, writer.finish()); }
  finish() { return Uint8Array.from(this.bytes); }
}

export const DataType = { FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9 };
const AttrType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, FLOATS: 6, INTS: 7 };

/** TensorProto with raw little-endian data. `data` is a typed array matching `dataType`. */
export function tensor(name, dataType, dims, data) {
  const w = new Writer();
  for (const d of dims) w.int(1, d);
  w.int(2, dataType);
  w.string(8, name);
  w.bytesField(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return w;
}

function attribute(name, value) {
  const w = new Writer().string(1, name);
  if (value instanceof Writer) w.message(5, value).int(20, AttrType.TENSOR);
  else if (typeof value === 'string') w.string(4, value).int(20, AttrType.STRING);
  else if (typeof value === 'object' && value.float !== undefined) w.float(2, value.float).int(20, AttrType.FLOAT);
  else if (Array.isArray(value)) { for (const v of value) w.int(8, v); w.int(20, AttrType.INTS); }
  else if (Number.isInteger(value)) w.int(3, value).int(20, AttrType.INT);
  else w.float(2, value).int(20, AttrType.FLOAT);
  return w;
}

/**
 * NodeProto. `attrs` values: integer -> INT, {float: x} or non-integer number -> FLOAT, string -> STRING,
 * integer array -> INTS, tensor(...) -> TENSOR.
 */
export function node(opType, inputs, outputs, attrs = {}, domain = '') {
  const w = new Writer();
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  w.string(3, `${opType}_${outputs[0]}`);
  w.string(4, opType);
  for (const [k, v] of Object.entries(attrs)) w.message(5, attribute(k, v));
  if (domain) w.string(7, domain);
  return w;
}

/** ValueInfoProto of a tensor with fixed dims. */
export function valueInfo(name, elemType, dims) {
  const shape = new Writer();
  for (const d of dims) shape.message(1, new Writer().int(1, d));
  const tensorType = new Writer().int(1, elemType).message(2, shape);
  const type = new Writer().message(1, tensorType);
  return new Writer().string(1, name).message(2, type);
}

/** Serialized ModelProto. `opsets`: { '': 17, 'com.microsoft': 1 }. */
export function model({ nodes, inputs, outputs, initializers = [], opsets = { '': 17 }, name = 'bench' }) {
  const g = new Writer();
  for (const n of nodes) g.message(1, n);
  g.string(2, name);
  for (const t of initializers) g.message(5, t);
  for (const i of inputs) g.message(11, i);
  for (const o of outputs) g.message(12, o);
  const m = new Writer().int(1, 8).string(2, 'attnlab-bench');
  for (const [domain, version] of Object.entries(opsets)) {
    const op = new Writer();
    if (domain) op.string(1, domain);
    op.int(2, version);
    m.message(8, op);
  }
  m.message(7, g);
  return m.finish();
}
