"""An independent reader of a Hugging Face GPT-2 model folder: config.json and model.safetensors read with the
standard library and NumPy, and GPT-2's forward (transformers' modeling_gpt2.py: Conv1D weights [in, out],
x @ W + b) computed in float64. Used to check that a folder the project writes means what transformers would
read from it: names, transposes, the activation that config.json names, tied embeddings.

    /usr/bin/python3 gpt2_hf_numpy.py FOLDER < request.json > result.json

request: {"tokens": [[ids of one sequence], ...], "attention": true|false}
result:  {"logits": [[t × vocab floats], ...], "attention": [[layer][head][t][t] per sequence]} (float64),
         "logits32": the same forward computed in float32 by NumPy (a second float32 implementation, whose
         distance from float64 says how far float32 arithmetic alone moves these logits)
"""
import json
import math
import struct
import sys

import numpy as np

DTYPES = {"F16": "<f2", "F32": "<f4", "BF16": None, "F64": "<f8"}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    base = 8 + n
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        dtype = DTYPES[t["dtype"]]
        if dtype is None:
            raise ValueError(f"{name}: dtype {t['dtype']} is not read here")
        arr = np.frombuffer(raw[base + a : base + b], dtype=dtype).astype(np.float64)
        tensors[name] = arr.reshape(t["shape"])
    return tensors


# transformers' ACT2FN names: "gelu" is the exact erf form, "gelu_new" / "gelu_pytorch_tanh" the tanh approximation.
_erf = np.vectorize(math.erf)


def activation(name):
    if name == "gelu":
        return lambda x: (0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))).astype(x.dtype)
    if name in ("gelu_new", "gelu_pytorch_tanh", "gelu_fast"):
        return lambda x: 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    if name == "relu":
        return lambda x: np.maximum(x, 0.0)
    raise ValueError(f"config.json: activation_function {name!r} is not read here")


def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def load(folder):
    with open(f"{folder}/config.json") as f:
        cfg = json.load(f)
    if cfg.get("model_type") != "gpt2" or "GPT2LMHeadModel" not in cfg.get("architectures", []):
        raise ValueError("config.json: not a GPT2LMHeadModel")
    raw = read_safetensors(f"{folder}/model.safetensors")
    # GPT2LMHeadModel's state dict names its body "transformer."; GPT2Model's checkpoints leave the prefix out.
    w = {k[len("transformer.") :] if k.startswith("transformer.") else k: v for k, v in raw.items()}
    return cfg, w


def forward(cfg, w, ids, want_attention, dtype=np.float64):
    w = {k: v.astype(dtype) for k, v in w.items()}
    d, heads, eps = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"]
    hd = d // heads
    act = activation(cfg["activation_function"])
    t = len(ids)
    if t > cfg["n_positions"]:
        raise ValueError("sequence longer than n_positions")
    x = w["wte.weight"][ids] + w["wpe.weight"][np.arange(t)]
    causal = np.triu(np.ones((t, t), dtype=bool), 1)
    attention = []
    for i in range(cfg["n_layer"]):
        p = f"h.{i}."
        h = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # Conv1D: [d, 3d]
        q, k, v = (qkv[:, j * d : (j + 1) * d].reshape(t, heads, hd).transpose(1, 0, 2) for j in range(3))
        s = q @ k.transpose(0, 2, 1) * dtype(1.0 / math.sqrt(hd))
        s = np.where(causal, -np.inf, s)
        s = s - s.max(-1, keepdims=True)
        a = np.exp(s)
        a = a / a.sum(-1, keepdims=True)
        if want_attention:
            attention.append(a.tolist())
        o = (a @ v).transpose(1, 0, 2).reshape(t, d)
        x = x + o @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        x = x + act(h @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]) @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    x = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps)
    head = w.get("lm_head.weight")
    if head is None:
        if not cfg.get("tie_word_embeddings", True):
            raise ValueError("model.safetensors: no lm_head.weight and the embeddings are not tied")
        head = w["wte.weight"]
    return x @ head.T, attention


def main():
    folder = sys.argv[1]
    req = json.load(sys.stdin)
    cfg, w = load(folder)
    result = {"logits": [], "attention": [], "logits32": []}
    for ids in req["tokens"]:
        logits, attention = forward(cfg, w, np.array(ids, dtype=np.int64), req.get("attention", False))
        result["logits"].append(logits.reshape(-1).tolist())
        result["attention"].append(attention)
        logits32, _ = forward(cfg, w, np.array(ids, dtype=np.int64), False, np.float32)
        result["logits32"].append(logits32.reshape(-1).astype(np.float64).tolist())
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
