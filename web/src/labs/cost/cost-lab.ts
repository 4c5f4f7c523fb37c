// "The context is full" (seed 000): attention keeps an n×n matrix of scores per head per layer, so its memory
// and its FLOPs grow with n², while q, k, v and the projections grow with n. The section has two parts: the
// calculator (cost-calculator.ts) does the arithmetic, the measured curve (cost-curve.ts) runs the engine itself.
import type { Lab, LabContext } from '../lab';
import { el } from '../../ui/dom';
import { mountCalculator } from './cost-calculator';
import { mountCurve } from './cost-curve';
import '../../styles/cost.css';

export const costLab: Lab = {
  id: 'cost',
  nav: 'Cost',
  mount(section: HTMLElement, ctx: LabContext) {
    section.append(
      el('h2', { text: 'The cost of attention' }),
      el('p', { class: 'intro', text: '“The context is full” has a concrete cause. Every head of every layer scores every token against every other: an n × n matrix. The q, k and v matrices are n × d, so they grow linearly with the context; the scores grow with its square. Double the context and that matrix quadruples, in every head and every layer.' }),
    );
    mountCalculator(section, ctx.store);
    mountCurve(section);
  },
};
