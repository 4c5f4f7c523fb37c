// "The context is full" ("Self-attention"): attention keeps an n×n matrix of scores per head per layer, so its
// memory and its FLOPs grow with n², while q, k, v and the projections grow with n. The section leads with the
// n × n grid and its one number (cost-grid.ts), then the calculator (cost-calculator.ts: the page's integer
// arithmetic) and the measured curve (cost-curve.ts: the engine itself, in a worker).
import type { Lab, LabContext } from '../lab';
import { el } from '../../ui/dom';
import { mountGrid } from './cost-grid';
import { mountCalculator } from './cost-calculator';
import { mountCurve } from './cost-curve';
import '../../styles/cost.css';

export const costLab: Lab = {
  id: 'cost',
  nav: 'Cost',
  mount(section: HTMLElement, ctx: LabContext) {
    section.append(
      el('h2', { text: 'The cost of attention' }),
      el('p', { class: 'intro', text: '“The context is full” has a concrete cause. Every head of every layer scores every token against every other: an n × n grid. Queries, keys and values grow in step with the context; the grid grows with its square.' }),
    );
    mountGrid(section, ctx.store);
    mountCalculator(section, ctx.store);
    mountCurve(section);
  },
};
