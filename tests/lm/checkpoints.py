#!/usr/bin/python3
"""Random-weight checkpoints in exactly Hugging Face's layouts, and an independent float64 forward of each as the
reference the engine is tested against (tests/native/lm_test.cpp, tests/js/lm-*.test.mjs).

    checkpoints.py OUT            every case below, one folder each: OUT/<case>/
    checkpoints.py OUT --small [--dtype F32|F16|BF16]
                                  only GPT-2-small's shape (12 layers, d 768, vocab 50257; F16 by default), no reference

A case folder is what a model repository's resolve/main/ holds: config.json, generation_config.json (some cases),
model.safetensors or model-0000k-of-0000n.safetensors with model.safetensors.index.json. Beside them:
    reference.json   the prompt ids, the reference's greedy continuation, and the shapes below
    logits.f64 / logits_bound.f64        [n × vocab], little-endian float64
    attention.f64 / attention_bound.f64  [layers × heads × n × n]
    qkv.f64 / qkv_bound.f64              per layer q [n × heads × head_dim], then k and v [n × kv_heads × head_dim]
                                         each, as the attention reads them (after the biases and RoPE)
Every weight is written in its file dtype (F32, F16, BF16) and the reference computes with the rounded values, so
the only differences left are the engine's float32 arithmetic, which the bounds cover.

The bounds. A float32 evaluation of the forward differs from the exact one by the rounding errors of its
operations, each carried to the output through the rest of the forward: to first order, the error of an output is
Σ over operations of ∂output/∂(operation's result) · (that operation's own error from exact inputs). So each
bound is Σ |adjoint| · (local error bound), with the adjoints of a batch of outputs from one backward pass through
the recorded forward (Tape below; `checkpoints.py OUT --check` tests every vector-Jacobian product against central
differences). The local bounds, for any summation order the engine may use (u = 2⁻²⁴, γ(n) = n·u/(1 − n·u)):
  * a product or sum rounds by u·|result|; a dot product or matrix product of k terms (plus a bias and a residual,
    one term each) by γ(k + 1)·Σ|terms|;
  * LayerNorm / RMSNorm: the mean, the centred values, the sum of squares and 1/√(var + eps) round, and those
    roundings pass to the result to first order (1/√ halves var's relative error);
  * GELU (tanh form), SiLU: the kernels' own error specs — tanh within 4u relative and exp within 2u
    (tests/native/exp_test.cpp enforces both) — and the roundings around them;
  * GELU (exact): Φ's error as kernels/erf_simd.h derives it (tests/native/lm_kernels_test.cpp enforces it), with
    x/√2's two roundings carried through erf and erfc, and the final product's rounding;
  * RoPE: the tables within u·|cos|, u·|sin| plus η ≤ 1e-12 of exact (rope.h), the rotation rounds twice;
  * attention, as tests/native/reference.h bounds it: scores with γ(dk + 1) on Σ|q·k| and the scale rounded to
    float32; softmax rows with exp's error, the shifted scores' roundings, the sum's γ(n) and the streaming kernel's
    rescales of partial sums; the output Σ p·v with γ(n + 2).
Weights are exact inputs (the reference uses the stored values), so are token ids.
Second-order terms (products of two local errors) are left out: every logits bound here stays below 1e-3 of the
logits' scale (asserted), so they change a bound by less than 0.1 %, which the factor 1.001 on every bound covers.
"""
import json
import math
import os
import struct
import sys

import numpy as np

U = 2.0 ** -24
TINY = 2.0 ** -149
FLUSH = 2.0 ** -126
EXP_ERR = 2 * U    # the vector exp's relative error spec (and libm's)
TANH_ERR = 4 * U   # the vector tanh's (and libm's)
ROPE_ETA = 1e-12   # RoPE table error beyond rounding, positions < 1000 (rope.h)
SECOND_ORDER = 1.001


def gamma(n):
    return n * U / (1 - n * U)


# ---------------------------------------------------------------------------------------------------- files

