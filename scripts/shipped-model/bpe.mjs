// A byte-level BPE tokenizer in GPT-2's form, trained here and written as a Hugging Face tokenizer.json.
// Text is cut by GPT-2's pre-tokenizer regex; each piece's UTF-8 bytes are the starting symbols (token id = byte
// value, 0…255); training repeatedly merges the adjacent pair that occurs most often in the training text (ties: the
// smallest left id, then the smallest right id), each merge a new token; the last id is the end-of-text token.
// Encoding applies the merges in the order they were learned (GPT-2's `bpe`: the lowest-ranked pair present, every
// occurrence left to right, until none is left), which is what Hugging Face's BPE model computes from the file.

/** GPT-2's pre-tokenizer regex (Hugging Face's ByteLevel with use_regex). */
export const GPT2_PATTERN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
export const END_OF_TEXT = '<|endoftext|>';

/**
 * GPT-2's bytes_to_unicode: every byte as a printable character, so a token is a string without spaces or
 * control characters. Printable Latin-1 bytes stand for themselves; the other 68 take 256, 257, … in byte order.
 */
export const BYTE_CHARS = (() => {
  const chars = new Array(256);
  let next = 256;
  for (let b = 0; b < 256; ++b) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    chars[b] = String.fromCodePoint(printable ? b : next++);
  }
  return chars;
})();

const encoder = new TextEncoder();
const pairKey = (a, b) => a * 65536 + b;

/** The pieces of `text` as GPT-2's regex cuts it. */
export function pretokenize(text) {
  return text.match(GPT2_PATTERN) ?? [];
}

/** Counts of each distinct piece in `texts`, in order of first appearance. */
export function countPieces(texts) {
  const counts = new Map();
  for (const t of texts) for (const p of pretokenize(t)) counts.set(p, (counts.get(p) ?? 0) + 1);
  return counts;
}

