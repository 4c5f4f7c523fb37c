// A colour legend: gradient bar with ticks, drawn with D3. Every heatmap and coloured table has one.
import { axisBottom, range, scaleLinear, select } from 'd3';
import { el, nextId } from './dom';
import type { Scale } from './palette';

export function legend(scale: Scale, label: string, withMasked = false): HTMLElement {
  const width = 200;
  const lo = scale.palette === 'seq' ? 0 : -scale.max;
  const hi = scale.max;
  const wrap = el('div', { class: 'legend' });
  wrap.appendChild(el('span', { class: 'legend-label', text: label }));
  const id = nextId('grad');
  const svg = select(wrap)
    .append('svg')
    .attr('viewBox', `0 0 ${width + 16} 30`)
    .attr('width', width + 16)
    .attr('height', 30)
    .attr('role', 'img')
    .attr('aria-label', `Colour scale from ${lo.toPrecision(3)} to ${hi.toPrecision(3)}`);
  const grad = svg.append('defs').append('linearGradient').attr('id', id);
  for (const t of range(0, 1.0001, 0.1)) {
    grad.append('stop').attr('offset', `${t * 100}%`).attr('stop-color', scale.colour(lo + t * (hi - lo)));
  }
  svg.append('rect').attr('x', 8).attr('y', 2).attr('width', width).attr('height', 10).attr('fill', `url(#${id})`);
  const x = scaleLinear().domain([lo, hi]).range([8, width + 8]);
  svg.append('g').attr('transform', 'translate(0,12)').call(axisBottom(x).ticks(5).tickSize(3));
  if (withMasked) {
    wrap.appendChild(el('span', { class: 'legend-masked' }, el('span', { class: 'swatch masked', 'aria-hidden': 'true' }), ' masked (−∞ → weight 0)'));
  }
  return wrap;
}