def stored(a, dtype):
    """The values a file of this dtype holds for a (as float64) and their little-endian bytes."""
    a = np.asarray(a, dtype=np.float64)
    if dtype == 'F32':
        f = a.astype('<f4')
        return f.astype(np.float64), f.tobytes()
    if dtype == 'F16':
        f = a.astype('<f2')
        assert np.all(np.isfinite(f))
        return f.astype(np.float64), f.tobytes()
    assert dtype == 'BF16'
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype('<u2')  # round to nearest, ties to even
    values = (rounded.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return values, rounded.tobytes()


def write_safetensors(path, tensors, order_seed):
    """tensors: [(name, raw bytes, dtype, shape)]; the data in a shuffled order (readers must go by offsets)."""
    order = np.random.default_rng(order_seed).permutation(len(tensors))
    header, blobs, at = {}, [], 0
    for i in order:
        name, raw, dtype, shape = tensors[i]
        header[name] = {'dtype': dtype, 'shape': list(shape), 'data_offsets': [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    header['__metadata__'] = {'format': 'pt'}
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)
    return at + 8 + len(text)


def write_checkpoint(folder, params, dtypes, shards, seed):
    """params: {name: float64 array as the file's shape}; dtypes(name) → dtype. Returns the stored values."""
    os.makedirs(folder, exist_ok=True)
    values, tensors = {}, []
    for name, a in params.items():
        v, raw = stored(a, dtypes(name))
        values[name] = v.reshape(a.shape)
        tensors.append((name, raw, dtypes(name), a.shape))
    if shards == 1:
        write_safetensors(os.path.join(folder, 'model.safetensors'), tensors, seed)
        return values
    # Consecutive groups of tensors, one file each, named as transformers names them.
    groups = np.array_split(np.arange(len(tensors)), shards)
    weight_map, total = {}, 0
    for k, idx in enumerate(groups):
        name = f'model-{k + 1:05d}-of-{shards:05d}.safetensors'
        part = [tensors[i] for i in idx]
        total += sum(len(t[1]) for t in part)
        write_safetensors(os.path.join(folder, name), part, seed + k)
        for t in part:
            weight_map[t[0]] = name
    with open(os.path.join(folder, 'model.safetensors.index.json'), 'w') as f:
        json.dump({'metadata': {'total_size': total}, 'weight_map': weight_map}, f, indent=2)
    return values


# ---------------------------------------------------------------------------------------------------- the bounded forward

class Tape:
    """The forward as a list of operations, each with its exact (float64) result, the bound on the rounding error a
    float32 evaluation adds to it from exact inputs (its local error), and its vector-Jacobian product. The error of
    an output is, to first order, Σ over operations of ∂output/∂(result)·(local error): bounded by Σ |adjoint|·local,
    the adjoints found by one backward pass for a batch of outputs at once."""

    def __init__(self):
        self.nodes = []  # (value, local bound, input node ids, vjp: adjoint of the result → adjoints of the inputs)
        self.qkv = []    # each layer's (q, k, v) nodes as its attention reads them

    def add(self, value, local, inputs=(), vjp=None):
        self.nodes.append((value, local, tuple(inputs), vjp))
        return len(self.nodes) - 1

    def value(self, i):
        return self.nodes[i][0]

    def bound(self, out, flat=None, chunk=256):
        """Bounds of the elements `flat` (flat indices; default all) of node `out`, one backward pass per chunk of
        them, each seeded with their one-hot adjoints."""
        shape = self.value(out).shape
        flat = np.arange(int(np.prod(shape))) if flat is None else np.asarray(flat)
        result = []
        for c0 in range(0, len(flat), chunk):
            idx = flat[c0:c0 + chunk]
            seed = np.zeros((len(idx), int(np.prod(shape))))
            seed[np.arange(len(idx)), idx] = 1
            adj = {out: seed.reshape((len(idx),) + shape)}
            total = np.zeros(len(idx))
            for i in range(out, -1, -1):
                if i not in adj:
                    continue
                a = adj.pop(i)
                value, local, inputs, vjp = self.nodes[i]
                total += (np.abs(a) * local).reshape(len(a), -1).sum(1)
                if inputs:
                    for j, g in zip(inputs, vjp(a)):
                        adj[j] = adj[j] + g if j in adj else g
            result.append(total)
        return np.concatenate(result)

    def gradient(self, out, seed, node):
        """The adjoint at `node` of Σ seed·(node out): for checking the vector-Jacobian products."""
        adj = {out: seed[None]}
        for i in range(out, node, -1):
            if i in adj and self.nodes[i][2]:
                a = adj.pop(i)
                for j, g in zip(self.nodes[i][2], self.nodes[i][3](a)):
                    adj[j] = adj[j] + g if j in adj else g
        return adj.get(node, np.zeros((1,) + self.value(node).shape))[0]


def linear(t, x, w, b=None, res=None):
    """y = x·wᵀ (+ b) (+ res), w [out, in]: a dot product of in terms, plus the bias and the residual."""
    xv = t.value(x)
    v = xv @ w.T
    absum = np.abs(xv) @ np.abs(w).T
    terms = w.shape[1]
    if b is not None:
        v, absum, terms = v + b, absum + np.abs(b), terms + 1
    inputs = [x]
    if res is not None:
        v, absum, terms = v + t.value(res), absum + np.abs(t.value(res)), terms + 1
        inputs.append(res)
    local = gamma(terms + 1) * absum + (terms + 1) * TINY
    return t.add(v, local, inputs, lambda a: [a @ w] + ([a] if res is not None else []))


def layernorm(t, x, g, b, eps):
    xv = t.value(x)
    n = xv.shape[-1]
    mu = xv.mean(-1, keepdims=True)
    d = xv - mu
    e_mu = gamma(n) * np.abs(xv).sum(-1, keepdims=True) / n + U * np.abs(mu)
    e_d = e_mu + U * np.abs(d)
    ss = (d * d).sum(-1, keepdims=True)
    e_ss = (2 * np.abs(d) * e_d).sum(-1, keepdims=True) + gamma(n + 1) * ss
    var = ss / n + eps
    e_var = e_ss / n + U * ss / n + U * var + U * eps  # /n, + eps, and eps itself rounded to float32
    r = var ** -0.5
    e_r = r * (0.5 * e_var / var + 2 * U)             # 1/√: half the relative error, then √ and / round
    xh = d * r
    y = xh * g + b
    local = np.abs(g) * (e_d * r + np.abs(d) * e_r) + U * np.abs(xh) + U * np.abs(xh * g) + U * np.abs(y)

    def vjp(a):
        ag = a * g
        return [r * (ag - ag.mean(-1, keepdims=True) - xh * (ag * xh).mean(-1, keepdims=True))]
    return t.add(y, local, [x], vjp)


def rmsnorm(t, x, w, eps):
    xv = t.value(x)
    n = xv.shape[-1]
    ss = (xv * xv).sum(-1, keepdims=True)
    var = ss / n + eps
    e_var = gamma(n + 1) * ss / n + U * ss / n + U * var + U * eps
    r = var ** -0.5
    e_r = r * (0.5 * e_var / var + 2 * U)
    y = xv * r * w
    local = np.abs(w) * np.abs(xv) * e_r + U * np.abs(xv * r) + U * np.abs(y)

    def vjp(a):
        aw = a * w
        return [aw * r - xv * r ** 3 * (aw * xv).sum(-1, keepdims=True) / n]
    return t.add(y, local, [x], vjp)


def gelu_tanh(t, x):
    xv = t.value(x)
    c, k = math.sqrt(2 / math.pi), 0.044715
    x3 = np.abs(xv) ** 3
    z = c * (xv + k * xv ** 3)
    th = np.tanh(z)
    y = 0.5 * xv * (1 + th)
    dy = 0.5 * (1 + th) + 0.5 * xv * (1 - th * th) * c * (1 + 3 * k * xv * xv)
    # z = c·(x + (k·x)·(x·x)): three roundings in the cube, one in the sum, one in the product, and the two
    # constants rounded to float32; tanh within TANH_ERR; 1 + tanh and the final product round once each.
    ez = c * (gamma(3) * k * x3 + U * np.abs(xv + k * xv ** 3)) + 2 * U * np.abs(z) + U * c * k * x3
    et = (1 - th * th) * ez + TANH_ERR * np.abs(th)
    local = 0.5 * np.abs(xv) * (et + U * np.abs(1 + th)) + 2 * U * np.abs(y)
    return t.add(y, local, [x], lambda a: [a * dy])


_erfc = np.vectorize(math.erfc, otypes=[float])


def gelu_erf(t, x):
    """The exact GELU, x·Φ(x) = ½x·(1 + erf(x/√2)) (transformers' "gelu"), Φ as ½·erfc(−x/√2) in float64."""
    xv = t.value(x)
    z = np.abs(xv) / math.sqrt(2)
    ec = _erfc(z)
    phi = 0.5 * _erfc(-xv / math.sqrt(2))
    y = xv * phi
    dy = phi + xv * np.exp(-0.5 * xv * xv) / math.sqrt(2 * math.pi)
    # The kernel's Φ (erf_simd.h), z = |x|·(1/√2) within 1.3u relative (the constant and the product rounded):
    #   z < 1: erf z within 3u·erf z, plus z's error through erf′ ≤ 2/√π (1.5u·z); 1 − erf z rounds; Φ = ½·that;
    #   z ≥ 1: erfc z within (13 + 2z²)u relative, plus z's error through |z·erfc′/erfc| ≤ 2z² + 2: (16 + 5z²)u;
    #   x > 0 adds the rounding of 1 − ½·erfc z. Then x·Φ rounds, and erfc's exp flushes below 2⁻¹²⁶.
    small = 0.5 * U * (3 * (1 - ec) + 1.5 * z + ec)
    large = 0.5 * ec * (16 + 5 * z * z) * U
    e_phi = np.where(z < 1, small, large) + np.where(xv > 0, U * phi, 0)
    local = np.abs(xv) * (e_phi + FLUSH) + U * np.abs(y) + TINY
    return t.add(y, local, [x], lambda a: [a * dy])


def silu_mul(t, g, up):
    gv, uv = t.value(g), t.value(up)
    sig = 1 / (1 + np.exp(-gv))
    s = gv * sig
    ds = sig * (1 + gv * (1 - sig))
    # e^(−|g|) within EXP_ERR, in numerator and denominator; 1 + e, g·e, the quotient and ·up round once each.
    y = s * uv
    local = np.abs(uv) * (np.abs(s) * (2 * EXP_ERR + 3 * U) + np.abs(gv) * FLUSH) + U * np.abs(y)
    return t.add(y, local, [g, up], lambda a: [a * uv * ds, a * s])


def rope(t, x, heads, theta):
    """x [n, heads·dh], half-split pairs (i, i + dh/2) of each head at positions 0…"""
    xv = t.value(x)
    n = xv.shape[0]
    dh = xv.shape[1] // heads
    half = dh // 2
    inv = theta ** (-np.arange(half) * 2.0 / dh)
    ang = np.arange(n)[:, None] * inv[None, :]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    xr = xv.reshape(n, heads, dh)
    a, b = xr[..., :half], xr[..., half:]
    y = np.concatenate([a * c - b * s, b * c + a * s], -1).reshape(n, heads * dh)
    # Two products and a difference, each rounded (2u(|ac| + |bs|)(1 + u)), the tables within u·|cos|, u·|sin| + η.
    la = 3.01 * U * (np.abs(a * c) + np.abs(b * s)) + (np.abs(a) + np.abs(b)) * ROPE_ETA
    lb = 3.01 * U * (np.abs(b * c) + np.abs(a * s)) + (np.abs(a) + np.abs(b)) * ROPE_ETA
    local = np.concatenate([la, lb], -1).reshape(n, heads * dh)

    def vjp(adj):  # the transpose of the rotation: by −θ
        ar = adj.reshape(adj.shape[0], n, heads, dh)
        p, q = ar[..., :half], ar[..., half:]
        return [np.concatenate([p * c + q * s, q * c - p * s], -1).reshape(adj.shape)]
    return t.add(y, local, [x], vjp)


def columns(t, x, start, width):
    """Columns start … start + width − 1 of a node (GPT-2's c_attn output split into q, k, v): exact."""
    xv = t.value(x)

    def vjp(a):
        g = np.zeros(a.shape[:-1] + (xv.shape[-1],))
        g[..., start:start + width] = a
        return [g]
    return t.add(xv[:, start:start + width], np.zeros((xv.shape[0], width)), [x], vjp)


def attention(t, q, k, v, H, G, scale, window):
    """q [n, H·dh], k/v [n, G·dh]; causal, and keys j > i − window when window. Returns the output [n, H·dh] and
    the weights' node [H, n, n]."""
    qv, kv, vv = t.value(q), t.value(k), t.value(v)
    n = qv.shape[0]
    dh = qv.shape[1] // H
    Q, K, V = qv.reshape(n, H, dh), kv.reshape(n, G, dh), vv.reshape(n, G, dh)
    grp = [h * G // H for h in range(H)]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    seen = j <= i
    if window:
        seen = seen & (j > i - window)
    # Scores: a dot product of dh terms (γ(dh + 1): the streaming kernel scales q first), the scale rounded to
    # float32 and the product and the mask's add rounding once each.
    S = np.stack([Q[:, h] @ K[:, grp[h]].T * scale for h in range(H)])
    SA = np.stack([np.abs(Q[:, h]) @ np.abs(K[:, grp[h]]).T * scale for h in range(H)])
    S_local = np.where(seen, gamma(dh + 1) * SA + 3 * U * np.abs(S) + dh * TINY, 0)

    def s_vjp(a):  # a [B, H, n, n]
        aq = np.zeros((a.shape[0], n, H, dh))
        ak = np.zeros((a.shape[0], n, G, dh))
        for h in range(H):
            ah = np.where(seen, a[:, h], 0)
            aq[:, :, h] = scale * ah @ K[:, grp[h]]
            ak[:, :, grp[h]] += scale * np.swapaxes(ah, 1, 2) @ Q[:, h]
        return [aq.reshape(a.shape[0], n, H * dh), ak.reshape(a.shape[0], n, G * dh)]
    s_node = t.add(S, S_local, [q, k], s_vjp)

    # Softmax rows (tests/native/reference.h): exp within EXP_ERR of e^z, z = s − max rounded (2u·|z|: the
    # subtraction, and the streaming kernel's multiply), the sum's γ(n), 1/sum and the product, and the streaming
    # kernel's rescales of partial sums (6u per 64 keys).
    Sm = np.where(seen, S, -np.inf)
    z = Sm - Sm.max(-1, keepdims=True)
    P = np.exp(z)
    P /= P.sum(-1, keepdims=True)
    zabs = np.where(seen, np.abs(np.where(seen, z, 0)), 0)
    extra = math.ceil(n / 64) * 6 * U
    nseen = seen.sum(-1)
    dz = 2 * U * zabs
    sum_err = (P * (dz + EXP_ERR)).sum(-1, keepdims=True) + gamma(nseen)[None, :, None] + extra
    rel = dz + EXP_ERR + sum_err + 2 * U + extra
    P_local = np.where(seen, P * (rel + rel * rel) + FLUSH, 0)

    def p_vjp(a):
        return [P * (a - (a * P).sum(-1, keepdims=True))]
    p_node = t.add(P, P_local, [s_node], p_vjp)

    # Output: Σⱼ pⱼ·vⱼ with γ(n + 2) on Σ|p·v| (the sum and the final normalization).
    O = np.stack([P[h] @ V[:, grp[h]] for h in range(H)], 1)  # [n, H, dh]
    OA = np.stack([P[h] @ np.abs(V[:, grp[h]]) for h in range(H)], 1)
    O_local = gamma(n + 2) * OA + (n + 1) * TINY

    def o_vjp(a):  # a [B, n, H·dh]
        ar = a.reshape(a.shape[0], n, H, dh)
        ap = np.stack([ar[:, :, h] @ V[:, grp[h]].T for h in range(H)], 1)
        av = np.zeros((a.shape[0], n, G, dh))
        for h in range(H):
            av[:, :, grp[h]] += P[h].T @ ar[:, :, h]
        return [ap, av.reshape(a.shape[0], n, G * dh)]
    o_node = t.add(O.reshape(n, H * dh), O_local.reshape(n, H * dh), [p_node, v], o_vjp)
    return o_node, p_node


def forward_gpt2(P, c, ids, delta=0):
    pre = 'transformer.' if 'transformer.wte.weight' in P else ''
    w = lambda name: P[pre + name]
    d, H, L, eps = c['n_embd'], c['n_head'], c['n_layer'], c['layer_norm_epsilon']
    t = Tape()
    x0 = w('wte.weight')[ids] + w('wpe.weight')[:len(ids)] + delta
    x = t.add(x0, U * np.abs(x0))
    maps = []
    for l in range(L):
        h = layernorm(t, x, w(f'h.{l}.ln_1.weight'), w(f'h.{l}.ln_1.bias'), eps)
        qkv = linear(t, h, w(f'h.{l}.attn.c_attn.weight').T, w(f'h.{l}.attn.c_attn.bias'))  # Conv1D: [in, out]
        q, k, v = (columns(t, qkv, i * d, d) for i in range(3))
        t.qkv.append((q, k, v))
        o, p = attention(t, q, k, v, H, H, 1 / math.sqrt(d // H), 0)
        maps.append(p)
        x = linear(t, o, w(f'h.{l}.attn.c_proj.weight').T, w(f'h.{l}.attn.c_proj.bias'), x)
        h = layernorm(t, x, w(f'h.{l}.ln_2.weight'), w(f'h.{l}.ln_2.bias'), eps)
        act = gelu_erf if c['activation_function'] in ('gelu', 'gelu_python') else gelu_tanh
        f = act(t, linear(t, h, w(f'h.{l}.mlp.c_fc.weight').T, w(f'h.{l}.mlp.c_fc.bias')))
        x = linear(t, f, w(f'h.{l}.mlp.c_proj.weight').T, w(f'h.{l}.mlp.c_proj.bias'), x)
    h = layernorm(t, x, w('ln_f.weight'), w('ln_f.bias'), eps)
    return t, linear(t, h, w('wte.weight')), maps


def forward_llama(P, c, ids, delta=0):
    d, H, G, L = c['hidden_size'], c['num_attention_heads'], c['num_key_value_heads'], c['num_hidden_layers']
    dh = c.get('head_dim') or d // H
    eps, theta = c['rms_norm_eps'], c.get('rope_theta', 10000.0)
    window = c.get('sliding_window') or 0 if c['model_type'] == 'mistral' else 0
    t = Tape()
    x = t.add(P['model.embed_tokens.weight'][ids] + delta, np.zeros((len(ids), d)))
    maps = []
    for l in range(L):
        p = f'model.layers.{l}.'
        h = rmsnorm(t, x, P[p + 'input_layernorm.weight'], eps)
        q = linear(t, h, P[p + 'self_attn.q_proj.weight'], P.get(p + 'self_attn.q_proj.bias'))
        k = linear(t, h, P[p + 'self_attn.k_proj.weight'], P.get(p + 'self_attn.k_proj.bias'))
        v = linear(t, h, P[p + 'self_attn.v_proj.weight'], P.get(p + 'self_attn.v_proj.bias'))
        q, k = rope(t, q, H, theta), rope(t, k, G, theta)
        t.qkv.append((q, k, v))
        o, pm = attention(t, q, k, v, H, G, 1 / math.sqrt(dh), window)
        maps.append(pm)
        x = linear(t, o, P[p + 'self_attn.o_proj.weight'], P.get(p + 'self_attn.o_proj.bias'), x)
        h = rmsnorm(t, x, P[p + 'post_attention_layernorm.weight'], eps)
        g = linear(t, h, P[p + 'mlp.gate_proj.weight'], P.get(p + 'mlp.gate_proj.bias'))
        u = linear(t, h, P[p + 'mlp.up_proj.weight'], P.get(p + 'mlp.up_proj.bias'))
        x = linear(t, silu_mul(t, g, u), P[p + 'mlp.down_proj.weight'], P.get(p + 'mlp.down_proj.bias'), x)
    h = rmsnorm(t, x, P['model.norm.weight'], eps)
    head = P['model.embed_tokens.weight'] if c.get('tie_word_embeddings') else P['lm_head.weight']
    return t, linear(t, h, head), maps


def run(P, c, ids, delta=0):
    return (forward_gpt2 if c['model_type'] == 'gpt2' else forward_llama)(P, c, np.asarray(ids), delta)


def check_vjps(P, c, ids, rng):
    """Every vector-Jacobian product on the path from the embeddings to the logits against central differences:
    the adjoints are what the bounds are built from. Returns the relative disagreement."""
    t, out, _ = run(P, c, ids)
    r = rng.standard_normal(t.value(out).shape)
    x0 = t.value(0)
    g = t.gradient(out, r, 0)
    delta = rng.standard_normal(x0.shape)
    eps = 1e-6
    f = lambda sign: (r * run(P, c, ids, sign * eps * delta)[0].value(out)).sum()
    fd = (f(1) - f(-1)) / (2 * eps)
    return abs(fd - (g * delta).sum()) / abs(fd)


def logits_with_bounds(P, c, ids, rows=None):
    """The logits (of the rows `rows`, default all) and their bounds; the tape and the attention maps' nodes."""
    t, out, maps = run(P, c, ids)
    v = t.value(out)
    n, V = v.shape
    rows = np.arange(n) if rows is None else np.atleast_1d(rows)
    b = t.bound(out, (rows[:, None] * V + np.arange(V)[None, :]).reshape(-1)).reshape(len(rows), V) * SECOND_ORDER
    assert b.max() <= 1e-3 * np.abs(v).max(), f'the logits bound {b.max():.3g} is not small against the logits'
    return v[rows], b, t, maps


def attention_with_bounds(t, maps):
    W = np.stack([t.value(m) for m in maps])
    B = np.stack([t.bound(m).reshape(t.value(m).shape) for m in maps]) * SECOND_ORDER
    return W, B


def qkv_with_bounds(t):
    """Every layer's q, k and v (after the biases and RoPE) flattened end to end, and their bounds: each element's
    Σ |adjoint|·local over the operations before it (Tape.bound), as for the logits."""
    values, bounds = [], []
    for nodes in t.qkv:
        for node in nodes:
            values.append(t.value(node).reshape(-1))
            bounds.append(t.bound(node) * SECOND_ORDER)
    return np.concatenate(values), np.concatenate(bounds)


def greedy(P, c, prompt, steps):
    """The float64 greedy continuation and the smallest margin (v₁ − e₁) − max_{j≠1}(vⱼ + eⱼ) over its steps: when
    positive at every step, a float32 engine within the bounds must pick the same token (the first largest logit)."""
    ids, margin = list(prompt), np.inf
    for _ in range(steps):
        v, e, _, _ = logits_with_bounds(P, c, ids, rows=len(ids) - 1)
        v, e = v[0], e[0]
        top = int(np.argmax(v))
        margin = min(margin, (v[top] - e[top]) - np.delete(v + e, top).max())
        ids.append(top)
    return ids[len(prompt):], margin


# ---------------------------------------------------------------------------------------------------- the cases

def gpt2_params(rng, c, prefix, buffers):
    d, f, V, L = c['n_embd'], c.get('n_inner') or 4 * c['n_embd'], c['vocab_size'], c['n_layer']
    P = {}
    nrm = lambda *s, sd=1.0: rng.standard_normal(s) * sd
    P[prefix + 'wte.weight'] = nrm(V, d, sd=0.6)
    P[prefix + 'wpe.weight'] = nrm(c['n_positions'], d, sd=0.3)
    for l in range(L):
        h = f'{prefix}h.{l}.'
        P[h + 'ln_1.weight'] = 1 + nrm(d, sd=0.1)
        P[h + 'ln_1.bias'] = nrm(d, sd=0.1)
        P[h + 'attn.c_attn.weight'] = nrm(d, 3 * d, sd=1.5 / math.sqrt(d))  # Conv1D: [in, out]
        P[h + 'attn.c_attn.bias'] = nrm(3 * d, sd=0.1)
        P[h + 'attn.c_proj.weight'] = nrm(d, d, sd=0.5 / math.sqrt(d))
        P[h + 'attn.c_proj.bias'] = nrm(d, sd=0.1)
        P[h + 'ln_2.weight'] = 1 + nrm(d, sd=0.1)
        P[h + 'ln_2.bias'] = nrm(d, sd=0.1)
        P[h + 'mlp.c_fc.weight'] = nrm(d, f, sd=1 / math.sqrt(d))
        P[h + 'mlp.c_fc.bias'] = nrm(f, sd=0.1)
        P[h + 'mlp.c_proj.weight'] = nrm(f, d, sd=0.5 / math.sqrt(f))
        P[h + 'mlp.c_proj.bias'] = nrm(d, sd=0.1)
        if buffers:  # what older exports saved: the causal mask and its fill value (the engine skips them)
            P[h + 'attn.bias'] = np.tril(np.ones((c['n_positions'], c['n_positions'])))[None, None]
            P[h + 'attn.masked_bias'] = np.array(-1e4)
    P[prefix + 'ln_f.weight'] = 1 + nrm(d, sd=0.1)
    P[prefix + 'ln_f.bias'] = nrm(d, sd=0.1)
    return P


def llama_params(rng, c):
    d, f, V, L = c['hidden_size'], c['intermediate_size'], c['vocab_size'], c['num_hidden_layers']
    H, G = c['num_attention_heads'], c['num_key_value_heads']
    dh = c.get('head_dim') or d // H
    qkv_bias = c['model_type'] == 'qwen2' or c.get('attention_bias')
    nrm = lambda *s, sd=1.0: rng.standard_normal(s) * sd
    P = {'model.embed_tokens.weight': nrm(V, d, sd=1.0)}
    for l in range(L):
        p = f'model.layers.{l}.'
        P[p + 'input_layernorm.weight'] = 1 + nrm(d, sd=0.1)
        P[p + 'self_attn.q_proj.weight'] = nrm(H * dh, d, sd=1.5 / math.sqrt(d))
        P[p + 'self_attn.k_proj.weight'] = nrm(G * dh, d, sd=1.5 / math.sqrt(d))
        P[p + 'self_attn.v_proj.weight'] = nrm(G * dh, d, sd=1 / math.sqrt(d))
        if qkv_bias:
            for t in 'qkv':
                P[p + f'self_attn.{t}_proj.bias'] = nrm((H if t == 'q' else G) * dh, sd=0.2)
        P[p + 'self_attn.o_proj.weight'] = nrm(d, H * dh, sd=0.5 / math.sqrt(H * dh))
        if c.get('attention_bias'):
            P[p + 'self_attn.o_proj.bias'] = nrm(d, sd=0.1)
        P[p + 'post_attention_layernorm.weight'] = 1 + nrm(d, sd=0.1)
        P[p + 'mlp.gate_proj.weight'] = nrm(f, d, sd=1.5 / math.sqrt(d))
        P[p + 'mlp.up_proj.weight'] = nrm(f, d, sd=1 / math.sqrt(d))
        P[p + 'mlp.down_proj.weight'] = nrm(d, f, sd=0.5 / math.sqrt(f))
        if c.get('mlp_bias'):
            P[p + 'mlp.gate_proj.bias'] = nrm(f, sd=0.1)
            P[p + 'mlp.up_proj.bias'] = nrm(f, sd=0.1)
            P[p + 'mlp.down_proj.bias'] = nrm(d, sd=0.1)
    P['model.norm.weight'] = 1 + nrm(d, sd=0.1)
    if not c.get('tie_word_embeddings'):
        P['lm_head.weight'] = nrm(V, d, sd=1.0 / math.sqrt(d) * 3)
    return P


def gpt2_config(**kw):
    c = {'architectures': ['GPT2LMHeadModel'], 'model_type': 'gpt2', 'activation_function': 'gelu_new',
         'layer_norm_epsilon': 1e-5, 'n_inner': None, 'bos_token_id': 0, 'eos_token_id': 1}
    c.update(kw)
    return c


def llama_config(arch, model_type, **kw):
    c = {'architectures': [arch], 'model_type': model_type, 'hidden_act': 'silu', 'rms_norm_eps': 1e-6,
         'rope_theta': 10000.0, 'rope_scaling': None, 'tie_word_embeddings': False, 'bos_token_id': 0, 'eos_token_id': 1}
    c.update(kw)
    return c


# name: (config, dtype of matrices, shards, prompt length of the forward, GPT-2 prefix/buffers)
CASES = {
    # GPT-2: d 20 (heads of 5: not a multiple of 4), vocab 37 (not a multiple of the 8-row panels), F32, the
    # "transformer." prefix and the attention buffers older exports saved.
    'gpt2-f32': (gpt2_config(vocab_size=37, n_positions=48, n_embd=20, n_layer=2, n_head=4), 'F32', 1, 13, True),
    # GPT-2 without the prefix, F16, heads of 8, an MLP of 44 (n_inner given), 3 layers.
    'gpt2-f16': (gpt2_config(vocab_size=50, n_positions=48, n_embd=16, n_layer=3, n_head=2, n_inner=44), 'F16', 1, 9, False),
    # Llama: GQA (4 query heads over 2), head width 8, tied embeddings, BF16.
    'llama-tied-bf16': (llama_config('LlamaForCausalLM', 'llama', vocab_size=41, hidden_size=32, intermediate_size=44,
                                     num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                     max_position_embeddings=64, tie_word_embeddings=True), 'BF16', 1, 12, None),
    # Llama: untied head, head_dim 12 given (q width 48 ≠ hidden 40), attention and MLP biases, F32, three shards.
    'llama-untied-sharded': (llama_config('LlamaForCausalLM', 'llama', vocab_size=45, hidden_size=40, intermediate_size=36,
                                          num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, head_dim=12,
                                          max_position_embeddings=64, attention_bias=True, mlp_bias=True,
                                          rope_theta=500.0), 'F32', 3, 5, None),
    # Qwen2: q/k/v biases, 6 heads over 2 of width 4 (exactly one SIMD vector), F16, tied.
    'qwen2-f16': (llama_config('Qwen2ForCausalLM', 'qwen2', vocab_size=33, hidden_size=24, intermediate_size=40,
                               num_hidden_layers=2, num_attention_heads=6, num_key_value_heads=2,
                               max_position_embeddings=64, tie_word_embeddings=True, use_sliding_window=False,
                               rope_theta=1000000.0), 'F16', 2, 8, None),
    # Mistral: a sliding window of 6 over 136 tokens (past one 128-key tile of the attention kernels), one K/V head.
    'mistral-window': (llama_config('MistralForCausalLM', 'mistral', vocab_size=29, hidden_size=32, intermediate_size=48,
                                    num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
                                    max_position_embeddings=192, sliding_window=6), 'F32', 1, 136, None),
    # GPT-2 with the exact erf GELU ("gelu", as the explorer's model has): F32, heads of 8, one layer, an MLP of 96
    # with larger weights (MLP_GAIN): pre-activations of about 2.5 on both sides of the erf kernel's branch at
    # |x|/√2 = 1, where the tanh form is furthest from the exact GELU (4.7e-4 at |x| = 2.7), and an MLP that weighs
    # in the logits, so that the tanh form's logits fall outside these bounds (up to 2×).
    'gpt2-gelu': (gpt2_config(vocab_size=43, n_positions=48, n_embd=24, n_layer=1, n_head=3, activation_function='gelu'),
                  'F32', 1, 11, False),
}
# Factors on a case's GPT-2 MLP weights (c_fc, c_proj), drawn as gpt2_params draws them.
MLP_GAIN = {'gpt2-gelu': (2.5, 3.0)}
GREEDY_STEPS = 32
EDGE_ROWS = 12
ATTENTION_TOKENS = 16


def write_case(out, name, seed):
    c, dtype, shards, n, gpt2_extra = CASES[name]
    folder = os.path.join(out, name)
    rng = np.random.default_rng(seed)
    if c['model_type'] == 'gpt2':
        params = gpt2_params(rng, c, 'transformer.' if gpt2_extra else '', gpt2_extra)
        fc, proj = MLP_GAIN.get(name, (1.0, 1.0))
        for key in params:
            params[key] *= fc if key.endswith('mlp.c_fc.weight') else proj if key.endswith('mlp.c_proj.weight') else 1.0
    else:
        params = llama_params(rng, c)
    # Matrices in the case's dtype; vectors too (a real checkpoint stores everything in one dtype), buffers F32.
    dtypes = lambda key: 'F32' if key.endswith('attn.bias') or key.endswith('masked_bias') else dtype
    P = write_checkpoint(folder, params, dtypes, shards, seed)
    with open(os.path.join(folder, 'config.json'), 'w') as f:
        json.dump(c, f, indent=2)
    if c['model_type'] != 'gpt2':
        with open(os.path.join(folder, 'generation_config.json'), 'w') as f:
            json.dump({'bos_token_id': 0, 'eos_token_id': [1, 2], 'do_sample': True, 'temperature': 0.7, 'top_k': 20,
                       'top_p': 0.9}, f)
    ids = rng.integers(3, c['vocab_size'], size=n).tolist()
    # The logits of every row of a short sequence; of a long one, its first and last rows (the bounds cost
    # a backward pass per logit: O(n²) each through attention).
    rows = np.arange(n) if n <= 2 * EDGE_ROWS else np.concatenate([np.arange(EDGE_ROWS), np.arange(n - EDGE_ROWS, n)])
    logits, el, _, _ = logits_with_bounds(P, c, ids, rows)
    # Attention maps of the first ATTENTION_TOKENS positions (a prefix's maps are the top-left block of a longer
    # sequence's: the mask is causal).
    na = min(n, ATTENTION_TOKENS)
    _, _, tape, maps = logits_with_bounds(P, c, ids[:na])
    W, eW = attention_with_bounds(tape, maps)
    QKV, eQKV = qkv_with_bounds(tape)
    # A prompt whose greedy continuation is decided at every step (margin > 0), searched over seeds.
    for attempt in range(200):
        prompt = rng.integers(3, c['vocab_size'], size=5).tolist()
        tokens, margin = greedy(P, c, prompt, GREEDY_STEPS)
        if margin > 0:
            break
    else:
        raise SystemExit(f'{name}: no prompt in 200 has a greedy continuation decided at every step')
    for fname, a in (('logits.f64', logits), ('logits_bound.f64', el), ('attention.f64', W), ('attention_bound.f64', eW),
                     ('qkv.f64', QKV), ('qkv_bound.f64', eQKV)):
        np.ascontiguousarray(a, dtype='<f8').tofile(os.path.join(folder, fname))
    L, H = W.shape[0], W.shape[1]
    dh = tape.value(tape.qkv[0][0]).shape[1] // H
    G = tape.value(tape.qkv[0][1]).shape[1] // dh
    ref = {'ids': ids, 'logit_rows': rows.tolist(), 'vocab': c['vocab_size'], 'layers': int(L), 'heads': int(H), 'attention_tokens': na,
           'kv_heads': int(G), 'head_dim': int(dh), 'prompt': prompt, 'greedy': tokens,
           'greedy_margin': float(margin), 'prompt_attempts': attempt + 1, 'dtype': dtype, 'shards': shards,
           'max_bound_relative': float(el.max() / np.abs(logits).max())}
    with open(os.path.join(folder, 'reference.json'), 'w') as f:
        json.dump(ref, f)
    return ref


def write_small(out, dtype='F16'):
    """GPT-2 small's shape with random weights (no reference): 124 M parameters, 249 MB in F16 (498 in F32)."""
    c = gpt2_config(vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, bos_token_id=50256,
                    eos_token_id=50256)
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(124)
    d, V = 768, 50257
    tensors = []

    def add(name, shape, sd, mean=0.0):
        a = rng.standard_normal(shape, dtype=np.float32) * np.float32(sd) + np.float32(mean)
        if dtype == 'BF16':  # round to nearest even, in uint32 (no float64 copy of 38 M values)
            bits = a.view(np.uint32)
            raw = ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype('<u2').tobytes()
        else:
            raw = a.astype('<f4' if dtype == 'F32' else '<f2').tobytes()
        tensors.append(('transformer.' + name, raw, dtype, shape))

    add('wte.weight', (V, d), 0.1)   # larger than GPT-2's 0.02: logits with clear winners
    add('wpe.weight', (1024, d), 0.01)
    for l in range(12):
        h = f'h.{l}.'
        add(h + 'ln_1.weight', (d,), 0.0, 1.0), add(h + 'ln_1.bias', (d,), 0.01)
        add(h + 'attn.c_attn.weight', (d, 3 * d), 0.02), add(h + 'attn.c_attn.bias', (3 * d,), 0.01)
        add(h + 'attn.c_proj.weight', (d, d), 0.02 / math.sqrt(24)), add(h + 'attn.c_proj.bias', (d,), 0.01)
        add(h + 'ln_2.weight', (d,), 0.0, 1.0), add(h + 'ln_2.bias', (d,), 0.01)
        add(h + 'mlp.c_fc.weight', (d, 4 * d), 0.02), add(h + 'mlp.c_fc.bias', (4 * d,), 0.01)
        add(h + 'mlp.c_proj.weight', (4 * d, d), 0.02 / math.sqrt(24)), add(h + 'mlp.c_proj.bias', (d,), 0.01)
    add('ln_f.weight', (d,), 0.0, 1.0), add('ln_f.bias', (d,), 0.01)
    write_safetensors(os.path.join(out, 'model.safetensors'), tensors, 0)
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump(c, f, indent=2)


def main():
    # No folder, or an option where the folder goes (--help): the usage, not a folder named after the option.
    if len(sys.argv) < 2 or sys.argv[1].startswith('-'):
        raise SystemExit(__doc__)
    out = sys.argv[1]
    if '--small' in sys.argv[2:]:
        args = sys.argv[2:]
        write_small(out, args[args.index('--dtype') + 1] if '--dtype' in args else 'F16')
        return
    names = [a for a in sys.argv[2:] if not a.startswith('--')] or list(CASES)
    if '--check' in sys.argv[2:]:  # the adjoints of each case's model against finite differences
        for name in names:
            c, dtype, _, n, extra = CASES[name]
            rng = np.random.default_rng(7)
            params = gpt2_params(rng, c, '', False) if c['model_type'] == 'gpt2' else llama_params(rng, c)
            err = check_vjps(params, c, rng.integers(0, c['vocab_size'], size=min(n, 20)), rng)
            print(f'{name}: adjoints agree with central differences to {err:.2e}')
            assert err < 1e-6
        return
    summary = {}
    for i, name in enumerate(names):
        summary[name] = write_case(out, name, 1000 + list(CASES).index(name))
    json.dump({k: {'attempts': v['prompt_attempts'], 'margin': v['greedy_margin'], 'bound': v['max_bound_relative']}
               for k, v in summary.items()}, sys.stdout)
    print()


if __name__ == '__main__':
    main()
