// The parts of scripts/train-shipped-model.mjs on inputs whose answers are known by hand: the BPE trainer and
// encoder, the corpus's fortune cleaning, the schedule, the held-out loss's windows, the n-gram baselines, and the
// head scores on attention patterns built to have them.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { countPieces, decode, makeEncoder, pretokenize, trainBpe, spell, tokenizerJson, fromTokenizerJson } from '../../scripts/shipped-model/bpe.mjs';
import { cleanFortune } from '../../scripts/shipped-model/corpus.mjs';
import { bigramNats, ngramCounts, streamLoss, unigramNats, nats } from '../../scripts/shipped-model/evaluate.mjs';
import { headScores, nameHeads } from '../../scripts/shipped-model/heads.mjs';
import { lrAt, TRAIN } from '../../scripts/shipped-model/recipe.mjs';

const bytes = (s) => Array.from(new TextEncoder().encode(s));

test('GPT-2\'s pre-tokenizer: contractions, a space joined to the next word, runs of spaces, digits, punctuation', () => {
  assert.deepEqual(pretokenize("I'm  here, 42 times!\n\nOK"), ['I', "'m", ' ', ' here', ',', ' 42', ' times', '!', '\n', '\n', 'OK']);
});

test('BPE training merges the most frequent pair first, ties to the smallest ids, and encodes as it trained', () => {
  // Pairs: (a, b) and (c, d) 3 times each ("abcd" ×2, "ab", "cd"), (b, c) twice. The tie goes to (a, b), the
  // smaller ids (id 256), then (c, d) (257), then (256, 257) of "abcd" (258).
  const counts = new Map([['abcd', 2], ['ab', 1], ['cd', 1]]);
  const bpe = trainBpe(counts, 257 + 3);
  const [a, b, c, d] = bytes('abcd');
  assert.deepEqual(bpe.merges, [[a, b], [c, d], [256, 257]]);
  assert.equal(spell(bpe.tokens[258]), 'abcd');
  const enc = makeEncoder(bpe);
  assert.deepEqual(enc.encode('abcd'), [258]);
  assert.deepEqual(enc.encode('abc'), [256, c]);
  assert.deepEqual(enc.encode('dcab'), [d, c, 256]);
  // Unseen bytes stay bytes; the text round-trips (é is two bytes).
  assert.deepEqual(enc.encode('é'), bytes('é'));
  assert.equal(decode(bpe.tokens, [...enc.encode('abcd é'), 259], 259), 'abcd é<|endoftext|>');
  // Asking for more merges than the text allows (every piece one token) is an error, not a shorter vocabulary.
  assert.throws(() => trainBpe(counts, 257 + 4), /allows only 3 merges/);
});

test('the encoder applies the lowest-ranked merge first, every occurrence, as GPT-2\'s bpe does', () => {
  // Merges: (a, a) first, then (aa, aa). "aaaaa" → aa aa a → aaaa a.
  const counts = new Map([['aaaa', 10], ['aaaaa', 1]]);
  const bpe = trainBpe(counts, 257 + 2);
  const [a] = bytes('a');
  assert.deepEqual(bpe.merges, [[a, a], [256, 256]]);
  assert.deepEqual(makeEncoder(bpe).encode('aaaaa'), [257, a]);
  assert.deepEqual(makeEncoder(bpe).encode('aaa'), [256, a]);
  // And the file written for it reads back to the same merges and tokens.
  const again = fromTokenizerJson(tokenizerJson(bpe));
  assert.deepEqual(again.merges, bpe.merges);
  assert.deepEqual(again.tokens.map((t) => Array.from(t)), bpe.tokens.map((t) => Array.from(t)));
});

test('BPE training is deterministic: the same counts in another order give the same merges', () => {
  const text = 'the cat sat on the mat with the other cat and the hat, and then the cat sat on a hat';
  const counts = countPieces([text]);
  const reversed = new Map([...counts].reverse());
  assert.deepEqual(trainBpe(reversed, 257 + 20).merges, trainBpe(counts, 257 + 20).merges);
});

test('a fortune is cleaned: overstrikes dropped, wrapped lines joined, the attribution on its own line', () => {
  const raw = '\nThe _\bq_\bu_\bi_\bc_\bk brown\tfox\n   jumps  over\n\t\t-- Someone, "Book"\n';
  assert.equal(cleanFortune(raw), 'The quick brown fox jumps over\n-- Someone, "Book"');
  assert.equal(cleanFortune('\n  \n'), '');
});

test('the learning rate warms up linearly, then falls along a cosine to minLr at the last step', () => {
  const t = { ...TRAIN, steps: 1000, warmup: 100, lr: 1e-3, minLr: 1e-4 };
  assert.equal(lrAt(0, t), 1e-5);
  assert.equal(lrAt(99, t), 1e-3);
  assert.ok(Math.abs(lrAt(100, t) - 1e-3) < 1e-18);
  assert.ok(Math.abs(lrAt(999, t) - 1e-4) < 1e-18);
  assert.ok(Math.abs(lrAt(549.5, t) - 5.5e-4) < 1e-12); // halfway down the cosine
});

