// Softmax lab: editable logits, temperature, probabilities, the exp terms and their sum, and the articles'
// worked examples ("Self-attention": [1, 1.1] / [10, 11] / [100, 110]; "An Intuition for Attention": [4, −1, 2.1],
// [3, 2, 1] vs [30, 20, 10]). The probabilities are the engine's; the e^((x−m)/T) column and its sum are the
// page's reading of them (pᵢ / p_max and 1 / p_max: the 1/Σ cancels).
import type { Lab, LabContext } from '../lab';
import { LIMITS } from '../../state/params';
import { SOFTMAX_LIMITS } from './state';
import { el, clear, binIcon } from '../../ui/dom';
import { BarChart } from '../../ui/bars';
import { buttonGroup, logSlider, formatTemp, numberInput } from '../../ui/controls';
import { tex } from '../../ui/katex';
import { disclosure } from '../../ui/disclosure';
import { fmt, fmtProb, exact, sub } from '../../ui/format';
import { interpolateViridis } from 'd3';

const PRESETS: { label: string; logits: number[]; note: string }[] = [
  { label: '[1, 1.1]', logits: [1, 1.1], note: 'From “Self-attention”: two logits 10% apart give almost even odds…' },
  { label: '[10, 11]', logits: [10, 11], note: '…the same 10% at ten times the scale is a clear winner…' },
  { label: '[100, 110]', logits: [100, 110], note: '…and at a hundred times it is nearly one-hot.' },
  { label: '[4, −1, 2.1]', logits: [4, -1, 2.1], note: 'From “An Intuition for Attention”: softmax([4, −1, 2.1]) ≈ [0.8648, 0.0058, 0.1294].' },
  { label: '[3, 2, 1]', logits: [3, 2, 1], note: 'From “An Intuition for Attention”: softmax([3, 2, 1]) ≈ [0.665, 0.244, 0.090]…' },
  { label: '[30, 20, 10]', logits: [30, 20, 10], note: '…but ×10 makes it extreme: why attention divides scores by √d_k.' },
];

/** float32's largest finite value is about e^88.72: a larger exponent overflows to ∞. */
const EXP_OVERFLOW = 88.72;

