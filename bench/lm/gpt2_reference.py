"""GPT-2's forward in float64 (transformers' modeling_gpt2.py written out with NumPy), with an error bound.

Alongside every activation the forward carries the variance of the error a float32 implementation of the same
forward, on the same float32 weights, would have: the probabilistic model of rounding (Higham & Mary, "A new
approach to probabilistic rounding error analysis", SIAM J. Sci. Comput. 2019): every rounding an independent
error of at most u = 2⁻²⁴ relative, so a sum of k terms t_i errs with variance ≤ k·u²·Σ t_i² (sums of positive
terms: k·u²·(Σ t_i)²), in any order, with or without FMA; errors already in the inputs go through each
operation's derivative (δy = δx·W: variance Σ var(δx_i)·W_ij²); LayerNorm: δx̂ = (δx − mean δx − x̂·mean(x̂·δx))/σ;
softmax: δp_i = p_i·(δs_i − Σ p_j·δs_j); exp and tanh within C_FN ulps (an assumption about the runtimes'
elementary functions: libm and SIMD polynomial kernels are within 1–4 ulps; 16 leaves room for online softmax,
which rescales its running sums by one more exp per block of keys). The bound is LAMBDA = 6 standard deviations:
under the model a sum of many small independent errors, past 6 σ with probability 2·10⁻⁹ per logit (the bench
checks at most 10⁵ logits a run), and each term's size is overestimated, not guessed.

How tight, on the self-check's model (3 layers): onnxruntime-web and tfjs-wasm stay within 0.04–0.05 of the
bound (0.3 σ); the tfjs forward with an erf GELU in place of gelu_new is 17 bounds away, with the causal mask one
key too wide 25 000, and onnxruntime-web fed positions off by one in its decode steps 70 000.
"""
import numpy as np

U = 2.0 ** -24
C_FN = 16
LAMBDA = 6


def layer_norm(x, v, g, b, eps):
    n = x.shape[-1]
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    var = (xc * xc).mean(-1, keepdims=True)
    sigma = np.sqrt(var + eps)
    xh = xc / sigma
    y = xh * g + b
    # the input's error: δx̂ = (δx − mean δx − x̂·mean(x̂·δx)) / σ (the three parts' deviations added)
    sd = (np.sqrt(v) + np.sqrt(v.sum(-1, keepdims=True)) / n
          + np.abs(xh) * np.sqrt((xh * xh * v).sum(-1, keepdims=True)) / n) / sigma
    # LayerNorm's own rounding: the mean (n terms), the variance (n positive terms: relative √n·u, half of it in σ),
    # sqrt, + eps, the subtraction and the division
    ms = (x * x).mean(-1, keepdims=True)
    sd = sd + U * np.sqrt(ms) / sigma + np.abs(xh) * (np.sqrt(n) * U * ms / (2 * (var + eps)) + 4 * U)
    return y, g * g * sd * sd + (U * xh * g) ** 2 + (U * y) ** 2


def linear(x, v, w, b):
    k = w.shape[0]
    w2 = w * w
    y = x @ w + b
    # (the input's variance and the product's own rounding go through W² in one product)
    return y, (v + (k + 1) * U * U * (x * x)) @ w2 + (k + 1) * U * U * b * b + (U * y) ** 2


def gelu_new(x, v):
    c = np.sqrt(2 / np.pi)
    inner = c * (x + 0.044715 * x ** 3)
    t = np.tanh(inner)
    y = 0.5 * x * (1 + t)
    dydx = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x)
    # rounding of x³ (2 products), the scale, the sum and c·(…): within 5u of c·(|x| + 0.044715·|x|³); tanh
    # within C_FN ulps; 1 + t, the halving and the product
    d_inner = 5 * U * c * (np.abs(x) + 0.044715 * np.abs(x) ** 3)
    d_t = (1 - t * t) * d_inner + C_FN * U * np.abs(t)
    rounding = 0.5 * np.abs(x) * (d_t + U * (1 + np.abs(t))) + 3 * U * np.abs(y)
    return y, dydx * dydx * v + rounding * rounding