// A stand-in for the engine's GPT: forward gives uniform logits (every token 1/V) and, with returnAttention,
// the attention a test builds.
function fakeModel({ V = 5, context = 8, layers = 1, heads = 1, attention }) {
  return {
    config: { vocabSize: V, context, layers, heads },
    forward(tokens, { batch = 1, returnAttention = false } = {}) {
      const t = tokens.length / batch, r = { logits: new Float32Array(tokens.length * V) };
      if (returnAttention) r.attention = Array.from({ length: layers }, (_, l) => attention(l, tokens, batch, t));
      return r;
    },
  };
}

test('the held-out loss scores every token but the first exactly once, for streams of any length', () => {
  for (const len of [2, 3, 8, 9, 12, 13, 16, 17, 100]) {
    const gpt = fakeModel({ V: 5, context: 8 });
    const stream = Int32Array.from({ length: len }, (_, i) => i % 5);
    const { nats: n, tokens } = streamLoss(gpt, stream, { batch: 3 });
    assert.equal(tokens, len - 1, `length ${len}`);
    assert.ok(Math.abs(n - (len - 1) * Math.log(5)) < 1e-9 * len, `length ${len}: ${n}`);
  }
  // nats of one row: logits [0, ln 3] with target 1 → −log(3/4).
  assert.ok(Math.abs(nats(Float32Array.of(0, Math.log(3)), 2, [1], 0, 1) + Math.log(3 / 4)) < 1e-7);
});

test('the n-gram baselines: add-k bigram and add-one unigram by hand', () => {
  const V = 3, train = Int32Array.of(0, 1, 0, 1, 2), counts = ngramCounts(train, V);
  // Bigram counts: (0,1) ×2, (1,0) ×1, (1,2) ×1. Held-out 0 1 2: P(1|0) = (2+k)/(2+3k), P(2|1) = (1+k)/(2+3k).
  const k = 0.5, held = Int32Array.of(0, 1, 2);
  const want = -Math.log((2 + k) / (2 + 3 * k)) - Math.log((1 + k) / (2 + 3 * k));
  assert.ok(Math.abs(bigramNats(counts, k, held) - want) < 1e-12);
  // Unigram counts 2, 2, 1 of 5: P(1) = 3/8, P(2) = 2/8.
  assert.ok(Math.abs(unigramNats(counts, held) - (-Math.log(3 / 8) - Math.log(2 / 8))) < 1e-12);
});

test('head scores: a head built to attend to the previous token, one to the first, one uniformly', () => {
  const T = 8, H = 3;
  const attention = (l, tokens, batch, t) => {
    const a = new Float32Array(batch * H * t * t);
    for (let b = 0; b < batch; ++b)
      for (let i = 0; i < t; ++i)
        for (let j = 0; j <= i; ++j) {
          const at = (h) => ((b * H + h) * t + i) * t + j;
          a[at(0)] = i === 0 ? 1 : j === i - 1 ? 1 : 0;
          a[at(1)] = j === 0 ? 1 : 0;
          a[at(2)] = 1 / (i + 1);
        }
    return a;
  };
  const gpt = fakeModel({ V: 50, context: T, heads: H, attention });
  const windows = [Int32Array.of(1, 2, 3, 1, 2, 4, 5, 1), Int32Array.of(6, 7, 8, 9, 6, 7, 8, 9)];
  // Words: [0 0 1 2 2 2 3 4] and all different.
  const words = [Int32Array.of(0, 0, 1, 2, 2, 2, 3, 4), Int32Array.of(0, 1, 2, 3, 4, 5, 6, 7)];
  const pool = Array.from({ length: 20 }, (_, i) => i + 10);
  const s = headScores(gpt, { windows, words, pool, repeats: 4 });
  const near = (x, y) => Math.abs(x - y) < 1e-6;
  assert.ok(near(s.previousToken.scores[0][0], 1) && near(s.firstToken.scores[0][1], 1));
  // The uniform head scores chance on every pattern; chance is 1/(i+1) per query, averaged.
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const prevChance = mean([1, 2, 3, 4, 5, 6, 7].map((i) => 1 / (i + 1)));
  for (const p of ['previousToken', 'firstToken', 'sameWord', 'duplicateToken', 'induction']) assert.ok(near(s[p].scores[0][2], s[p].chance), p);
  assert.ok(near(s.previousToken.chance, prevChance));
  // Same word: queries 1 (key 0), 4 (key 3) and 5 (keys 3, 4) of window 0; the previous-token head's weight is on
  // i − 1, inside the word each time: score 1.
  assert.equal(s.sameWord.queries, 3);
  assert.ok(near(s.sameWord.scores[0][0], 1));
  // Duplicate tokens: window 0 queries 3 (key 0), 4 (key 1), 7 (keys 0, 3); window 1 queries 4–7 (one key each).
  assert.equal(s.duplicateToken.queries, 7);
  // Induction: 4 sequences of half = 4 tokens shown twice; queries 4–7 look for key i − 3, which the
  // previous-token head (key i − 1) never attends to.
  assert.equal(s.induction.queries, 4 * 4);
  assert.ok(near(s.induction.scores[0][0], 0));
  // Names: head 0 previous token (its sameWord 1 is not above its previousToken 1), head 1 first token, head 2 none.
  assert.deepEqual(nameHeads(s, 1, H).map((n) => n.patterns), [['previousToken'], ['firstToken'], []]);
});
