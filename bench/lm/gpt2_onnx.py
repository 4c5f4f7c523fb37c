"""GPT-2 as an ONNX graph with past/present KV, the interface transformers.js runs (decoder_model with past):

  inputs   input_ids [1, S] int64, attention_mask [1, P + S] int64, position_ids [1, S] int64,
           past_key_values.{i}.key / .value [1, heads, P, head_dim] float32
  outputs  logits [1, S, vocab] float32, present.{i}.key / .value [1, heads, P + S, head_dim] float32

Built node by node with onnx.helper (opset 17: LayerNormalization is an op; GELU is gelu_new written out as
PyTorch exports it, which onnxruntime's optimizer fuses). The weights are not copied: every initializer is
external data pointing at its bytes inside model.safetensors (ONNX's external data: location, offset, length),
so the graph runs exactly the checkpoint's float32 values. Conv1D weights are [in, out], which MatMul takes as
they are. The tied lm_head is MatMul with a transposed copy of wte (lm_head.bin beside the graph), as torch.onnx
exports a tied Linear (its transpose folded into a constant): it costs onnxruntime that copy's memory; reading
wte in place through Gemm(h, wte, transB = 1) instead took 1.27× the CPU time for a decode step's product
(onnxruntime-web 1.30, one thread, measured on an 8192-token slice).
"""
import numpy as np
import onnx
from onnx import TensorProto, helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def external(name, dims, location, offset, length):
    t = TensorProto()
    t.name, t.data_type = name, F
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    return t