// A max-heap of [count, left, right] entries, ordered by count, then the smallest left id, then right id.
// Entries go stale when a pair's count changes; stale ones are skipped when popped (the current count is pushed anew).
class PairHeap {
  #a = [];
  get size() { return this.#a.length; }
  #above(x, y) { return x[0] !== y[0] ? x[0] > y[0] : x[1] !== y[1] ? x[1] < y[1] : x[2] < y[2]; }
  push(e) {
    const a = this.#a;
    a.push(e);
    for (let i = a.length - 1; i > 0;) {
      const p = (i - 1) >> 1;
      if (!this.#above(a[i], a[p])) break;
      [a[i], a[p]] = [a[p], a[i]], (i = p);
    }
  }
  pop() {
    const a = this.#a, top = a[0], last = a.pop();
    if (a.length) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1, r = l + 1;
        let m = i;
        if (l < a.length && this.#above(a[l], a[m])) m = l;
        if (r < a.length && this.#above(a[r], a[m])) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m], a[i]], (i = m);
      }
    }
    return top;
  }
}

/**
 * Learns `vocabSize − 257` merges from the pieces' counts (256 byte tokens, the merges, one end-of-text token).
 * @returns {{ merges: [number, number][], tokens: Uint8Array[] }} merges by rank; tokens[id] = the token's bytes.
 */
export function trainBpe(pieceCounts, vocabSize) {
  const wanted = vocabSize - 257;
  if (wanted < 0 || vocabSize > 65536) throw new RangeError(`trainBpe: vocabSize must be 257…65536, got ${vocabSize}`);
  const words = [], counts = [];
  for (const [piece, c] of pieceCounts) words.push(Array.from(encoder.encode(piece))), counts.push(c);
  const pairCount = new Map(), pairWords = new Map(), heap = new PairHeap();
  const add = (w, sign) => {
    const s = words[w], c = counts[w] * sign;
    for (let i = 0; i + 1 < s.length; ++i) {
      const k = pairKey(s[i], s[i + 1]);
      pairCount.set(k, (pairCount.get(k) ?? 0) + c);
      if (sign > 0) {
        let set = pairWords.get(k);
        if (!set) pairWords.set(k, (set = new Set()));
        set.add(w);
      }
    }
  };
  words.forEach((_, w) => add(w, 1));
  for (const [k, c] of pairCount) heap.push([c, Math.floor(k / 65536), k % 65536]);
  const tokens = Array.from({ length: 256 }, (_, b) => Uint8Array.of(b)), merges = [];
  while (merges.length < wanted && heap.size) {
    const [c, a, b] = heap.pop();
    const k = pairKey(a, b);
    if (pairCount.get(k) !== c || c <= 0) continue; // stale
    const id = tokens.length;
    merges.push([a, b]);
    const merged = new Uint8Array(tokens[a].length + tokens[b].length);
    merged.set(tokens[a]), merged.set(tokens[b], tokens[a].length);
    tokens.push(merged);
    const touched = new Set();
    for (const w of pairWords.get(k)) {
      const s = words[w];
      let has = false;
      for (let i = 0; i + 1 < s.length; ++i) if (s[i] === a && s[i + 1] === b) { has = true; break; }
      if (!has) continue;
      add(w, -1);
      const out = [];
      for (let i = 0; i < s.length; ++i) {
        if (i + 1 < s.length && s[i] === a && s[i + 1] === b) out.push(id), ++i;
        else out.push(s[i]);
      }
      words[w] = out;
      add(w, 1);
      for (let i = 0; i + 1 < out.length; ++i) touched.add(pairKey(out[i], out[i + 1]));
      for (let i = 0; i + 1 < s.length; ++i) touched.add(pairKey(s[i], s[i + 1]));
    }
    pairWords.delete(k);
    pairCount.delete(k);
    for (const t of touched) {
      const n = pairCount.get(t);
      if (n > 0) heap.push([n, Math.floor(t / 65536), t % 65536]);
    }
  }
  if (merges.length < wanted) throw new Error(`trainBpe: the text allows only ${merges.length} merges; ${wanted} were asked for`);
  return { merges, tokens };
}

/** An encoder for a trained BPE: text → token ids (a piece's ids are cached). */
export function makeEncoder({ merges }) {
  const rank = new Map(), mergedId = new Map();
  merges.forEach(([a, b], r) => {
    rank.set(pairKey(a, b), r);
    mergedId.set(pairKey(a, b), 256 + r);
  });
  const cache = new Map();
  const encodePiece = (piece) => {
    let ids = cache.get(piece);
    if (ids) return ids;
    let s = Array.from(encoder.encode(piece));
    while (s.length > 1) {
      let best = Infinity, bestKey = -1;
      for (let i = 0; i + 1 < s.length; ++i) {
        const r = rank.get(pairKey(s[i], s[i + 1]));
        if (r !== undefined && r < best) (best = r), (bestKey = pairKey(s[i], s[i + 1]));
      }
      if (bestKey < 0) break;
      const a = Math.floor(bestKey / 65536), b = bestKey % 65536, out = [];
      for (let i = 0; i < s.length; ++i) {
        if (i + 1 < s.length && s[i] === a && s[i + 1] === b) out.push(mergedId.get(bestKey)), ++i;
        else out.push(s[i]);
      }
      s = out;
    }
    cache.set(piece, (ids = s));
    return ids;
  };
  return {
    /** The ids of one text (no special tokens inside it). */
    encode(text) {
      const out = [];
      for (const p of pretokenize(text)) for (const id of encodePiece(p)) out.push(id);
      return out;
    },
    /** The ids of the pieces of `text`, one array per piece (for word boundaries). */
    pieces(text) {
      return pretokenize(text).map((p) => ({ piece: p, ids: encodePiece(p) }));
    },
  };
}

/** Bytes → text of ids (the end-of-text token's id `eot` as its text). Invalid UTF-8 becomes U+FFFD, as the ByteLevel decoder does. */
export function decode(tokens, ids, eot) {
  const parts = [];
  let bytes = [];
  const flush = () => bytes.length && (parts.push(new TextDecoder().decode(Uint8Array.from(bytes))), (bytes = []));
  for (const id of ids) {
    if (id === eot) flush(), parts.push(END_OF_TEXT);
    else bytes.push(...tokens[id]);
  }
  flush();
  return parts.join('');
}

/** A token's spelling in the vocabulary: its bytes as GPT-2's printable characters ("Ġthe" for " the"). */
export const spell = (bytes) => Array.from(bytes, (b) => BYTE_CHARS[b]).join('');

/** The tokenizer.json of Hugging Face's tokenizers, in GPT-2's form. */
export function tokenizerJson({ merges, tokens }) {
  const eot = tokens.length;
  const vocab = {};
  tokens.forEach((t, id) => {
    const s = spell(t);
    if (s in vocab) throw new Error(`tokenizerJson: two tokens spell ${JSON.stringify(s)}`);
    vocab[s] = id;
  });
  vocab[END_OF_TEXT] = eot;
  const byteLevel = { add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [{ id: eot, content: END_OF_TEXT, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', ...byteLevel },
    post_processor: { type: 'ByteLevel', ...byteLevel, trim_offsets: false },
    decoder: { type: 'ByteLevel', ...byteLevel },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: merges.map(([a, b]) => `${spell(tokens[a])} ${spell(tokens[b])}`),
    },
  };
}

/**
 * The merges and tokens of a tokenizer.json that tokenizerJson wrote (ids: bytes 0…255, merge r is id 256 + r, then
 * the end-of-text token); anything laid out otherwise is an error.
 */
export function fromTokenizerJson(json) {
  const byteOf = new Map(BYTE_CHARS.map((c, b) => [c, b]));
  const { vocab, merges } = json.model;
  const tokens = [];
  for (const [spelling, id] of Object.entries(vocab)) {
    if (spelling === END_OF_TEXT) continue;
    tokens[id] = Uint8Array.from(Array.from(spelling, (c) => {
      const b = byteOf.get(c);
      if (b === undefined) throw new Error(`fromTokenizerJson: token ${JSON.stringify(spelling)} is not byte-level`);
      return b;
    }));
  }
  const pairs = merges.map((m, r) => {
    const [a, b] = (typeof m === 'string' ? m.split(' ') : m).map((s) => vocab[s]);
    if (vocab[spell(tokens[a]) + spell(tokens[b])] !== 256 + r) throw new Error(`fromTokenizerJson: merge ${r} is not token ${256 + r}`);
    return [a, b];
  });
  for (let b = 0; b < 256; ++b) if (tokens[b]?.length !== 1 || tokens[b][0] !== b) throw new Error(`fromTokenizerJson: token ${b} is not byte ${b}`);
  return { merges: pairs, tokens };
}