export const softmaxLab: Lab = {
  id: 'softmax',
  nav: 'Softmax',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    section.append(
      el('h2', { text: 'Softmax: from scores to probabilities' }),
      el('p', { class: 'intro', text: 'Attention turns raw similarity scores into weights with softmax: exponentiate each number, then divide by the sum. The results are between 0 and 1, sum to 1, keep the order of the inputs, and exaggerate gaps: the bigger the numbers, the more the largest one wins. Drag the bars, type logits, or try the articles’ examples.' }),
      tex(String.raw`\begin{gathered} \operatorname{softmax}(x)_i \;=\; \frac{e^{x_i/T}}{\sum_j e^{x_j/T}} \;=\; \frac{e^{(x_i-m)/T}}{\sum_j e^{(x_j-m)/T}} \\ m=\max_j x_j \end{gathered}`, true),
    );

    const note = el('p', { class: 'preset-note', 'aria-live': 'polite' });
    section.append(
      buttonGroup('Worked examples', PRESETS.map((p) => ({
        label: p.label, title: p.note, name: `sm-preset-${p.label}`,
        onClick: () => store.update({ logits: [...p.logits] }),
      }))),
      note,
    );

    // Logit editor (typing) and the two charts.
    const list = el('div', { class: 'logit-list', role: 'group', 'aria-label': 'Logits' });
    const addBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'sm-add', text: '+ add logit' });
    // A typed logit the lab cannot use (empty, not a number, past ±abs) is not applied: say so, and what it kept.
    const badNote = el('p', { class: 'help warn-text', role: 'status', 'data-figure': 'sm-logit-problem' });
    addBtn.addEventListener('click', () => {
      const xs = store.state.logits;
      if (xs.length < SOFTMAX_LIMITS.logits.max) store.update({ logits: [...xs, 0] });
    });
    const logitBars = new BarChart({ labels: [], values: [], format: (v) => fmt(v, 2), colour: () => '#5b93c7', label: 'Logits' });
    const probBars = new BarChart({ labels: [], values: [], domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: 'Probabilities' });
    const temp = logSlider(LIMITS.temp.min, LIMITS.temp.max, store.state.smTemp, (v) => store.update({ smTemp: v }), 'sm-temp', 'Temperature T');
    section.append(
      el('div', { class: 'two-col' },
        el('div', { class: 'panel' }, el('h3', { text: 'Logits x (drag a bar, or type)' }), logitBars.root, list, badNote, addBtn),
        el('div', { class: 'panel' }, el('h3', { text: 'Probabilities softmax(x / T)' }), probBars.root, temp.root,
          el('p', { class: 'help', text: 'T < 1 sharpens (towards the arg-max), T > 1 flattens (towards uniform). Attention’s 1/√d_k is a temperature of √d_k.' }))),
    );

    // The arithmetic, one row per logit.
    const table = el('table', { class: 'plain-table', 'data-table': 'softmax' });
    const overflow = el('div', { class: 'callout' });
    const scales = el('table', { class: 'plain-table', 'data-table': 'softmax-scales' });
    section.append(
      el('h3', { text: 'The arithmetic' }),
      el('div', { class: 'table-scroll' }, table),
      overflow,
      disclosure('Same gaps, different scales: every worked example at this temperature', el('div', {},
        el('p', { class: 'help', text: 'Softmax reacts to differences, and multiplying every input by 10 makes the same relative gap decisive.' }),
        el('div', { class: 'table-scroll' }, scales)), 'softmax-scales'),
    );

    let inputs: HTMLInputElement[] = [];
    const renderList = (xs: number[]) => {
      if (inputs.length !== xs.length) {
        clear(list);
        inputs = xs.map((_, i) => {
          const { abs } = SOFTMAX_LIMITS.logits;
          // (a focused field is not rewritten when a bar is dragged: leaving it puts the store's value back)
          const input = numberInput(xs[i], { min: -abs, max: abs, name: `sm-logit-${i}`, label: `logit ${i + 1}`, current: () => store.state.logits[i] },
            (v) => store.update({ logits: store.state.logits.map((x, j) => (j === i ? v : x)) }));
          // numberInput marks a value it refuses and puts the lab's back when the field is left (an input event,
          // which empties this note): say why here, and what the lab keeps meanwhile.
          input.addEventListener('input', () => {
            const bad = input.getAttribute('aria-invalid') === 'true';
            badNote.textContent = bad ? `x${sub(i + 1)} must be a number from −${abs} to ${abs}; the lab keeps x${sub(i + 1)} = ${fmt(store.state.logits[i], 3)} until it is.` : '';
          });
          const rm = el('button', { type: 'button', class: 'remove-btn', 'aria-label': `remove logit ${i + 1}`, title: `remove x${sub(i + 1)}` }, binIcon());
          rm.disabled = xs.length <= SOFTMAX_LIMITS.logits.min;
          rm.addEventListener('click', () => {
            if (store.state.logits.length > SOFTMAX_LIMITS.logits.min) store.update({ logits: store.state.logits.filter((_, j) => j !== i) });
          });
          list.appendChild(el('div', { class: 'logit-item' }, el('span', { class: 'logit-name', text: `x${sub(i + 1)}` }), input, rm));
          return input;
        });
      }
      xs.forEach((x, i) => { if (document.activeElement !== inputs[i]) inputs[i].value = String(x); });
      addBtn.disabled = xs.length >= SOFTMAX_LIMITS.logits.max;
    };

    // The note speaks of an example's numbers: it shows while the logits are that example's (picked, typed or from a
    // link) and goes when they change, and it says when the temperature has moved off the articles' T = 1.
    const showNote = (logits: number[], t: number) => {
      const p = PRESETS.find((q) => q.logits.length === logits.length && q.logits.every((x, i) => x === logits[i]));
      note.textContent = !p ? '' : t === 1 ? p.note : `${p.note} (The article’s figures are at T = 1.)`;
    };

    const render = () => {
      const t0 = performance.now();
      const { logits, smTemp } = store.state;
      showNote(logits, smTemp);
      const p = engine.softmax(Float32Array.from(logits), { cols: logits.length, temperature: smTemp });
      renderList(logits);
      const labels = logits.map((_, i) => `x${sub(i + 1)}`);
      logitBars.update({
        labels, values: logits, format: (v) => fmt(v, 2), colour: (v) => (v < 0 ? '#5b93c7' : '#f2a65a'), label: 'Logits',
        onDrag: (i, v) => store.update({ logits: store.state.logits.map((x, j) => (j === i ? Math.max(-SOFTMAX_LIMITS.logits.abs, Math.min(SOFTMAX_LIMITS.logits.abs, v)) : x)) }),
      });
      probBars.update({ labels, values: Array.from(p), domain: [0, 1], format: fmtProb, colour: (v) => interpolateViridis(0.15 + 0.7 * v), label: 'Probabilities' });
      temp.set(smTemp);

      // The engine does not hand out its exp terms; e^{(x_i−m)/T} = p_i / p_max exactly (the 1/Σ cancels),
      // so the ratio of the engine's own outputs shows them, and Σ = 1 / p_max.
      let pmax = 0;
      p.forEach((v) => { if (v > pmax) pmax = v; });
      clear(table);
      table.append(
        el('caption', { text: `softmax at T = ${formatTemp(smTemp)}` }),
        el('thead', {}, el('tr', {},
          el('th', { scope: 'col', text: 'i' }), el('th', { scope: 'col', text: 'logit xᵢ' }),
          el('th', { scope: 'col' }, tex(String.raw`e^{(x_i-m)/T}`), el('span', { class: 'visually-hidden', text: 'e to the power (xᵢ − m) / T' })), el('th', { scope: 'col', text: 'probability pᵢ' }))),
      );
      const body = el('tbody');
      logits.forEach((x, i) => {
        body.appendChild(el('tr', {},
          el('th', { scope: 'row', text: String(i + 1) }),
          el('td', { text: fmt(x, 3) }),
          el('td', { text: fmt(p[i] / pmax, 4) }),
          el('td', { 'data-value': exact(p[i]), text: fmtProb(p[i]) })));
      });
      let total = 0;
      p.forEach((v) => { total += v; }); // a check the reader can do by hand: the engine's outputs sum to 1
      body.appendChild(el('tr', { class: 'sum-row' }, el('th', { scope: 'row', text: 'Σ' }), el('td'),
        el('td', { text: fmt(1 / pmax, 4) }), el('td', { text: fmt(total, 6) })));
      table.appendChild(body);

      const xmax = Math.max(...logits);
      clear(overflow);
      const big = xmax / smTemp > EXP_OVERFLOW;
      overflow.className = big ? 'callout warn' : 'callout';
      overflow.append(
        el('strong', { text: 'Why subtract the max? ' }),
        big
          ? `Here the largest exponent is ${fmt(xmax / smTemp, 2)} > 88.72, so e^(x/T) overflows float32 to ∞ and the naive formula gives ∞/∞ = NaN. Subtracting m = ${fmt(xmax, 2)} first makes the largest exponent 0 (e⁰ = 1) and nothing overflows; the ratio is unchanged because e^(−m/T) cancels above and below.`
          : `Multiplying the top and bottom by e^(−m/T) changes nothing mathematically, but it keeps every exponent ≤ 0, so e^(…) never overflows. In float32, e^x is ∞ beyond x ≈ 88.72: the [100, 110] example goes past it${110 / smTemp > EXP_OVERFLOW ? '' : ` at T < ${fmt(110 / EXP_OVERFLOW, 2)} (110 / 88.72)`}.`,
      );

      clear(scales);
      scales.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'logits' }), el('th', { scope: 'col', text: `softmax(x / ${formatTemp(smTemp)})` }))));
      const sb = el('tbody');
      for (const pr of PRESETS) {
        const q = engine.softmax(Float32Array.from(pr.logits), { cols: pr.logits.length, temperature: smTemp });
        sb.appendChild(el('tr', {}, el('th', { scope: 'row', text: pr.label }), el('td', { text: `[${Array.from(q, fmtProb).join(', ')}]` })));
      }
      scales.appendChild(sb);
      ctx.reportTiming('softmax', performance.now() - t0);
    };

    store.subscribe((_, changed) => { if (changed.has('logits') || changed.has('smTemp')) render(); });
    render();
  },
};

