// The soft key-value lookup of "An Intuition for Attention": "fruit" is not a key of {apple: 10, banana: 5,
// chair: 2}, so an exact dictionary lookup fails, but attention blends the values by how similar each key is to
// the query. One attention call gives the scores, the weights and the blended value; one matrix product,
// diag(a)·v, gives each key's share aⱼ·vⱼ.
import type { Lab, LabContext } from '../lab';
import { INTUITION_LIMITS, kvLookupSlice } from './state';
import { el, clear } from '../../ui/dom';
import { tex } from '../../ui/katex';
import { MatrixTable, type MatrixSpec } from '../../ui/matrix-table';
import { BarChart } from '../../ui/bars';
import { exact, fmt, fmtProb, vec } from '../../ui/format';
import { buttonGroup, markInvalid } from '../../ui/controls';
import { interpolateViridis } from 'd3';

export const KV_KEYS = ['apple', 'banana', 'chair'] as const;
/** The article's query “fruit”: the lab's default query. */
const FRUIT = kvLookupSlice.defaults().kvQuery;

export const kvLookupLab: Lab = {
  id: 'kv-lookup',
  nav: 'Soft lookup',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    section.append(
      el('h2', { text: 'Attention as a soft dictionary lookup' }),
      el('p', { class: 'intro', text: 'A dictionary answers only for an exact key: {apple: 10, banana: 5, chair: 2}["fruit"] is an error. Attention instead compares the query with every key (a dot product), turns the similarities into weights with softmax, and returns the weighted sum of the values: “fruit” is a bit of apple and a bit of banana, and almost no chair. Edit any vector or value.' }),
      tex(String.raw`\operatorname{attention}(q, K, v) = \operatorname{softmax}(qK^{\top})\,v = \sum_j a_j v_j`, true),
    );

    const qSpec: MatrixSpec = { name: 'kv-query', caption: 'query q', rows: 1, cols: 2, values: new Float32Array(2), rowLabels: ['q'], colLabels: ['dim 1', 'dim 2'], palette: 'div', showLegend: false, limit: INTUITION_LIMITS.kvAbs,
      onEdit: (_, c, v) => store.update({ kvQuery: store.state.kvQuery.map((x, j) => (j === c ? v : x)) }) };
    const kSpec: MatrixSpec = { name: 'kv-keys', caption: 'keys K', rows: 3, cols: 2, values: new Float32Array(6), rowLabels: [...KV_KEYS], colLabels: ['dim 1', 'dim 2'], palette: 'div', showLegend: false, limit: INTUITION_LIMITS.kvAbs,
      onEdit: (r, c, v) => store.update({ kvKeys: store.state.kvKeys.map((x, j) => (j === r * 2 + c ? v : x)) }) };
    const vSpec: MatrixSpec = { name: 'kv-values', caption: 'values v', rows: 3, cols: 1, values: new Float32Array(3), rowLabels: [...KV_KEYS], colLabels: ['value'], palette: 'none', showLegend: false, limit: INTUITION_LIMITS.kvAbs,
      onEdit: (r, _, v) => store.update({ kvValues: store.state.kvValues.map((x, j) => (j === r ? v : x)) }) };
    const query = new MatrixTable(qSpec);
    const keys = new MatrixTable(kSpec);
    const values = new MatrixTable(vSpec);
    values.root.classList.add('edit-plain');
    const presets = buttonGroup('Query presets', [
      { label: '“fruit”', title: 'The query of “An Intuition for Attention”', name: 'kv-preset-fruit', onClick: () => store.update({ kvQuery: [...FRUIT] }) },
      ...KV_KEYS.map((w, r) => ({ label: `q = key of “${w}”`, name: `kv-preset-${w}`, onClick: () => store.update({ kvQuery: store.state.kvKeys.slice(r * 2, r * 2 + 2) }) })),
      { label: 'reset all', name: 'kv-reset', onClick: () => { const { kvQuery, kvKeys, kvValues } = kvLookupSlice.defaults(); store.update({ kvQuery, kvKeys, kvValues }); } },
    ]);
    const bars = new BarChart({ labels: [], values: [], domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: 'weights' });
    const table = el('table', { class: 'plain-table', 'data-table': 'kv-lookup' });
    const result = el('p', { class: 'kv-result', 'aria-live': 'polite' });

    // The exact lookup: a word typed by the reader, matched character for character.
    const wordInput = el('input', { type: 'text', 'data-control': 'kv-word', 'aria-label': 'Word to look up exactly', maxlength: 24, spellcheck: 'false', autocomplete: 'off' });
    wordInput.addEventListener('input', () => {
      const w = wordInput.value;
      const ok = /^[\p{L}\p{N}' -]{0,24}$/u.test(w);
      markInvalid(wordInput, !ok);
      if (ok) store.update({ kvWord: w });
    });
    const exactOut = el('p', { class: 'kv-exact', 'data-output': 'kv-exact', 'aria-live': 'polite' });

    section.append(
      presets,
      el('div', { class: 'two-col' },
        el('div', { class: 'panel' }, el('h3', { text: 'Query, keys and values (editable)' }),
          el('div', { class: 'matrix-row' }, query.root, keys.root, values.root)),
        el('div', { class: 'panel' }, el('h3', { text: 'Soft lookup: weights and result' }), bars.root, result)),
      el('div', { class: 'table-scroll' }, table),
      el('div', { class: 'panel kv-contrast' }, el('h3', { text: 'Contrast: the exact dictionary lookup' }),
        el('label', { class: 'kv-word' }, el('code', { text: 'd[' }), wordInput, el('code', { text: ']' })), exactOut),
    );

    const render = () => {
      const t0 = performance.now();
      const s = store.state;
      const q = Float32Array.from(s.kvQuery);
      const k = Float32Array.from(s.kvKeys);
      const v = Float32Array.from(s.kvValues);
      // The article's formula here has no 1/√d_k: scale 1.
      const r = engine.attention({ q, k, v, nq: 1, nk: 3, dk: 2, dv: 1, scale: 1, returnRawScores: true, returnWeights: true });
      const scores = r.rawScores!;
      const w = r.weights!;
      const diag = new Float32Array(9);
      w.forEach((x, j) => { diag[j * 3 + j] = x; });
      const parts = engine.matmul(diag, v, { m: 3, k: 3, n: 1 });

      query.update({ ...qSpec, values: q });
      keys.update({ ...kSpec, values: k });
      values.update({ ...vSpec, values: v });
      bars.update({ labels: [...KV_KEYS], values: Array.from(w), domain: [0, 1], format: fmtProb, colour: (x) => interpolateViridis(0.15 + 0.7 * x), label: 'Weight of each key for the query' });

      clear(table);
      table.append(
        el('caption', { text: 'The lookup, key by key' }),
        el('thead', {}, el('tr', {},
          el('th', { scope: 'col', text: 'key' }), el('th', { scope: 'col', text: 'score q·kⱼ' }),
          el('th', { scope: 'col', text: 'weight aⱼ' }), el('th', { scope: 'col', text: 'value vⱼ' }),
          el('th', { scope: 'col', text: 'aⱼ·vⱼ' }))),
      );
      const body = el('tbody');
      KV_KEYS.forEach((name, j) => body.appendChild(el('tr', {},
        el('th', { scope: 'row', text: name }),
        el('td', { 'data-col': 'score', 'data-value': exact(scores[j]), text: fmt(scores[j], 3) }),
        el('td', { 'data-col': 'weight', 'data-value': exact(w[j]), text: fmtProb(w[j]) }),
        el('td', { text: fmt(v[j], 3) }),
        el('td', { 'data-col': 'part', 'data-value': exact(parts[j]), text: fmt(parts[j], 4) }))));
      body.appendChild(el('tr', { class: 'sum-row' }, el('th', { scope: 'row', text: 'Σ = result' }), el('td'), el('td'), el('td'),
        el('td', { 'data-col': 'result', 'data-value': exact(r.output[0]), text: fmt(r.output[0], 4) })));
      table.appendChild(body);
      // Name the query by what it is now: a label fixed to "fruit" would stay on the key of "chair" after its preset.
      const same = (a: number[]) => a[0] === s.kvQuery[0] && a[1] === s.kvQuery[1];
      const keyOf = KV_KEYS.findIndex((_, j) => same(s.kvKeys.slice(j * 2, j * 2 + 2)));
      const name = same(FRUIT) ? '“fruit”' : keyOf >= 0 ? `q = the key of “${KV_KEYS[keyOf]}”` : `your query q = ${vec(q)}`;
      result.textContent = `Soft lookup of ${name}: ${KV_KEYS.map((n, j) => `${fmtProb(w[j])} × ${fmt(v[j], 3)} (${n})`).join(' + ')} = ${fmt(r.output[0], 4)}.`;

      if (document.activeElement !== wordInput) wordInput.value = s.kvWord;
      const hit = KV_KEYS.indexOf(s.kvWord as (typeof KV_KEYS)[number]);
      exactOut.textContent = hit >= 0
        ? `d["${s.kvWord}"] = ${fmt(v[hit], 3)}: an exact key gives exactly its value, and nothing of the others.`
        : `d["${s.kvWord}"] → KeyError: “${s.kvWord}” is not one of apple, banana, chair. A dictionary cannot say that “${s.kvWord}” is close to one of them; the soft lookup above always answers, with ${fmt(r.output[0], 4)}.`;
      exactOut.classList.toggle('error', hit < 0);
      ctx.reportTiming('kvLookup', performance.now() - t0);
    };
    store.subscribe((_, changed) => { if (['kvQuery', 'kvKeys', 'kvValues', 'kvWord'].some((x) => changed.has(x as never))) render(); });
    render();
  },
};

