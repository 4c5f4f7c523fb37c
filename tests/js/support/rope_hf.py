"""RoPE as Hugging Face's transformers writes it, in float64 NumPy: an independent formulation for
tests/js/rope.test.mjs to compare lab.rope with.

Half-split pairing: LlamaRotaryEmbedding + apply_rotary_pos_emb (cos/sin of cat(freqs, freqs), rotate_half);
interleaved pairing: GPT-J's duplicate_interleave + rotate_every_two; partial rotary as GPT-NeoX / Phi do it
(rotate x[..., :rotary_dim], pass the rest through). Everything in float64 (HF computes inv_freq and the angles
in float32; the engine's angles are exact to double precision, which is what this compares with).

Reads one JSON case per line on stdin: {x, batch, heads, dk, layout, positions ([batch][seq]), base,
rotaryDim, interleaved}; writes one JSON line per case: the output, flattened in the input's layout.
"""
import json
import sys

import numpy as np


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return np.concatenate((-x2, x1), axis=-1)


def rotate_every_two(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return np.stack((-x2, x1), axis=-1).reshape(x.shape)


def apply_rotary_pos_emb(x, cos, sin, interleaved):
    """x: [batch, heads, seq, rotary_dim]; cos, sin: [batch, seq, rotary_dim] (unsqueezed over heads here)."""
    cos, sin = cos[:, None], sin[:, None]
    return x * cos + (rotate_every_two(x) if interleaved else rotate_half(x)) * sin


def rope(case):
    b, h, d, r = case["batch"], case["heads"], case["dk"], case["rotaryDim"]
    x = np.asarray(case["x"], dtype=np.float64)
    s = x.size // (b * h * d)
    bshd = case["layout"] == "bshd"
    x = x.reshape(b, s, h, d).transpose(0, 2, 1, 3) if bshd else x.reshape(b, h, s, d)
    position_ids = np.asarray(case["positions"], dtype=np.float64).reshape(b, s)
    inv_freq = 1.0 / (case["base"] ** (np.arange(0, r, 2, dtype=np.float64) / r))
    freqs = position_ids[..., None] * inv_freq  # [batch, seq, r/2]
    emb = np.repeat(freqs, 2, axis=-1) if case["interleaved"] else np.concatenate((freqs, freqs), axis=-1)
    x_rot, x_pass = x[..., :r], x[..., r:]
    out = np.concatenate((apply_rotary_pos_emb(x_rot, np.cos(emb), np.sin(emb), case["interleaved"]), x_pass), axis=-1)
    return (out.transpose(0, 2, 1, 3) if bshd else out).ravel().tolist()


for line in sys.stdin:
    if line.strip():
        print(json.dumps(rope(json.loads(line))))
