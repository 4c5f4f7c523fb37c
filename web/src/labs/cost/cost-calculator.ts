// The cost lab's calculator: n, d, heads, layers and bytes per number in; memory of the n×n scores (naive vs
// streaming), FLOPs (projections vs attention) and the ideal tensor of "Self-attention" out. The arithmetic is
// model/cost.ts: the page's own exact integer (BigInt) arithmetic, not the engine's; this file only lays it out.
import type { AppState } from '../../state/app-state';
import type { Store } from '../../state/store';
import { el, clear } from '../../ui/dom';
import { tex, setTex } from '../../ui/katex';
import { field, select as selectControl, buttonGroup, markInvalid, numberInput } from '../../ui/controls';
import { disclosure } from '../../ui/disclosure';
import { LogLogChart, decades, legendItem } from '../../ui/loglog-chart';
import {
  cost, validate, formatBytes, formatBinary, formatFlops, shortSI, COST_LIMITS, COST_PRESETS,
  TILE_KEYS, TILE_ROWS, type CostInput,
} from '../../model/cost';
import { COLOURS } from './cost-palette';

// Thousands with a comma, as the rest of the page writes its counts; in TeX a comma in braces, so no space follows it.
const digits = (v: bigint) => v.toLocaleString('en');
const texDigits = (v: bigint) => v.toLocaleString('en').replaceAll(',', '{,}');


// The calculator's inputs live in the app state (URL parameters cn, cd, ch, cl, cb), so a link or a saved state
// file brings back the same numbers.
const fromState = (s: AppState): CostInput => ({ n: s.costN, d: s.costD, heads: s.costHeads, layers: s.costLayers, bytes: s.costBytes });
const toState = (x: CostInput): Partial<AppState> => ({ costN: x.n, costD: x.d, costHeads: x.heads, costLayers: x.layers, costBytes: x.bytes });
const COST_KEYS = ['costN', 'costD', 'costHeads', 'costLayers', 'costBytes'] as const;
const presetOf = (x: CostInput): string | null =>
  COST_PRESETS.find((p) => (Object.keys(p.input) as (keyof CostInput)[]).every((k) => p.input[k] === x[k]))?.id ?? null;