def attention(q, vq, k, vk, v, vv, past):
    """One head: q [S, dh] at positions past … past + S − 1, k and v [T, dh] (T = past + S), causal."""
    S, dh = q.shape
    T = k.shape[0]
    scale = 1 / np.sqrt(dh)
    s = (q @ k.T) * scale
    vs = (vq @ (k * k).T + (q * q) @ vk.T + dh * U * U * ((q * q) @ (k * k).T)) * scale * scale + (U * s) ** 2
    allowed = np.arange(T)[None, :] <= (past + np.arange(S))[:, None]
    s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    p /= p.sum(-1, keepdims=True)
    vs = np.where(allowed, vs + (U * np.where(allowed, s - m, 0)) ** 2, 0)
    # δp_i = p_i·(δs_i − Σ p_j·δs_j); exp within C_FN ulps, the sum of T positive terms, the division
    sd_p = p * (np.sqrt(vs) + np.sqrt((p * p * vs).sum(-1, keepdims=True))) + p * U * (C_FN + np.sqrt(T) + 1)
    out = p @ v
    vout = (sd_p * sd_p) @ (v * v) + (p * p) @ vv + T * U * U * ((p * p) @ (v * v))
    return out, vout


def forward(w, cfg, ids, head_rows=None):
    """Logits [rows, vocab] (float64) and their bound, for token ids `ids` at positions 0 … n − 1.

    head_rows: the rows whose logits are wanted (all by default); the layers run on every row either way.
    """
    D, H, L = cfg["n_embd"], cfg["n_head"], cfg["n_layer"]
    eps = cfg["layer_norm_epsilon"]
    dh = D // H
    n = len(ids)
    W = lambda name: w["transformer." + name]  # noqa: E731
    x = W("wte.weight")[ids] + W("wpe.weight")[np.arange(n)]
    v = (U * x) ** 2
    for i in range(L):
        p = f"h.{i}."
        a, va = layer_norm(x, v, W(p + "ln_1.weight"), W(p + "ln_1.bias"), eps)
        qkv, vqkv = linear(a, va, W(p + "attn.c_attn.weight"), W(p + "attn.c_attn.bias"))
        ctx, vctx = np.zeros((n, D)), np.zeros((n, D))
        for h in range(H):
            q, k, val = (slice(j * D + h * dh, j * D + (h + 1) * dh) for j in range(3))
            o, vo = attention(qkv[:, q], vqkv[:, q], qkv[:, k], vqkv[:, k], qkv[:, val], vqkv[:, val], 0)
            ctx[:, h * dh:(h + 1) * dh], vctx[:, h * dh:(h + 1) * dh] = o, vo
        y, vy = linear(ctx, vctx, W(p + "attn.c_proj.weight"), W(p + "attn.c_proj.bias"))
        x, v = x + y, v + vy + (U * (x + y)) ** 2
        a, va = layer_norm(x, v, W(p + "ln_2.weight"), W(p + "ln_2.bias"), eps)
        f, vf = linear(a, va, W(p + "mlp.c_fc.weight"), W(p + "mlp.c_fc.bias"))
        g, vg = gelu_new(f, vf)
        y, vy = linear(g, vg, W(p + "mlp.c_proj.weight"), W(p + "mlp.c_proj.bias"))
        x, v = x + y, v + vy + (U * (x + y)) ** 2
    if head_rows is not None:
        x, v = x[head_rows], v[head_rows]
    a, va = layer_norm(x, v, W("ln_f.weight"), W("ln_f.bias"), eps)
    wte = W("wte.weight")
    logits = a @ wte.T
    sd = np.sqrt((va + D * U * U * (a * a)) @ (wte * wte).T)
    return logits, LAMBDA * sd


def decided(logits, bound):
    """Whether the argmax is the same for every value within the bound: top − its bound > every other + bound."""
    top = int(np.argmax(logits))
    others = np.delete(logits + bound, top)
    return top, bool(logits[top] - bound[top] > others.max())


def greedy(w, cfg, prompt, steps):
    """Greedy tokens after `prompt`, each from a full forward in float64; also whether each choice is decided
    by the bound (a float32 runtime within the bound must then choose the same token)."""
    ids, tokens, sure = list(prompt), [], []
    for _ in range(steps):
        logits, bound = forward(w, cfg, np.array(ids), head_rows=[len(ids) - 1])
        top, ok = decided(logits[0], bound[0])
        tokens.append(top)
        sure.append(ok)
        ids.append(top)
    return tokens, sure
