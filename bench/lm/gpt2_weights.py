"""GPT-2 checkpoints with random weights, written in Hugging Face's layout (config.json + model.safetensors).

The names and shapes are those of GPT2LMHeadModel.save_pretrained: `transformer.` prefix, Conv1D weights stored
[in, out], q/k/v in one c_attn matrix (q, k, v along the output axis), lm_head tied to wte and so absent from the
file, no attn.bias mask buffers. Values are float32 draws from one seeded generator; the F16 and BF16 files hold
the same values rounded to nearest even, so the three checkpoints are one model at three precisions.

Scales: matrices N(0, 1/fan_in), so every projection keeps unit variance and attention scores have a spread of
about 1 (softmax neither uniform nor one-hot); the two projections back into the residual stream (attn.c_proj,
mlp.c_proj) also divided by √(2·n_layer), as GPT-2's own initialization does, so that twelve layers do not wash
out what each position holds (with them at full scale, and larger biases, the last layer's output was nearly the
same at every position: one argmax for all); embeddings N(0, 0.1²) (logits of spread ≈ 3); LayerNorm gains
1 + N(0, 0.1²) and biases N(0, 0.02²), so that no gain or bias is a no-op. Greedy decoding of a random model with
tied embeddings still falls into repeating one token after a while (the token fed back is the likeliest to
follow); every step reads every weight all the same.
"""
import json
import struct

import numpy as np

GENERATOR_VERSION = 1


def gpt2_config(n_layer, n_embd, n_head, vocab_size, n_positions, dtype="float32"):
    """config.json of a GPT-2 with these sizes, as transformers writes it (the fields a loader reads)."""
    return {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "activation_function": "gelu_new",
        "vocab_size": vocab_size,
        "n_positions": n_positions,
        "n_ctx": n_positions,
        "n_embd": n_embd,
        "n_layer": n_layer,
        "n_head": n_head,
        "n_inner": None,
        "layer_norm_epsilon": 1e-5,
        "scale_attn_weights": True,
        "tie_word_embeddings": True,
        "bos_token_id": vocab_size - 1,
        "eos_token_id": vocab_size - 1,
        "torch_dtype": dtype,
    }


def random_state_dict(cfg, seed):
    """{name: float32 array} in save_pretrained's order, for the config `cfg`."""
    rng = np.random.default_rng(seed)
    D, L, V, P = cfg["n_embd"], cfg["n_layer"], cfg["vocab_size"], cfg["n_positions"]
    inner = cfg["n_inner"] or 4 * D

    def normal(shape, sd):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(sd)).astype(np.float32)

    def gain(n):
        return (1 + normal(n, 0.1)).astype(np.float32)

    out = (2 * L) ** -0.5
    sd = {"transformer.wte.weight": normal((V, D), 0.1), "transformer.wpe.weight": normal((P, D), 0.1)}
    for i in range(L):
        p = f"transformer.h.{i}."
        sd[p + "ln_1.weight"], sd[p + "ln_1.bias"] = gain(D), normal(D, 0.02)
        sd[p + "attn.c_attn.weight"], sd[p + "attn.c_attn.bias"] = normal((D, 3 * D), D ** -0.5), normal(3 * D, 0.02)
        sd[p + "attn.c_proj.weight"], sd[p + "attn.c_proj.bias"] = normal((D, D), out * D ** -0.5), normal(D, 0.02)
        sd[p + "ln_2.weight"], sd[p + "ln_2.bias"] = gain(D), normal(D, 0.02)
        sd[p + "mlp.c_fc.weight"], sd[p + "mlp.c_fc.bias"] = normal((D, inner), D ** -0.5), normal(inner, 0.02)
        sd[p + "mlp.c_proj.weight"], sd[p + "mlp.c_proj.bias"] = normal((inner, D), out * inner ** -0.5), normal(D, 0.02)
    sd["transformer.ln_f.weight"], sd["transformer.ln_f.bias"] = gain(D), normal(D, 0.02)
    return sd


# ---- half precisions (round to nearest even) ----

def to_bf16_bits(x):
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    rounded = bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))
    return (rounded >> np.uint32(16)).astype(np.uint16)


def from_bf16_bits(bits):
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": "<u2"}


def encode(x, dtype):
    if dtype == "BF16":
        return to_bf16_bits(x).astype("<u2").tobytes()
    return np.ascontiguousarray(x).astype(DTYPES[dtype]).tobytes()


# ---- safetensors: u64 little-endian header length, JSON header padded with spaces to 8 bytes, raw data ----

def write_safetensors(path, state_dict, dtype):
    """Writes the file; returns {name: (absolute byte offset, byte length)} of each tensor's data."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    sizes = {}
    for name, t in state_dict.items():
        n = t.size * (4 if dtype == "F32" else 2)
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + n]}
        sizes[name] = (offset, n)
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    start = 8 + len(text)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, t in state_dict.items():
            f.write(encode(t, dtype))
    return {name: (start + o, n) for name, (o, n) in sizes.items()}


def read_safetensors(path):
    """{name: float32 array} widened from whatever the file holds (F32, F16, BF16)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        a, b = h["data_offsets"]
        buf = raw[8 + n + a:8 + n + b]
        if h["dtype"] == "BF16":
            x = from_bf16_bits(np.frombuffer(buf, dtype="<u2"))
        else:
            x = np.frombuffer(buf, dtype=DTYPES[h["dtype"]]).astype(np.float32)
        out[name] = x.reshape(h["shape"])
    return out
