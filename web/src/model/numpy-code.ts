// "Copy as code": NumPy scripts that redo the attention and multi-head labs' computation from the exact
// float32 inputs on the page. Pure string building (no DOM), so it can be tested on its own.
// The scripts follow the engine's order of operations (src/core/attention.cpp, multihead.cpp): float32
// throughout, raw scores QKᵀ then one multiply by a float32 scale, the causal mask bottom-right aligned,
// softmax with the row max subtracted and a multiply by 1/sum. Only summation order and the exp
// implementation differ, so the printed numbers match the page to float32 rounding.
import { f32repr } from './float32';

/** A Python float literal for a float32 value (or a double, in full). */
function pyNum(v: number): string {
  if (Number.isNaN(v)) return 'np.nan';
  if (v === Infinity) return 'np.inf';
  if (v === -Infinity) return '-np.inf';
  const s = f32repr(v);
  return /[.eE]/.test(s) ? s : `${s}.0`; // "1" → "1.0", "-0" → "-0.0" (an int -0 would lose its sign)
}

/** A Python double literal, digit for digit the JS number (repr and String() both print the shortest round-trip). */
function pyDouble(v: number): string {
  const s = String(v);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

/** A Python str literal in plain ASCII: nothing in the text can end the literal or the line. */
export function pyStr(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** A word as a trailing comment: letters, digits and apostrophes only, so a comment stays one line. */
const commentWord = (w: string) => w.replace(/[^\p{L}\p{N}'-]/gu, '?').slice(0, 40);

function matrix(name: string, m: ArrayLike<number>, rows: number, cols: number, rowNotes?: string[]): string {
  const lines = [`${name} = np.array([`];
  for (let r = 0; r < rows; r++) {
    const cells = Array.from({ length: cols }, (_, c) => pyNum(m[r * cols + c]));
    lines.push(`    [${cells.join(', ')}],${rowNotes ? `  # ${rowNotes[r]}` : ''}`);
  }
  lines.push('], dtype=np.float32)');
  return lines.join('\n');
}

const HEADER = (what: string) => `# attnlab: ${what}, as the explorer computed it.
# Every array is float32 like the engine (C++ compiled to WebAssembly), and the steps follow the engine's
# order, so the numbers match the page up to float32 rounding (summation order, exp implementation).
import json
import math

import numpy as np

np.set_printoptions(precision=6, suppress=True)
`;

/** Causal mask and softmax of a float32 score matrix named `src`, into `A` (indented by `ind`). */
function maskAndSoftmax(src: string, ind: string, steps = ['', '']): string {
  return `${ind}# ${steps[0]}Causal mask, bottom-right aligned: query i sees keys j <= i + (n_keys - n_queries),
${ind}# which with as many keys as queries is j <= i. Masked scores become -inf.
${ind}S_masked = ${src}.copy()
${ind}if causal:
${ind}    n_q, n_k = S_masked.shape
${ind}    S_masked[np.triu(np.ones((n_q, n_k), dtype=bool), k=n_k - n_q + 1)] = -np.inf

${ind}# ${steps[1]}Softmax of each row. Subtracting the row max first keeps every exp argument <= 0, so nothing
${ind}# overflows, and a masked score (-inf) becomes a weight of exactly 0.
${ind}row_max = S_masked.max(axis=1, keepdims=True)
${ind}E = np.exp(S_masked - row_max)
${ind}A = E * (np.float32(1.0) / E.sum(axis=1, keepdims=True))  # the engine multiplies by 1/sum`;
}

export interface AttentionCodeInput {
  text: string;
  words: string[];
  n: number;
  dModel: number;
  dk: number;
  dv: number;
  x: ArrayLike<number>;
  wq: ArrayLike<number>;
  wk: ArrayLike<number>;
  wv: ArrayLike<number>;
  causal: boolean;
  scaled: boolean;
  temperature: number;
}

/** The attention lab: X, W_Q, W_K, W_V → Q, K, V → scores → scaled → masked → weights → output. */
export function attentionNumpy(p: AttentionCodeInput): string {
  const notes = p.words.map((w, i) => `${i} ${commentWord(w)}`);
  const dims = (r: number, c: number) => `(${r} x ${c})`;
  return `${HEADER('single-head self-attention')}
text = ${pyStr(p.text)}
tokens = [${p.words.map(pyStr).join(', ')}]

# Embeddings X: one row per token ${dims(p.n, p.dModel)}.
${matrix('X', p.x, p.n, p.dModel, notes)}

# Projection weights: W_Q, W_K ${dims(p.dModel, p.dk)}, W_V ${dims(p.dModel, p.dv)}.
${matrix('W_Q', p.wq, p.dModel, p.dk)}
${matrix('W_K', p.wk, p.dModel, p.dk)}
${matrix('W_V', p.wv, p.dModel, p.dv)}

causal = ${p.causal ? 'True' : 'False'}  # each token sees only itself and earlier tokens
scaled = ${p.scaled ? 'True' : 'False'}  # divide the scores by sqrt(d_k)
temperature = ${pyDouble(p.temperature)}  # tau: the scores are also divided by it

# 1. Queries, keys and values: one row per token.
Q = X @ W_Q  # (n, d_k)
K = X @ W_K  # (n, d_k)
V = X @ W_V  # (n, d_v)

# 2. Raw scores: S[i, j] = q_i . k_j, how well token i's query matches token j's key.
S = Q @ K.T  # (n, n)

# 3. Scale. The engine gets one float32 factor, (1/sqrt(d_k) if scaled else 1) / temperature,
#    computed in double precision and rounded to float32 once.
d_k = W_Q.shape[1]
scale = np.float32((1.0 / math.sqrt(d_k) if scaled else 1.0) / temperature)
S_scaled = S * scale

${maskAndSoftmax('S_scaled', '', ['4. ', '5. '])}

# 6. Output: each row is a weighted average of the value rows.
O = A @ V  # (n, d_v)

print("attention weights A =")
print(A)
print("output O = A V =")
print(O)
# Last line, machine-readable: the exact float32 results.
print(json.dumps({"weights": A.tolist(), "output": O.tolist()}))
`;
}

export interface MultiHeadCodeInput {
  text: string;
  words: string[];
  n: number;
  heads: number;
  headDim: number;
  x: ArrayLike<number>;
  wq: ArrayLike<number>;
  wk: ArrayLike<number>;
  wv: ArrayLike<number>;
  wo: ArrayLike<number>;
  causal: boolean;
}

/** The multi-head lab: per-head attention on column blocks of Q, K, V, concatenation, then W_O. */
export function multiHeadNumpy(p: MultiHeadCodeInput): string {
  const dm = p.heads * p.headDim;
  const hd = p.heads * p.headDim;
  const notes = p.words.map((w, i) => `${i} ${commentWord(w)}`);
  return `${HEADER('multi-head self-attention')}
text = ${pyStr(p.text)}
tokens = [${p.words.map(pyStr).join(', ')}]

h = ${p.heads}  # heads
d = ${p.headDim}  # width of each head: d_k = d_v = d, and d_model = h * d = ${dm}

# Embeddings X (${p.n} x ${dm}).
${matrix('X', p.x, p.n, dm, notes)}

# W_Q, W_K, W_V (${dm} x ${hd}): head i uses columns i*d ... i*d + d - 1. W_O (${hd} x ${dm}).
${matrix('W_Q', p.wq, dm, hd)}
${matrix('W_K', p.wk, dm, hd)}
${matrix('W_V', p.wv, dm, hd)}
${matrix('W_O', p.wo, hd, dm)}

causal = ${p.causal ? 'True' : 'False'}  # each token sees only itself and earlier tokens

# 1. Project once for all heads.
Q = X @ W_Q  # (n, h*d)
K = X @ W_K
V = X @ W_V

# 2. The engine's default scale, 1/sqrt(d_k), computed in float32.
scale = np.float32(1.0) / np.sqrt(np.float32(d))

weights = []
heads = []
for i in range(h):
    cols = slice(i * d, (i + 1) * d)
    S = (Q[:, cols] @ K[:, cols].T) * scale  # head i's scaled scores (n, n)
${maskAndSoftmax('S', '    ')}
    weights.append(A)
    heads.append(A @ V[:, cols])  # head i's output (n, d)

# 3. Concatenate the heads side by side, then mix them back to d_model with W_O.
concat = np.concatenate(heads, axis=1)  # (n, h*d)
O = concat @ W_O  # (n, d_model)

for i, A in enumerate(weights):
    print(f"head {i + 1} weights =")
    print(A)
print("output = Concat(heads) W_O =")
print(O)
# Last line, machine-readable: the exact float32 results.
print(json.dumps({"weights": [A.tolist() for A in weights], "output": O.tolist()}))
`;
}