export function mountCalculator(section: HTMLElement, store: Store): void {
  const cur: CostInput = fromState(store.state);
  // The preset whose numbers these are, if any: its button shows pressed and its note applies.
  let presetId: string | null = presetOf(cur);
  const edit = (key: keyof CostInput) => (v: number | string) => {
    cur[key] = Number(v);
    presetId = presetOf(cur);
    store.update(toState(cur));
    render();
  };
  const inputs = {
    n: numberInput(cur.n, { min: COST_LIMITS.n.min, max: COST_LIMITS.n.max, step: 1, name: 'cost-n', label: 'n (tokens)', current: () => cur.n }, edit('n')),
    d: numberInput(cur.d, { min: COST_LIMITS.d.min, max: COST_LIMITS.d.max, step: 1, name: 'cost-d', label: 'd (model width)', current: () => cur.d }, edit('d')),
    heads: numberInput(cur.heads, { min: COST_LIMITS.heads.min, max: COST_LIMITS.heads.max, step: 1, name: 'cost-heads', label: 'heads', current: () => cur.heads }, edit('heads')),
    layers: numberInput(cur.layers, { min: COST_LIMITS.layers.min, max: COST_LIMITS.layers.max, step: 1, name: 'cost-layers', label: 'layers', current: () => cur.layers }, edit('layers')),
  };
  const bytes = selectControl(
    [{ value: '4', label: '4 (float32)' }, { value: '2', label: '2 (16-bit: fp16, bf16)' }, { value: '1', label: '1 (8-bit)' }],
    String(cur.bytes), edit('bytes'), 'cost-bytes');
  const note = el('p', { class: 'preset-note', 'aria-live': 'polite', 'data-cost': 'preset-note' });
  const error = el('p', { class: 'cost-error warn-text', role: 'alert', 'data-cost': 'error' });
  const presets = buttonGroup('Presets', COST_PRESETS.map((p) => ({
    label: p.label, name: `cost-preset-${p.id}`, pressed: p.id === COST_PRESETS[0].id,
    onClick: () => {
      Object.assign(cur, p.input);
      showInputs();
      presetId = p.id;
      store.update(toState(cur));
      render();
    },
  })));

  // numberInput leaves out-of-range values unreported (it only marks them aria-invalid, and puts the calculator's value
  // back when the field is left, which clears this line through render): say why here.
  for (const [key, input] of Object.entries(inputs) as [keyof typeof inputs, HTMLInputElement][]) {
    input.addEventListener('input', () => {
      if (!input.hasAttribute('aria-invalid')) return;
      const lim = COST_LIMITS[key];
      error.textContent = `${key} must be a whole number from ${lim.min.toLocaleString('en-US')} to ${lim.max.toLocaleString('en-US')}; the numbers below are for the last valid inputs.`;
      section.dataset.costValid = 'false';
    });
  }
  const memTable = el('table', { class: 'plain-table cost-table', 'data-table': 'cost-calc' });
  const flopTable = el('table', { class: 'plain-table cost-table', 'data-table': 'cost-flops' });
  const crossover = el('p', { class: 'cost-crossover', 'data-cost': 'crossover' });
  const idealFormula = el('div', { class: 'tex tex-display cost-ideal-formula' });
  const ideal = el('output', { class: 'cost-big', 'data-cost': 'ideal' });
  const idealNote = el('p', { 'data-cost': 'ideal-note' });
  const flopsChart = new LogLogChart('cost-flops', 'n (tokens in the context)', 'FLOPs per layer');

  const legendFlops = el('ul', { class: 'cost-legend', 'aria-label': 'Legend of the FLOPs chart' },
    legendItem(COLOURS.streaming, 'projections Q, K, V, O: 8nd²'),
    legendItem(COLOURS.materialized, 'attention QKᵀ and P·V: 4n²d'));
  section.append(
    el('h3', { text: 'Calculator: a whole model' }),
    el('p', { class: 'help cost-help', text: 'The grid above is one head of one layer. A model has many of both: give its width d, its heads and layers, and how many bytes each number takes.' }),
    el('div', { class: 'cost-inputs' },
      field('n (tokens)', inputs.n), field('d (model width)', inputs.d), field('heads', inputs.heads),
      field('layers', inputs.layers), field('bytes per number', bytes)),
    presets, note, error,
    el('div', { class: 'callout cost-ideal' },
      el('p', {}, el('strong', { text: 'The “ideal” tensor of “Self-attention”: ' }), 'a d × d matrix for every pair of tokens, saying how token A changes token B. That is n · n · d · d numbers:'),
      idealFormula,
      el('p', {}, 'One such tensor: ', ideal, '.'),
      idealNote),
    el('h4', { text: 'Memory of the score matrices' }),
    el('div', { class: 'table-scroll' }, memTable),
    disclosure('How the memory is counted', el('div', {},
      // Separate blocks so the formulas wrap on a phone instead of scrolling sideways.
      el('div', { class: 'cost-formulas' },
        tex(String.raw`M_{\text{materialized}} = L\,h\,n^2 b`, true),
        tex(String.raw`M_{\text{streaming}} = L\,h\,\big(${TILE_ROWS}\cdot${TILE_KEYS} + ${TILE_ROWS}\,d_h + 2\cdot${TILE_ROWS}\big)\,b`, true),
        tex(String.raw`d_h = d/h`, true)),
      el('p', { class: 'cost-counts', text: `L layers, h heads, b bytes per number, d_h = d/h the width of a head. Materialized: one n × n matrix per head, the minimum (softmax can overwrite the scores in place; this engine keeps scores and weights in two separate n × n buffers, twice this, as the measured curve below shows), for every head of a layer at once and, in the last rows, for every layer (what training keeps for the backward pass). Streaming, as this engine does it: a tile of ${TILE_ROWS} query rows × ${TILE_KEYS} keys of scores, a ${TILE_ROWS} × d_h output accumulator, and a running max and sum for each of the ${TILE_ROWS} rows — no n anywhere. The layer and model rows count one tile per head, as when heads run in parallel; this engine runs the heads of a call one after another, so it holds one tile at a time. Both paths also need q, k, v and the output, n × d numbers each per layer (4 L n d b): they grow with n, not n². Not counted: weights, the feed-forward layers, a cache of keys and values kept between requests, and the engine’s packed copy of Kᵀ (another n × d_h per head).` })), 'cost-memory-how'),
    crossover,
    disclosure('Compute: projections against attention', el('div', {},
      el('div', { class: 'cost-formulas' },
        tex(String.raw`F_{\text{proj}} = \underbrace{4}_{Q,K,V,O} \cdot 2\,n\,d^2 = 8\,n d^2`, true),
        tex(String.raw`F_{\text{attn}} = \underbrace{2}_{QK^{\top},\;PV} \cdot 2\,n^2 d = 4\,n^2 d`, true),
        tex(String.raw`\frac{F_{\text{attn}}}{F_{\text{proj}}} = \frac{n}{2d}`, true)),
      el('p', { class: 'cost-counts', text: 'FLOPs count arithmetic: a multiply-add is 2. Per layer, summed over the heads (h heads of width d/h do the same work as one of width d). Softmax itself (a few per score) and the feed-forward layers are left out. “Yet another set of notes on self-attention” puts the O(nd²) cost on QKᵀ: that is the projections; QKᵀ and P·V are the O(n²d) part.' }),
      el('div', { class: 'table-scroll' }, flopTable),
      flopsChart.root, legendFlops), 'cost-compute'),
  );

  let shown = false;  // whether valid numbers have been drawn
  function render(): void {
    const err = validate(cur);
    // (a link may open on inputs that do not go together: then there are no numbers yet)
    error.textContent = err ? `${err}; ${shown ? 'the numbers below are for the last valid inputs' : 'the numbers appear once the inputs are valid'}.` : '';
    section.querySelectorAll<HTMLButtonElement>('button[data-control^="cost-preset-"]')
      .forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.control === `cost-preset-${presetId}`)));
    note.textContent = COST_PRESETS.find((p) => p.id === presetId)?.note ?? '';
    section.dataset.costValid = String(!err);
    if (err) return; // keep the last valid numbers, marked stale by the error line
    shown = true;
    const r = cost(cur);
    const { n, d, bytes: b } = cur;

    setTex(idealFormula, String.raw`\begin{aligned} n^2 d^2 b &= ${n}^2 \cdot ${d}^2 \cdot ${b}\ \text{B} \\ &= ${texDigits(r.idealTensor)}\ \text{B} \end{aligned}`, true);
    ideal.dataset.value = r.idealTensor.toString();
    ideal.textContent = `${formatBytes(r.idealTensor)} (${formatBinary(r.idealTensor)})`;
    idealNote.textContent = `What attention stores instead: W_q, W_k and W_v, d × d each, 3 · d² · b ${eq(formatBytes(r.qkvWeights))} — ${fmtRatio(Number(r.idealTensor) / Number(r.qkvWeights))} times smaller.`;
    idealNote.dataset.value = r.qkvWeights.toString();

    const cell = (v: bigint, col: string) => el('td', { 'data-col': col, 'data-value': v.toString(), title: `${digits(v)} bytes (${formatBinary(v)})` },
      el('span', { class: 'cost-dec', text: formatBytes(v) }));
    const row = (id: string, label: string, a: bigint, s: bigint) =>
      el('tr', { 'data-row': id }, el('th', { scope: 'row', text: label }), cell(a, 'naive'), cell(s, 'stream'));
    clear(memTable);
    memTable.append(
      el('caption', { text: `n = ${n}, d = ${d} (each head ${r.headDim} wide), ${cur.heads} heads, ${cur.layers} layers, ${b} byte${b > 1 ? 's' : ''} per number; 1 KB = 1,000 bytes` }),
      el('thead', {}, el('tr', {}, el('td'),
        el('th', { scope: 'col', text: 'materialized (n × n)' }), el('th', { scope: 'col', text: 'streaming (online softmax)' }))),
      el('tbody', {},
        row('scores-head', 'Scores, one head', r.scoresPerHead, r.tilePerHead),
        row('scores-layer', `Scores, one layer (${cur.heads} heads)`, r.scoresPerLayer, r.tilePerLayer),
        row('scores-all', `Scores, ${cur.heads} heads × ${cur.layers} layers`, r.scoresAll, r.tileAll),
        row('qkvo-all', `q, k, v, output (4 n d b), ${cur.layers} layers`, r.qkvoAll, r.qkvoAll),
        row('total-all', 'Total, all layers', r.materializedAll, r.streamingAll)),
    );
    memTable.querySelector('tr[data-row="total-all"]')?.classList.add('sum-row');

    const fcell = (v: bigint, col: string) => el('td', { 'data-col': col, 'data-value': v.toString(), title: `${digits(v)} FLOPs`, text: formatFlops(v) });
    const totalLayer = r.projFlopsPerLayer + r.attnFlopsPerLayer;
    const totalAll = r.projFlopsAll + r.attnFlopsAll;
    const share = Number((r.attnFlopsPerLayer * 10000n) / totalLayer) / 100;
    clear(flopTable);
    flopTable.append(
      el('caption', { text: 'FLOPs of one forward pass over the n tokens' }),
      el('thead', {}, el('tr', {}, el('td'), el('th', { scope: 'col', text: 'one layer' }), el('th', { scope: 'col', text: `${cur.layers} layers` }))),
      el('tbody', {},
        el('tr', { 'data-row': 'proj' }, el('th', { scope: 'row', text: 'Projections Q, K, V, O: 8 n d²' }), fcell(r.projFlopsPerLayer, 'layer'), fcell(r.projFlopsAll, 'all')),
        el('tr', { 'data-row': 'attn' }, el('th', { scope: 'row', text: 'Attention QKᵀ and P·V: 4 n² d' }), fcell(r.attnFlopsPerLayer, 'layer'), fcell(r.attnFlopsAll, 'all')),
        el('tr', { 'data-row': 'total', class: 'sum-row' }, el('th', { scope: 'row', text: `Total (attention: ${share}%)` }), fcell(totalLayer, 'layer'), fcell(totalAll, 'all'))),
    );
    crossover.dataset.value = String(r.crossoverN);
    crossover.dataset.ratio = String(r.attnOverProj);
    crossover.textContent = r.attnOverProj === 1
      ? `Compute: attention’s arithmetic (n² d) overtakes the projections’ (n d²) at n = 2d = ${r.crossoverN}. Here, exactly there, they cost the same.`
      : r.attnOverProj > 1
        ? `Compute: attention’s arithmetic (n² d) overtakes the projections’ (n d²) at n = 2d = ${r.crossoverN}. At n = ${n} attention costs ${fmtRatio(r.attnOverProj)} × the projections, and every doubling of n doubles that.`
        : `Compute: attention’s arithmetic (n² d) overtakes the projections’ (n d²) at n = 2d = ${r.crossoverN}. At n = ${n} the projections still cost more: attention is ${fmtRatio(r.attnOverProj)} × their cost.`;

    // FLOPs per layer against n: two straight lines in log-log (slope 1 and slope 2) crossing at n = 2d.
    const lo = 2 ** Math.max(0, Math.floor(Math.log2(Math.min(n, 2 * d))) - 3);
    const hi = 2 ** (Math.ceil(Math.log2(Math.max(n, 2 * d))) + 3);
    const proj = (m: number) => 8 * m * d * d;
    const attn = (m: number) => 4 * m * m * d;
    const yr = decades(Math.min(proj(lo), attn(lo)), Math.max(proj(hi), attn(hi)));
    const xTicks: number[] = [];
    const stepPow = Math.max(1, Math.ceil((Math.log2(hi) - Math.log2(lo)) / 7));
    for (let p = Math.log2(lo); p <= Math.log2(hi); p += stepPow) xTicks.push(2 ** p);
    const yStep = Math.max(1, Math.ceil(yr.ticks.length / 6));
    flopsChart.update({
      series: [
        { key: 'proj', label: 'projections 8nd²', colour: COLOURS.streaming, points: [{ x: lo, y: proj(lo) }, { x: hi, y: proj(hi) }] },
        { key: 'attn', label: 'attention 4n²d', colour: COLOURS.materialized, points: [{ x: lo, y: attn(lo) }, { x: hi, y: attn(hi) }] },
      ],
      x: [lo, hi], y: yr.domain, xTicks, yTicks: yr.ticks.filter((_, i) => i % yStep === 0),
      xFormat: shortCount, yFormat: (v) => shortSI(v, 'FLOP'),
      guides: [{ x: 2 * d, label: 'n = 2d' }, ...(n !== 2 * d ? [{ x: n, label: 'your n' }] : [])],
      label: `FLOPs per layer against n at d = ${d}: projections 8nd² (slope 1) and attention 4n²d (slope 2) cross at n = 2d = ${2 * d}.`,
    });
  }

  function showInputs(): void {
    inputs.n.value = String(cur.n); inputs.d.value = String(cur.d);
    inputs.heads.value = String(cur.heads); inputs.layers.value = String(cur.layers);
    for (const i of Object.values(inputs)) markInvalid(i, false);
    bytes.value = String(cur.bytes);
  }
  // A loaded state file changes the inputs from outside: follow it.
  store.subscribe((s, changed) => {
    if (!COST_KEYS.some((k) => changed.has(k))) return;
    const next = fromState(s);
    if ((Object.keys(next) as (keyof CostInput)[]).every((k) => next[k] === cur[k])) return; // our own update
    Object.assign(cur, next);
    presetId = presetOf(cur);
    showInputs();
    render();
  });
  render();
}

const SUP: Record<string, string> = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
/** "= 1.00 MB" or "≈ 201 MB": never "= ≈". */
const eq = (s: string) => (s.startsWith('≈') ? s : `= ${s}`);
/** 3 significant digits; powers of ten written out (2.24 × 10⁷) from a million up and below 0.001. */
const fmtRatio = (x: number) => {
  if (x < 1e6 && x >= 1e-3) return Number(x.toPrecision(3)).toString();
  const [m, e] = x.toExponential(2).split('e');
  return `${m} × 10${[...String(Number(e))].map((c) => SUP[c]).join('')}`;
};
const shortCount = (v: number) => (v >= 1e6 ? `${v / 2 ** 20}M` : v >= 1024 ? `${v / 1024}k` : String(v));
