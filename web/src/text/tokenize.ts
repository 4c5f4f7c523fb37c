// Tokenization for the labs: words, not sub-word pieces (real models use BPE; the articles reason in words).
// Lower-case, split on anything that is not a letter, digit or in-word apostrophe; punctuation is dropped.

export interface Tokens {
  words: string[];
  /** True when the text had more words than the lab takes (the rest are dropped). */
  truncated: boolean;
}

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*/gu;

export function tokenize(text: string, maxTokens: number, maxLen = 24): Tokens {
  const all = (text.toLowerCase().match(WORD) ?? []).map((w) => w.replace(/’/g, "'").slice(0, maxLen));
  return { words: all.slice(0, maxTokens), truncated: all.length > maxTokens };
}
