// What each layer × head attends to, measured: the mean share of a query's attention that goes where a pattern
// says, from the engine's own attention weights (GPT.forward with returnAttention) on held-out text.
//   previousToken  the token just before the query                    (queries 1 … t−1 of held-out windows)
//   firstToken     the window's first token, where heads park attention when nothing else fits ("attention sink")
//   sameWord       earlier tokens of the query's own word (GPT-2's pre-token piece: " under" + "stand" + "ing"),
//                  over the queries that continue a word
//   duplicateToken earlier tokens equal to the query's token, over the queries whose token occurred before
//   induction      on a random token sequence shown twice, the token after the query's earlier occurrence
//                  (queries of the second copy): the pattern that lets a model continue what it saw before
//                  (Olsson et al., "In-context Learning and Induction Heads", 2022)
// Each score has a chance level: the same share under uniform causal attention over the same queries.
// A head is named for a pattern when its score is at least THRESHOLD and at least RATIO times chance (the pattern
// then takes most of what the head attends to: no other single kind of key can take as much); sameWord needs
// more than its previous-token score, since in a two-token word the word's earlier token is the previous token.
import { rng } from './recipe.mjs';

export const THRESHOLD = 0.4;
export const RATIO = 4;
export const PATTERNS = ['previousToken', 'firstToken', 'sameWord', 'duplicateToken', 'induction'];

// Accumulates Σ share and Σ chance per layer × head for one pattern.
function tally(L, H) {
  return { share: Array.from({ length: L }, () => new Float64Array(H)), chance: 0, queries: 0 };
}

/**
 * Runs the windows through the model and adds each query's shares. `targets(b, i)` → the key positions the
 * pattern names for query i of window b (or null: the query does not count).
 */
function measure(gpt, windows, patterns) {
  const { layers: L, heads: H } = gpt.config, T = windows[0].length;
  const out = Object.fromEntries(Object.keys(patterns).map((p) => [p, tally(L, H)]));
  for (let b0 = 0; b0 < windows.length; b0 += 4) {
    const group = windows.slice(b0, b0 + 4), tokens = new Int32Array(group.length * T);
    group.forEach((w, b) => tokens.set(w, b * T));
    const { attention } = gpt.forward(tokens, { batch: group.length, returnAttention: true });
    group.forEach((_, b) => {
      for (const [name, targets] of Object.entries(patterns)) {
        const t = out[name];
        for (let i = 0; i < T; ++i) {
          const keys = targets(b0 + b, i);
          if (!keys || !keys.length) continue;
          t.queries++;
          t.chance += keys.length / (i + 1);
          for (let l = 0; l < L; ++l)
            for (let h = 0; h < H; ++h) {
              const row = ((b * H + h) * T + i) * T;
              let s = 0;
              for (const j of keys) s += attention[l][row + j];
              t.share[l][h] += s;
            }
        }
      }
    });
  }
  const result = {};
  for (const [name, t] of Object.entries(out))
    result[name] = { scores: t.share.map((row) => Array.from(row, (s) => s / t.queries)), chance: t.chance / t.queries, queries: t.queries };
  return result;
}

/**
 * Scores of every head. `windows`: held-out token windows of context tokens; `words(b)`: for window b, each
 * position's word index (positions of one pre-token piece share it); `pool`: token ids to draw the random
 * sequences from; `repeats`: how many random sequences.
 */
export function headScores(gpt, { windows, words, pool, repeats = 32, seed = 4 }) {
  const T = gpt.config.context;
  const onText = measure(gpt, windows, {
    previousToken: (b, i) => (i >= 1 ? [i - 1] : null),
    firstToken: (b, i) => (i >= 1 ? [0] : null),
    sameWord: (b, i) => {
      const w = words[b];
      if (i === 0 || w[i - 1] !== w[i]) return null;
      const keys = [];
      for (let j = i - 1; j >= 0 && w[j] === w[i]; --j) keys.push(j);
      return keys;
    },
    duplicateToken: (b, i) => {
      const keys = [];
      for (let j = 0; j < i; ++j) if (windows[b][j] === windows[b][i]) keys.push(j);
      return keys.length ? keys : null;
    },
  });
  // Random sequences of half a context, shown twice. Drawn without repeats inside a copy, so every query of the
  // second copy has exactly one earlier occurrence.
  const r = rng(seed), half = T / 2, seqs = [];
  for (let n = 0; n < repeats; ++n) {
    const picked = new Set(), s = [];
    while (s.length < half) {
      const id = pool[Math.floor(r() * pool.length)];
      if (!picked.has(id)) picked.add(id), s.push(id);
    }
    seqs.push(Int32Array.from([...s, ...s]));
  }
  const induction = measure(gpt, seqs, { induction: (b, i) => (i >= half ? [i - half + 1] : null) }).induction;
  return { ...onText, induction };
}

/** Each head's name: the patterns whose score passes the rule above (usually one, or none). */
export function nameHeads(scores, L, H) {
  const names = [];
  for (let l = 0; l < L; ++l)
    for (let h = 0; h < H; ++h) {
      const passed = PATTERNS.filter((p) => {
        const s = scores[p].scores[l][h];
        if (s < THRESHOLD || s < RATIO * scores[p].chance) return false;
        return p !== 'sameWord' || s > scores.previousToken.scores[l][h];
      });
      names.push({ layer: l, head: h, patterns: passed });
    }
  return names;
}
