// "Further reading": the five articles the explorer follows, by their titles, each with what the page takes from it
// and the sections where it shows. The figures above name them the same way.
import type { Lab } from '../lab';
import { el } from '../../ui/dom';

interface Article {
  title: string;
  /** Set when the article's own title is not known: how it is described instead. */
  described?: boolean;
  kind: string;
  takes: string;
  sections: [string, string][];
}

export const ARTICLES: Article[] = [
  {
    title: 'Self-attention', kind: 'a book chapter',
    takes: 'Queries, keys and values as learned transformations, and why three of them; one query token followed through scores, weights, weighted values and its context vector; softmax’s sensitivity to scale ([1, 1.1], [10, 11], [100, 110]); the “Houston, we have a problem” grid; and why the context fills up, from the ideal n × n × d × d tensor (≈ 4.5 PB) to the n × n scores per head and layer.',
    sections: [['softmax', 'Softmax'], ['attention', 'Self-attention, step by step'], ['cost', 'The cost of attention']],
  },
  {
    title: 'Yet another set of notes on self-attention', kind: 'notes',
    takes: 'From softmax(XXᵀ)X, with nothing learnable, to learnable W_Q, W_K, W_V, and why one shared matrix can only give symmetric scores; the derivation of the 1/√d_k scale, and the independence it assumes; the O(nD²) and O(n²D) costs.',
    sections: [['asym', 'Asymmetric pull'], ['sqrt-dk', 'Why divide by √d_k?'], ['cost', 'The cost of attention']],
  },
  {
    title: 'The Mechanics of Causal Self Attention', kind: 'an article',
    takes: 'QKᵀ entry by entry, the causal mask of −∞, softmax row by row, and the output written out as S₁₁V₁, S₂₁V₁ + S₂₂V₂, …; the variance argument for dividing by √d; multi-head attention with d_k = d_model / H.',
    sections: [['causal', 'Causal masking'], ['sqrt-dk', 'Why divide by √d_k?'], ['multihead', 'Multi-head attention']],
  },
  {
    title: 'An article on attention as words pulling words', described: true, kind: 'an illustrated article',
    takes: '“Apple” pulled towards “banana” or “phone” on a plane of fruitiness and techiness; softmax of dot products as the strength of each pull; transformed spaces for queries, keys and values; the asymmetric pull of “bride” and “ring”; several heads and W_O; and that every W is learned in training.',
    sections: [['pull', 'Words pulling words'], ['spaces', 'Transformed spaces'], ['asym', 'Asymmetric pull'], ['multihead', 'Multi-head attention'], ['learn', 'Watch attention learn']],
  },
  {
    title: 'An Intuition for Attention', kind: 'an article',
    takes: 'Attention derived from a key-value lookup: “fruit” over apple, banana and chair with values 10, 5 and 2, a weighted sum where a dictionary can only fail; softmax([4, −1, 2.1]) ≈ [0.8648, 0.0058, 0.1294]; and the scale, with [3, 2, 1] against [30, 20, 10].',
    sections: [['kv-lookup', 'Attention as a soft dictionary lookup'], ['softmax', 'Softmax']],
  },
];

export const readingLab: Lab = {
  id: 'reading',
  nav: 'Reading',
  mount(section: HTMLElement) {
    section.append(
      el('h2', { text: 'Further reading' }),
      el('p', { class: 'intro', text: 'The explorer follows five articles; each figure above names the one it comes from. They explain in words what the labs let you try with numbers.' }),
      el('ul', { class: 'reading-list' }, ...ARTICLES.map((a) => el('li', { 'data-article': a.title },
        el('p', { class: 'reading-title' }, a.described ? el('strong', { text: a.title }) : el('cite', { text: `“${a.title}”` }), `, ${a.kind}.`),
        el('p', { class: 'reading-takes', text: a.takes }),
        el('p', { class: 'reading-where' }, 'On this page: ',
          ...a.sections.flatMap(([id, name], k) => [k ? ', ' : '', el('a', { href: `#${id}`, text: name })]), '.')))),
    );
  },
};
