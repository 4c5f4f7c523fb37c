// The model view (after BertViz's): every layer × head of the page's real language model on the learner's own text,
// as small heatmaps from model.forward(ids, { attention: true }); a selected head opened large with its token
// labels and one query's row; the next-token probabilities as a softmax at the softmax lab's temperature; and
// generation token by token, each new token's attention row drawn as it arrives.
import '../../styles/learn.css';
import '../../styles/model-view.css';
import type { Lab, LabContext } from '../lab';
import type { Model } from 'attnlab';
import { el, clear } from '../../ui/dom';
import { Heatmap } from '../../ui/heatmap';
import { MatrixTable } from '../../ui/matrix-table';
import { BarChart } from '../../ui/bars';
import { buttonGroup, logSlider, numberInput, field, problemLine } from '../../ui/controls';
import { disclosure } from '../../ui/disclosure';
import { exact, fmt, fmtProb } from '../../ui/format';
import { LIMITS } from '../../state/params';
import { HeadGrid, type HeadTag } from '../learn/head-grid';
import {
  loadShippedModel, onRealModel, onRealModelStatus, onSelectedHead, realModel, realModelStatus, selectHead, selectedHead,
  type RealModel,
} from '../../model/real-model';
import { PATTERN_NAMES, headCaption, headName, queryCaption, ruleText, rowMeans, showToken } from './read-heads';
import { MODEL_VIEW_TEXT } from './state';

/** Tokens the view shows at most (the grid stays readable; the model's context is longer). */
export const MAX_TOKENS = 64;
/** Tokens one generation adds at most. */
const GEN_TOKENS = 40;
/** Rows of the next-token table. */
const TOP = 10;

const PRESETS: { label: string; text: string; note: string }[] = [
  { label: 'Houston', text: MODEL_VIEW_TEXT, note: 'From “Self-attention”: its grid of weights for this sentence, here from a model trained on English.' },
  { label: 'the old man', text: 'the old man walked to the river', note: 'An ordinary sentence: every word is in the tokenizer’s vocabulary.' },
  { label: 'Genesis', text: 'In the beginning God created the heaven and the earth.', note: 'The first verse of the King James Bible, which the model was trained on.' },
  { label: 'banana + apple', text: 'I ate a banana and an apple', note: 'From the words-pulling-words article: “banana” pulls “apple” towards the fruits.' },
  { label: 'repeat', text: 'The cat sat on the mat. The cat sat on the mat.', note: 'A sentence said twice: a head that looks at what followed the same token last time (induction) shows a stripe in the second half.' },
];

/** cut: the text's token count; kept: how many leading special tokens a long text kept before its end. */
interface View { rm: RealModel; ids: Int32Array; tokens: string[]; cut: number; kept: number; attention: Float32Array[][]; logits: Float32Array }

