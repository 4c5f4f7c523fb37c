// The picture that leads the cost lab: the n × n grid of scores for a context of n tokens, growing as n grows, with
// one number beside it, n². Up to 64 tokens each cell is drawn; beyond that the square stays full size and the grid
// of half the context is outlined inside it: a quarter of the cells. The count is the page's integer arithmetic.
import type { Store } from '../../state/store';
import { COST_LIMITS } from '../../model/cost';
import { el } from '../../ui/dom';
import { select } from 'd3';

const BOX = 256; // the square at its largest, in SVG units
const PAD = 30;
const CELL = 4; // units per token while the grid still fits
const MAX_POW = 17; // the slider goes to 2¹⁷ = 131,072 tokens

const grouped = (v: bigint) => v.toLocaleString('en'); // a comma for thousands, as the page's other counts

export function mountGrid(section: HTMLElement, store: Store): void {
  const slider = el('input', { type: 'range', min: 1, max: MAX_POW, step: 1, id: 'cost-grid-n', 'data-control': 'cost-grid-n' });
  const nOut = el('output', { class: 'slider-value', for: 'cost-grid-n' });
  const halve = el('button', { type: 'button', class: 'chip', 'data-control': 'cost-grid-halve', text: '½ halve n' });
  const double = el('button', { type: 'button', class: 'chip', 'data-control': 'cost-grid-double', text: '× 2 double n' });
  const big = el('output', { class: 'grid-number', 'data-cost': 'grid-number' });
  const words = el('p', { class: 'grid-words', 'aria-live': 'polite' });
  const figure = el('figure', { class: 'cost-grid' });
  const svg = select(figure).append('svg').attr('viewBox', `0 0 ${BOX + PAD + 4} ${BOX + PAD + 4}`).attr('class', 'grid-svg')
    .attr('role', 'img').attr('data-chart', 'cost-grid');
  svg.append('text').attr('class', 'grid-axis').attr('x', PAD).attr('y', PAD - 10).text('n keys →');
  svg.append('text').attr('class', 'grid-axis').attr('transform', `translate(${PAD - 8},${PAD}) rotate(-90)`).attr('text-anchor', 'end').text('← n queries');
  const g = svg.append('g').attr('transform', `translate(${PAD},${PAD})`);
  const square = g.append('rect').attr('class', 'grid-square');
  const lines = g.append('g').attr('class', 'grid-lines');
  const half = g.append('rect').attr('class', 'grid-half');
  const halfLabel = g.append('text').attr('class', 'grid-half-label');

  section.append(
    el('div', { class: 'cost-lead' },
      figure,
      el('div', { class: 'grid-side' },
        el('p', { class: 'grid-caption', text: 'One attention score for every pair of tokens:' }),
        big,
        words,
        el('div', { class: 'field slider' },
          el('label', { for: 'cost-grid-n', text: 'n, tokens in the context' }),
          el('div', { class: 'slider-row' }, slider, nOut)),
        el('div', { class: 'button-group', role: 'group', 'aria-label': 'Change n' }, halve, double))),
  );

  const setN = (n: number) => store.update({ costN: Math.max(COST_LIMITS.n.min, Math.min(COST_LIMITS.n.max, n)) });
  slider.addEventListener('input', () => setN(2 ** Number(slider.value)));
  halve.addEventListener('click', () => setN(Math.max(1, Math.round(store.state.costN / 2))));
  double.addEventListener('click', () => setN(store.state.costN * 2));

  const render = () => {
    const n = store.state.costN;
    const nn = BigInt(n) * BigInt(n);
    slider.value = String(Math.max(1, Math.min(MAX_POW, Math.round(Math.log2(n)))));
    const nText = n.toLocaleString('en-US');
    slider.setAttribute('aria-valuetext', `${nText} tokens`);
    nOut.textContent = nText;
    big.textContent = grouped(nn);
    big.dataset.value = nn.toString();
    words.textContent = `${nText} × ${nText} scores, in every head of every layer. Double n and this number is multiplied by 4.`;
    halve.disabled = n <= COST_LIMITS.n.min;
    double.disabled = n * 2 > COST_LIMITS.n.max;
    const side = Math.min(BOX, n * CELL);
    square.attr('width', side).attr('height', side);
    // Each cell while they are at least 4 units wide, else the outline of the grid for n/2 tokens.
    const cells = n * CELL <= BOX ? n : 0;
    lines.selectAll('line').remove();
    for (let t = 1; t < cells; t++) {
      lines.append('line').attr('x1', t * CELL).attr('x2', t * CELL).attr('y1', 0).attr('y2', side);
      lines.append('line').attr('y1', t * CELL).attr('y2', t * CELL).attr('x1', 0).attr('x2', side);
    }
    const showHalf = n >= 2;
    half.attr('display', showHalf ? null : 'none').attr('width', side / 2).attr('height', side / 2);
    halfLabel.attr('display', showHalf && side >= 180 ? null : 'none').attr('x', 6).attr('y', 16).text('grid for n/2');
    svg.attr('aria-label', `The ${nText} × ${nText} grid of attention scores, ${grouped(nn)} cells; the grid for half as many tokens, outlined in its corner, has a quarter of them.`);
  };
  store.subscribe((_, changed) => { if (changed.has('costN')) render(); });
  render();
}