def build(cfg, shapes, offsets, location="model.safetensors", lm_head="lm_head.bin"):
    """ModelProto. shapes: {name: shape}; offsets: {name: (byte offset in the file, byte length)} (F32 file);
    lm_head: the file holding wte transposed, [n_embd, vocab] float32."""
    D, H, L, V = cfg["n_embd"], cfg["n_head"], cfg["n_layer"], cfg["vocab_size"]
    dh = D // H
    eps = cfg["layer_norm_epsilon"]
    nodes, inits = [], []

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=f"{op}_{outputs[0]}", **attrs))
        return outputs[0]

    def const(name, value, dtype=np.float32):
        inits.append(helper.make_tensor(name, F if dtype == np.float32 else I64, np.shape(value),
                                        np.asarray(value, dtype=dtype).flatten().tolist()))
        return name

    def weight(name):
        w = "transformer." + name
        inits.append(external(w, shapes[w], location, *offsets[w]))
        return w

    const("half", 0.5), const("one", 1.0), const("three", 3.0), const("k_gelu", 0.044715)
    const("c_gelu", np.sqrt(2 / np.pi)), const("scale", 1 / np.sqrt(dh)), const("min_f32", np.finfo(np.float32).min)
    const("heads_shape", [0, 0, H, dh], np.int64), const("model_shape", [0, 0, D], np.int64)
    const("split_qkv", [D, D, D], np.int64)
    const("i0", 0, np.int64), const("i1", 1, np.int64), const("ax0", [0], np.int64), const("ax1", [1], np.int64)
    const("ax01", [0, 1], np.int64)

    # embeddings
    x = node("Add", [node("Gather", [weight("wte.weight"), "input_ids"], ["tok"]),
                     node("Gather", [weight("wpe.weight"), "position_ids"], ["pos"])], ["x0"])

    # the mask, once for all layers: key j is seen by query i (at position P + i) when j ≤ P + i and the
    # attention mask keeps j. T = P + S from attention_mask's shape, S from input_ids'.
    node("Gather", [node("Shape", ["attention_mask"], ["am_shape"]), "i1"], ["T"], axis=0)
    node("Gather", [node("Shape", ["input_ids"], ["ids_shape"]), "i1"], ["S"], axis=0)
    node("Sub", ["T", "S"], ["P"])
    node("Range", ["P", "T", "i1"], ["q_pos"])
    node("Range", ["i0", "T", "i1"], ["k_pos"])
    node("LessOrEqual", [node("Unsqueeze", ["k_pos", "ax0"], ["k_row"]), node("Unsqueeze", ["q_pos", "ax1"], ["q_col"])],
         ["causal"])
    node("Unsqueeze", [node("Cast", ["attention_mask"], ["am_bool"], to=TensorProto.BOOL), "ax01"], ["am4"])
    node("And", [node("Unsqueeze", ["causal", "ax01"], ["causal4"]), "am4"], ["allowed"])

    def layer_norm(inp, prefix, out):
        return node("LayerNormalization", [inp, weight(prefix + ".weight"), weight(prefix + ".bias")], [out],
                    axis=-1, epsilon=eps)

    def linear(inp, prefix, out):
        return node("Add", [node("MatMul", [inp, weight(prefix + ".weight")], [out + "_mm"]), weight(prefix + ".bias")],
                    [out])

    def gelu_new(inp, out):
        # 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), in the order torch.onnx exports it
        cube = node("Pow", [inp, "three"], [out + "_cube"])
        inner = node("Add", [inp, node("Mul", [cube, "k_gelu"], [out + "_kc"])], [out + "_sum"])
        t = node("Tanh", [node("Mul", [inner, "c_gelu"], [out + "_in"])], [out + "_tanh"])
        return node("Mul", [node("Mul", [inp, "half"], [out + "_half"]), node("Add", [t, "one"], [out + "_1t"])], [out])

    for i in range(L):
        p = f"h.{i}"
        a = layer_norm(x, f"{p}.ln_1", f"ln1_{i}")
        qkv = linear(a, f"{p}.attn.c_attn", f"qkv_{i}")
        node("Split", [qkv, "split_qkv"], [f"q_{i}", f"k_{i}", f"v_{i}"], axis=2)
        heads = {}
        for t in "qkv":
            r = node("Reshape", [f"{t}_{i}", "heads_shape"], [f"{t}r_{i}"])
            heads[t] = node("Transpose", [r], [f"{t}h_{i}"], perm=[0, 2, 1, 3])
        pk = node("Concat", [f"past_key_values.{i}.key", heads["k"]], [f"present.{i}.key"], axis=2)
        pv = node("Concat", [f"past_key_values.{i}.value", heads["v"]], [f"present.{i}.value"], axis=2)
        s = node("Mul", [node("MatMul", [heads["q"], node("Transpose", [pk], [f"kt_{i}"], perm=[0, 1, 3, 2])],
                              [f"qk_{i}"]), "scale"], [f"s_{i}"])
        s = node("Where", ["allowed", s, "min_f32"], [f"sm_{i}"])
        ctx = node("MatMul", [node("Softmax", [s], [f"p_{i}"], axis=-1), pv], [f"ctx_{i}"])
        ctx = node("Reshape", [node("Transpose", [ctx], [f"ctxt_{i}"], perm=[0, 2, 1, 3]), "model_shape"], [f"ctxr_{i}"])
        x = node("Add", [x, linear(ctx, f"{p}.attn.c_proj", f"attn_{i}")], [f"xa_{i}"])
        a = layer_norm(x, f"{p}.ln_2", f"ln2_{i}")
        m = linear(gelu_new(linear(a, f"{p}.mlp.c_fc", f"fc_{i}"), f"gelu_{i}"), f"{p}.mlp.c_proj", f"mlp_{i}")
        x = node("Add", [x, m], [f"xm_{i}"])

    a = layer_norm(x, "ln_f", "lnf")
    inits.append(external("lm_head.weight", [D, V], lm_head, 0, D * V * 4))
    node("MatMul", [a, "lm_head.weight"], ["logits"])

    kv = lambda name, length: helper.make_tensor_value_info(name, F, [1, H, length, dh])  # noqa: E731
    inputs = [helper.make_tensor_value_info("input_ids", I64, [1, "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", I64, [1, "total_sequence_length"]),
              helper.make_tensor_value_info("position_ids", I64, [1, "sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", F, [1, "sequence_length", V])]
    for i in range(L):
        inputs += [kv(f"past_key_values.{i}.key", "past_sequence_length"), kv(f"past_key_values.{i}.value", "past_sequence_length")]
        outputs += [kv(f"present.{i}.key", "total_sequence_length"), kv(f"present.{i}.value", "total_sequence_length")]
    graph = helper.make_graph(nodes, "gpt2_with_past", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="attnlab-bench")
    model.ir_version = 8
    return model


def save(model, path):
    """Writes the graph beside its model.safetensors and checks it there (the checker reads external data)."""
    onnx.save(model, path)
    onnx.checker.check_model(path)