export const modelViewLab: Lab = {
  id: 'model',
  nav: 'Model view',
  mount(section: HTMLElement, ctx: LabContext) {
    const { engine, store } = ctx;
    const about = el('p', { class: 'help', 'data-role': 'model-about' });
    const status = el('p', { class: 'model-status', role: 'status', 'data-role': 'model-status' });
    section.append(
      el('h2', { text: 'The model view: every head of a real model' }),
      el('p', { class: 'intro', text: 'A real language model reads any text you type. This one ships with the page: a small GPT-2 that this project trained itself, with its own engine, on the King James Bible and a collection of proverbs, quotations and riddles. The tokenizer cuts your text into tokens, the model reads them, and every head of every layer shows where each token looks. Click a head to open it.' }),
      about, status,
    );

    // The text and the tokens it becomes.
    const note = el('p', { class: 'preset-note', 'aria-live': 'polite' });
    const input = el('textarea', { rows: 2, 'data-control': 'model-text', spellcheck: 'false', maxlength: 2000 });
    input.value = store.state.modelText;
    const tokenStrip = el('ol', { class: 'model-tokens', 'data-role': 'model-tokens', 'aria-label': 'Tokens' });
    const tokenNote = el('p', { class: 'help', 'data-role': 'model-token-note' });
    section.append(
      buttonGroup('Example texts', PRESETS.map((p) => ({
        label: p.label, title: p.note, name: `model-preset-${p.label}`,
        onClick: () => { input.value = p.text; note.textContent = p.note; store.update({ modelText: p.text }); render(); },
      }))),
      note,
      field('Your text', input),
      el('h3', { text: 'Tokens, as the tokenizer cut them' }),
      tokenStrip, tokenNote,
    );

    // Every layer × head.
    const grid = new HeadGrid((layer, head) => selectHead(layer, head));
    const gridNote = el('p', { class: 'help', 'data-role': 'model-grid-note' });
    section.append(
      el('h3', { text: 'Every layer and head' }),
      el('p', { class: 'help', text: 'Each square is one head’s attention weights on your text: a row per token (the query), a column per token it can look at (the key), brighter for more weight; above the diagonal is the future, which a language model cannot see. A head’s name is given only where its score, measured on text the model never trained on, says so.' }),
      gridNote,
      el('div', { class: 'model-grid-box table-scroll' }, grid.root),
    );

    // The selected head, large.
    const headTitle = el('h3', { 'data-role': 'model-head-title' });
    const headCap = el('p', { class: 'caption', 'data-role': 'model-head-caption' });
    const big = new Heatmap({ name: 'model-head', label: 'attention weights', n: 0, m: 0, values: [], rowLabels: [], colLabels: [] });
    const table = new MatrixTable({ name: 'model-head', caption: 'attention weights', rows: 0, cols: 0, values: [], rowLabels: [], colLabels: [], palette: 'seq', fixedMax: 1 });
    const querySelect = el('select', { 'data-control': 'model-query' });
    querySelect.addEventListener('change', () => { query = Number(querySelect.value); draw(); });
    const rowBars = new BarChart({ labels: [], values: [], domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: 'One query’s weights' });
    const queryCap = el('p', { class: 'caption', 'data-role': 'model-query-caption' });
    const scoresTable = el('table', { class: 'plain-table', 'data-table': 'model-head-scores' });
    const scoresBox = el('div', {});
    section.append(el('div', { class: 'panel model-head', 'data-figure': 'model-head' },
      headTitle, headCap,
      el('div', { class: 'model-head-body' },
        el('div', { class: 'model-head-map table-scroll' }, big.root),
        el('div', { class: 'model-head-row' }, field('Query token', querySelect), queryCap, rowBars.root)),
      disclosure('The weights as a table', table.root, 'model-head-table'),
      scoresBox,
    ));

    // What comes next.
    const temp = logSlider(LIMITS.temp.min, LIMITS.temp.max, store.state.smTemp, (v) => store.update({ smTemp: v }), 'model-temp', 'Temperature T (the softmax section’s)');
    const nextCap = el('p', { class: 'caption', 'data-role': 'model-next-caption' });
    const nextTable = el('table', { class: 'plain-table', 'data-table': 'model-next' });
    // The seed Generate uses: the field's last whole number (one it refuses, such as 2.5, is said and not used).
    let seedValue = 1;
    const seed = numberInput(seedValue, { min: 0, max: 999999, step: 1, name: 'model-seed', label: 'Seed', current: () => seedValue }, (v) => { seedValue = v; });
    const seedProblem = problemLine(seed, 'model-seed', () => `The seed is a whole number from 0 to 999,999; Generate uses ${seedValue} until it is.`);
    const genBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'model-generate', text: 'Generate' });
    const stopBtn = el('button', { type: 'button', class: 'chip', 'data-control': 'model-stop', text: 'Stop', disabled: true });
    const genStatus = el('p', { class: 'help', role: 'status', 'data-role': 'model-gen-status' });
    const genText = el('p', { class: 'model-gen-text', 'data-role': 'model-gen-text' });
    const genMap = new Heatmap({ name: 'model-gen', label: 'each generated token’s attention', n: 0, m: 0, values: [], rowLabels: [], colLabels: [], maxCell: 22 });
    const genCap = el('p', { class: 'caption', 'data-role': 'model-gen-caption' });
    section.append(el('div', { class: 'panel', 'data-figure': 'model-next' },
      el('h3', { text: 'What comes next' }),
      el('p', { class: 'help', text: 'The model’s last row of logits, one per token of its vocabulary, through softmax at temperature T: the same softmax, and the same T, as in the softmax section at the top of the page. Lower T sharpens the choice; higher T flattens it.' }),
      temp.root,
      nextCap,
      el('div', { class: 'table-scroll' }, nextTable),
      el('h3', { text: 'Generate, one token at a time' }),
      el('p', { class: 'help', text: `Each new token is drawn from these probabilities at T (the seed makes the draw repeatable), appended, and the model reads the longer text to draw the next, up to ${GEN_TOKENS} tokens. The heatmap adds each new token’s row of weights in the selected head as it arrives.` }),
      el('div', { class: 'model-gen-controls' }, field('Seed', seed), genBtn, stopBtn), seedProblem,
      genStatus, genText, genCap,
      el('div', { class: 'model-gen-map table-scroll' }, genMap.root),
    ));

    // What the text's tokens are drawn in: hidden while there is no text, so nothing stale stays on screen.
    const figures = [grid.root.parentElement!, section.querySelector<HTMLElement>('[data-figure="model-head"]')!, section.querySelector<HTMLElement>('[data-figure="model-next"]')!];
    let view: View | undefined;
    let query = 0;
    let lastQueryFor = '';
    let generating: AbortController | undefined;

    const showStatus = () => {
      const s = realModelStatus();
      status.classList.toggle('error', s.state === 'error');
      if (s.state === 'loading') status.textContent = s.total ? `Loading the model: ${fmt(s.loaded / 1e6, 2)} of ${fmt(s.total / 1e6, 2)} MB…` : 'Loading the model…';
      else if (s.state === 'error') status.textContent = `The model could not be loaded: ${s.message}`;
      else status.textContent = '';
      section.dataset.modelState = realModel() ? 'ready' : s.state;
    };
    onRealModelStatus(showStatus);

    function describe(rm: RealModel): void {
      const c = rm.model.config;
      const mb = fmt(rm.model.weightBytes / 1e6, 2);
      about.textContent = `The model: ${rm.name}${rm.repo ? ` (${rm.repo})` : ''}, ${c.layers} layers of ${c.heads} heads, ${c.vocabSize.toLocaleString('en')} tokens in its vocabulary, a context of ${c.context} tokens, ${mb} MB of weights.`;
    }

    function compute(rm: RealModel): View | undefined {
      const tok = rm.model.tokenizer;
      if (!tok) return undefined;
      const all = tok.encode(input.value, { addSpecialTokens: true });
      const limit = Math.min(MAX_TOKENS, rm.model.config.context);
      // A long text keeps its end (what comes next, and generation, continue from there) and the special tokens the
      // tokenizer puts before it (a Llama's <s>).
      let ids = all, kept = 0;
      if (all.length > limit) {
        const plain = tok.encode(input.value, { addSpecialTokens: false });
        const lead = all.length - plain.length;
        const led = lead > 0 && lead < limit && plain.every((t, i) => t === all[lead + i]);
        kept = led ? lead : 0;
        ids = Int32Array.from([...all.subarray(0, kept), ...all.subarray(all.length - (limit - kept))]);
      }
      if (ids.length === 0) return { rm, ids, tokens: [], cut: all.length, kept, attention: [], logits: new Float32Array(0) };
      const out = rm.model.forward(ids, { attention: true });
      return { rm, ids, tokens: tok.tokens(ids), cut: all.length, kept, attention: out.attention, logits: out.logits };
    }

    function render(): void {
      const rm = realModel();
      if (!rm) return;
      const t0 = performance.now();
      view = compute(rm);
      const key = `${rm.name}|${view ? Array.from(view.ids).join(',') : ''}`;
      if (view && key !== lastQueryFor) { query = Math.max(0, view.ids.length - 1); lastQueryFor = key; }
      draw();
      ctx.reportTiming('model', performance.now() - t0);
    }

    function draw(): void {
      const rm = realModel();
      if (!rm) return;
      describe(rm);
      const v = view;
      clear(tokenStrip);
      if (!v) { tokenNote.textContent = 'This model came without a tokenizer: the view needs one to read text.'; return; }
      v.tokens.forEach((t, i) => tokenStrip.appendChild(el('li', { class: 'model-token', 'data-id': v.ids[i], 'data-text': t, title: `token ${i + 1}: id ${v.ids[i]}` }, showToken(t))));
      tokenNote.textContent = v.ids.length === 0 ? 'Type some text to see its tokens.'
        : `${v.ids.length} token${v.ids.length === 1 ? '' : 's'}${v.cut > v.ids.length ? `: ${v.kept ? `the ${v.kept === 1 ? 'special token' : `${v.kept} special tokens`} the tokenizer puts first, then ` : ''}the last ${v.ids.length - v.kept} of ${v.cut}, the most this view reads (the model’s context is ${rm.model.config.context})` : ''}. ␣ is a space: most tokens carry the space before a word.`;
      const n = v.ids.length;
      const c = rm.model.config;
      for (const f of figures) f.hidden = n === 0;
      if (n === 0) { section.dataset.tokens = '0'; return; }
      const sel = selectedHead() ?? { layer: 0, head: 0 };
      // The grid.
      const perLayer = v.attention.map((heads) => {
        const a = new Float32Array(heads.length * n * n);
        heads.forEach((w, h) => a.set(w, h * n * n));
        return a;
      });
      const tags: HeadTag[][] = v.attention.map((heads, l) => heads.map((_, h) => {
        const name = headName(rm.headScores, l, h);
        return name ? { text: `${PATTERN_NAMES[name.pattern]} ${fmt(name.score, 2)}`, strong: true } : { text: rm.headScores ? 'no name' : '', strong: false };
      }));
      grid.selected = [sel.layer, sel.head];
      grid.update(perLayer, c.heads, n, tags);
      const named = rm.headScores ? rm.headScores.names.filter((x) => x.patterns.length).length : 0;
      gridNote.textContent = rm.headScores
        ? `${named} of ${c.layers * c.heads} heads ${named === 1 ? 'is' : 'are'} named, each for a pattern when ${ruleText(rm.headScores.rule)}.`
        : 'This model came without measured head scores, so no head is named.';

      // The selected head.
      const w = v.attention[sel.layer][sel.head];
      const labels = v.tokens.map((t, i) => `${i + 1} ${showToken(t)}`);
      const masked = Array.from({ length: n * n }, (_, k) => k % n > Math.floor(k / n));
      headTitle.textContent = `Layer ${sel.layer + 1}, head ${sel.head + 1}`;
      // A name comes from a score measured on held-out text: say so, since this text need not show it.
      const name = headName(rm.headScores, sel.layer, sel.head);
      headCap.textContent = headCaption(sel.layer, sel.head, rowMeans(w, n)) + (name
        ? ` Its name, “${PATTERN_NAMES[name.pattern]}”, comes from its score of ${fmt(name.score, 2)} measured on held-out text (its scores are below), not from this text.`
        : '');
      const q = Math.min(query, n - 1);
      big.update({ name: 'model-head', label: `Layer ${sel.layer + 1} head ${sel.head + 1} attention weights`, n, m: n, values: w, rowLabels: labels, colLabels: labels, masked, highlightRow: q, onSelectRow: (r) => { query = r; draw(); } });
      table.update({ name: 'model-head', caption: `Layer ${sel.layer + 1} head ${sel.head + 1}: attention weights (rows: queries, columns: keys)`, rows: n, cols: n, values: w, rowLabels: labels, colLabels: labels, palette: 'seq', fixedMax: 1, maskedCells: masked, highlightRow: q });
      if (querySelect.options.length !== n || querySelect.dataset.key !== lastQueryFor) {
        clear(querySelect);
        labels.forEach((l, i) => querySelect.appendChild(el('option', { value: i, text: l })));
        querySelect.dataset.key = lastQueryFor;
      }
      querySelect.value = String(q);
      const row = Array.from(w.subarray(q * n, q * n + q + 1));
      rowBars.update({ labels: labels.slice(0, q + 1), values: row, domain: [0, 1], format: fmtProb, colour: () => '#21918c', label: `Weights of query ${labels[q]}`, highlight: row.indexOf(Math.max(...row)) });
      queryCap.textContent = queryCaption(v.tokens, w, n, q);
      drawScores(rm, sel.layer, sel.head);

      drawNext(rm, v);
      drawGen();
      section.dataset.tokens = String(n);
      section.dataset.selected = `${sel.layer},${sel.head}`;
    }

    function drawScores(rm: RealModel, layer: number, head: number): void {
      clear(scoresBox);
      const s = rm.headScores;
      if (!s) return;
      clear(scoresTable);
      scoresTable.append(el('caption', { text: `Layer ${layer + 1} head ${head + 1}, measured on held-out text: the mean share of a query’s attention each pattern names, against chance (the share under attention spread evenly)` }),
        el('tr', {}, el('th', { scope: 'col', text: 'pattern' }), el('th', { scope: 'col', text: 'score' }), el('th', { scope: 'col', text: 'chance' }), el('th', { scope: 'col', text: 'named' })));
      const named = s.names.find((x) => x.layer === layer && x.head === head)?.patterns ?? [];
      for (const p of Object.keys(PATTERN_NAMES) as (keyof typeof PATTERN_NAMES)[]) {
        const pat = s.patterns[p];
        if (!pat) continue;
        const score = pat.scores[layer][head];
        scoresTable.appendChild(el('tr', { 'data-pattern': p },
          el('th', { scope: 'row', text: PATTERN_NAMES[p] }),
          el('td', { 'data-value': exact(score), text: fmt(score, 3) }),
          el('td', { text: fmt(pat.chance, 3) }),
          el('td', { text: named.includes(p) ? 'yes' : '' })));
      }
      scoresBox.append(disclosure('Its measured scores', el('div', { class: 'table-scroll' }, scoresTable,
        el('p', { class: 'help', text: `A head is named when ${ruleText(s.rule)}.` })), 'model-head-scores'));
    }

    function drawNext(rm: RealModel, v: View): void {
      const n = v.ids.length;
      const V = rm.model.config.vocabSize;
      const T = store.state.smTemp;
      const p = engine.softmax(v.logits.subarray((n - 1) * V, n * V), { cols: V, temperature: T });
      // (Tokens at probability 0 are not "likely": a cold softmax leaves fewer than ten above it.)
      const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => p[b] - p[a] || a - b).slice(0, TOP).filter((id) => p[id] > 0);
      const tok = rm.model.tokenizer!;
      const names = tok.tokens(order);
      clear(nextTable);
      const k = order.length, lead = k === 1 ? 'The most likely next token' : `The ${k} most likely next tokens`;
      nextTable.append(el('caption', { text: `${lead} after “${showToken(v.tokens[n - 1])}”, at T = ${fmt(T, 3)}${k < TOP ? ` (every other token is at probability 0 in float32)` : ''}` }),
        el('tr', {}, el('th', { scope: 'col', text: '#' }), el('th', { scope: 'col', text: 'token' }), el('th', { scope: 'col', text: 'probability' })));
      order.forEach((id, r) => nextTable.appendChild(el('tr', { 'data-id': id, 'data-p': exact(p[id]) },
        el('td', { text: String(r + 1) }), el('td', { class: 'model-token-cell', text: showToken(names[r]) }), el('td', { text: fmtProb(p[id]) }))));
      // The others' share summed itself (1 − the listed ones' loses it to rounding): near 1, the caption says what is left.
      let shown = 0, rest = 0;
      const top = new Set(order);
      for (let i = 0; i < V; ++i) if (top.has(i)) shown += p[i]; else rest += p[i];
      const others = (V - k).toLocaleString('en'), hold = k === 1 ? 'holds' : 'hold';
      const share = rest >= 0.005 ? `${hold} ${fmt(shown, 2)} of the probability, the other ${others} the rest`
        : rest > 0 ? `${hold} all but ${fmtProb(rest)} of the probability, which the other ${others} share`
          : `${hold} all of the probability, to float32 precision`;
      nextCap.textContent = `After “${showToken(v.tokens[n - 1])}” the model’s most likely next token is “${showToken(names[0])}”, at ${fmt(p[order[0]], 2)}; ${k === 1 ? 'it alone' : `these ${k} tokens`} ${share} (T = ${fmt(T, 3)}).`;
      nextTable.dataset.temperature = exact(T);
    }

    // Generation: the text's tokens as the prompt; the model streams tokens; after each, the page runs the model on
    // the longer text (forward is independent of the generation) and draws the new rows of the selected head.
    let gen: { prompt: number[]; ids: number[]; texts: string[]; attention?: Float32Array[][] } | undefined;
    function drawGen(): void {
      clear(genText);
      if (!gen) return;
      const rm = realModel();
      if (!rm?.model.tokenizer) return;
      const tok = rm.model.tokenizer;
      genText.append(el('span', { class: 'model-gen-prompt', text: tok.decode(gen.prompt) }));
      gen.ids.slice(gen.prompt.length).forEach((id, i) => genText.appendChild(el('span', { class: 'model-gen-new', 'data-id': id }, gen!.texts[i])));
      const made = gen.ids.length - gen.prompt.length;
      if (!gen.attention || made === 0) { genMap.update({ name: 'model-gen', label: 'each generated token’s attention', n: 0, m: 0, values: [], rowLabels: [], colLabels: [] }); genCap.textContent = ''; return; }
      const sel = selectedHead() ?? { layer: 0, head: 0 };
      const all = gen.ids.length, p0 = gen.prompt.length;
      const w = gen.attention[sel.layer][sel.head];
      const values = w.subarray(p0 * all, all * all);
      const names = tok.tokens(gen.ids).map((t, i) => `${i + 1} ${showToken(t)}`);
      const masked = Array.from({ length: made * all }, (_, k) => k % all > p0 + Math.floor(k / all));
      genMap.update({ name: 'model-gen', label: `Layer ${sel.layer + 1} head ${sel.head + 1}: each generated token’s attention`, n: made, m: all, values, rowLabels: names.slice(p0), colLabels: names, masked, maxCell: 22, highlightRow: made - 1 });
      const last = all - 1;
      let best = 0;
      for (let j = 1; j <= last; j++) if (w[last * all + j] > w[last * all + best]) best = j;
      genCap.textContent = `Layer ${sel.layer + 1} head ${sel.head + 1}: the newest token, “${showToken(tok.tokens([gen.ids[last]])[0])}”, looks most at ${best === last ? 'itself' : `“${names[best].replace(/^\d+ /, '')}” (token ${best + 1})`}: ${fmt(w[last * all + best], 2)}.`;
    }

    const nextFrame = () => new Promise<void>((r) => requestAnimationFrame(() => r()));
    async function generate(): Promise<void> {
      const rm = realModel();
      if (!rm || !view || view.ids.length === 0 || generating) return;
      const model: Model = rm.model;
      const prompt = Array.from(view.ids);
      const maxTokens = Math.min(GEN_TOKENS, model.config.context - prompt.length);
      if (maxTokens <= 0) { genStatus.textContent = `The text fills the model’s context of ${model.config.context} tokens: shorten it to generate.`; return; }
      const ac = new AbortController();
      generating = ac;
      genBtn.disabled = true; stopBtn.disabled = false;
      section.dataset.generating = 'true';
      gen = { prompt, ids: [...prompt], texts: [] };
      genStatus.textContent = 'Generating…';
      drawGen();
      const T = store.state.smTemp, used = seedValue;
      try {
        for await (const t of model.stream(prompt, { maxTokens, temperature: T, topK: 0, topP: 1, seed: used, signal: ac.signal })) {
          gen.ids.push(t.id);
          gen.texts.push(t.text ?? '');
          gen.attention = model.forward(gen.ids, { attention: true }).attention;
          drawGen();
          const made = gen.ids.length - prompt.length;
          genStatus.textContent = `Generating: ${made} token${made === 1 ? '' : 's'} so far…`;
          // One frame per token: each arrives on screen before the next is drawn.
          await nextFrame();
        }
        const made = gen.ids.length - prompt.length;
        genStatus.textContent = `Generated ${made} token${made === 1 ? '' : 's'} at T = ${fmt(T, 3)}, seed ${used}${made < maxTokens ? ': the model ended the text' : ''}.`;
        section.dataset.genResult = 'done';
      } catch (err) {
        const made = gen.ids.length - prompt.length;
        if (ac.signal.aborted) { genStatus.textContent = `Stopped after ${made} token${made === 1 ? '' : 's'}.`; section.dataset.genResult = 'stopped'; }
        else { genStatus.textContent = `Generation failed: ${err instanceof Error ? err.message : String(err)}`; section.dataset.genResult = 'error'; }
      } finally {
        generating = undefined;
        genBtn.disabled = false; stopBtn.disabled = true;
        section.dataset.generating = 'false';
      }
    }
    genBtn.addEventListener('click', () => { void generate(); });
    stopBtn.addEventListener('click', () => generating?.abort(new DOMException('stopped', 'AbortError')));

    input.addEventListener('input', () => { store.update({ modelText: input.value }); render(); });
    onSelectedHead(() => draw());
    onRealModel(() => { generating?.abort(); gen = undefined; render(); showStatus(); });
    store.subscribe((s, changed) => {
      // A text from elsewhere (a state file, the browser's back button) replaces the box's.
      if (changed.has('modelText' as never) && input.value !== s.modelText) { input.value = s.modelText; render(); }
      if (!changed.has('smTemp' as never)) return;
      temp.set(s.smTemp);
      const rm = realModel();
      if (rm && view && view.ids.length) drawNext(rm, view);
    });

    // The model loads the first time the section comes near the screen.
    showStatus();
    new IntersectionObserver((entries, obs) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      obs.disconnect();
      loadShippedModel().catch((err: unknown) => console.error(err));
    }, { rootMargin: '400px 0px' }).observe(section);
  },
};
