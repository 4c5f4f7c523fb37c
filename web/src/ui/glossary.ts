// Words a newcomer may not know (logit, log-softmax, nats, float32, wasm, Web Worker, layer-normed, LayerNorm, RMSNorm,
// <unk>, held-out, d_model, KiB, optimizer state) are explained where they appear: each use in the page's prose becomes a
// dotted-underlined term that is a tab stop; hovering it, focusing it from the keyboard or tapping it shows a short
// explanation, and screen readers hear the same text as its description. Text the labs write later is covered too
// (a MutationObserver), so a status line that says "KiB" explains it like the intro does. Tables, formulas, code,
// controls and links are left alone: a tab stop inside a button or a label would be a control inside a control.
import { el } from './dom';

const TERMS: Record<string, string> = {
  logit: 'logit: a raw score before softmax, any number from −∞ to ∞; softmax turns a row of logits into probabilities. A larger logit gets a larger share.',
  nats: 'nats: the unit of a loss measured with the natural logarithm (ln). Guessing evenly among V tokens costs ln V nats; 1 nat ≈ 1.44 bits.',
  float32: 'float32: a 32-bit floating-point number, the format the engine computes in: about 7 significant digits, largest value about 3.4 × 10³⁸.',
  wasm: 'wasm (WebAssembly): compiled code that the browser runs at close to native speed. The engine is C++ compiled to it.',
  WebAssembly: 'WebAssembly (wasm): compiled code that the browser runs at close to native speed. The engine is C++ compiled to it.',
  'Web Worker': 'Web Worker: a background thread of the page. Work there does not freeze the page: you can scroll and click while it runs.',
  'layer-normed': 'layer-normed: passed through layer normalization, which shifts each vector to mean 0 and scales it to spread 1, then applies a learned scale and shift.',
  '<unk>': '<unk>: the “unknown” token. Every word outside the model’s vocabulary becomes this one token, so the model cannot tell them apart.',
  'held-out': 'held-out: kept out of training and used only to measure the model, so its score shows what the model learned rather than what it memorised.',
  d_model: 'd_model: the model’s width, how many numbers make up each token’s vector.',
  KiB: 'KiB (kibibyte): 1,024 bytes.',
  LayerNorm: 'LayerNorm (layer normalization): shifts each token’s vector to mean 0 and scales it to spread 1, then applies a learned scale and shift. GPT-2 does this before every attention and feed-forward layer.',
  RMSNorm: 'RMSNorm (root-mean-square normalization): scales each token’s vector so that the mean of its squares is 1, then applies a learned scale. Unlike LayerNorm it neither subtracts the mean nor adds a shift. Llama-family models do this before every attention and feed-forward layer.',
  'optimizer state': 'optimizer state: what training keeps besides the weights and their gradients. The engine trains with AdamW, which keeps two running averages for every parameter (of its gradient and of its gradient squared).',
  'log-softmax': 'log-softmax: the logarithm of softmax, computed as xᵢ − m − ln Σⱼ e^(xⱼ − m) without forming the probabilities. It stays finite where a probability rounds to 0, so losses are computed from it.',
};

// Longest first, so "Web Workers" is one term; "wasm" only as a word of its own (not the backend name "wasm-simd").
const PATTERN = /\blog-softmax\b|\blogits?\b|<unk>|\bWeb Workers?\b|\blayer-normed\b|\bLayerNorm\b|\bRMSNorm\b|\boptimizer state\b|\bheld-out\b|\bd_model\b|\bWebAssembly\b|\bfloat32\b|\bwasm\b(?!-)|\bnats\b|\bKiB\b/g;
const SKIP = 'script, style, textarea, input, select, option, button, label, a, summary, table, svg, code, pre, .katex, .term, [aria-hidden="true"], .term-tip, .section-nav';

// A plural ("Web Workers", "logits") is explained under its singular.
const key = (match: string) => (match in TERMS ? match : match.slice(0, -1));
const defId = (k: string) => `term-${k.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '').toLowerCase()}`;

function wrapText(node: Text): void {
  const text = node.data;
  PATTERN.lastIndex = 0;
  if (!PATTERN.test(text)) return;
  const parent = node.parentElement;
  if (!parent || parent.closest(SKIP)) return;
  PATTERN.lastIndex = 0;
  const frag = document.createDocumentFragment();
  let at = 0;
  for (let m = PATTERN.exec(text); m; m = PATTERN.exec(text)) {
    if (m.index > at) frag.append(text.slice(at, m.index));
    const k = key(m[0]);
    frag.append(el('dfn', { class: 'term', tabindex: 0, 'aria-describedby': defId(k), 'data-term': k, text: m[0] }));
    at = m.index + m[0].length;
  }
  if (at < text.length) frag.append(text.slice(at));
  node.replaceWith(frag);
}

function scan(root: Node): void {
  if (root instanceof Text) { wrapText(root); return; }
  if (!(root instanceof Element) || root.closest(SKIP)) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const found: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) found.push(n as Text);
  found.forEach(wrapText);
}

/** Explains the terms in `roots` now and in whatever is written into them later. */
export function explainTerms(roots: HTMLElement[]): void {
  // The explanations, once each, for aria-describedby (hidden elements still give their text as a description).
  const defs = el('div', { hidden: true, class: 'term-defs' });
  for (const [k, v] of Object.entries(TERMS)) defs.append(el('span', { id: defId(key(k)), text: v }));
  const tip = el('div', { class: 'term-tip', role: 'tooltip', hidden: true, 'aria-hidden': 'true' });
  document.body.append(defs, tip);

  let shown: HTMLElement | null = null;
  const show = (t: HTMLElement) => {
    shown = t;
    tip.textContent = TERMS[t.dataset.term ?? ''] ?? '';
    tip.hidden = false;
    const r = t.getBoundingClientRect();
    const w = Math.min(320, document.documentElement.clientWidth - 16);
    tip.style.width = `${w}px`;
    tip.style.left = `${Math.max(8, Math.min(r.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - w - 8))}px`;
    tip.style.top = `${r.bottom + window.scrollY + 6}px`;
  };
  const hide = () => { shown = null; tip.hidden = true; };
  const term = (e: Event) => (e.target instanceof Element ? e.target.closest<HTMLElement>('dfn.term') : null);
  document.addEventListener('mouseover', (e) => { const t = term(e); if (t) show(t); else if (shown && document.activeElement !== shown) hide(); });
  document.addEventListener('focusin', (e) => { const t = term(e); if (t) show(t); else hide(); });
  document.addEventListener('focusout', (e) => { if (term(e)) hide(); });
  // A tap (touch has no hover) opens it; a tap elsewhere or Escape closes it.
  document.addEventListener('click', (e) => { const t = term(e); if (t) show(t); else hide(); });
  document.addEventListener('keydown', (e) => { if (e.key === 'Escape' && !tip.hidden) hide(); });

  for (const root of roots) {
    scan(root);
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === 'characterData') scan(r.target);
        else r.addedNodes.forEach(scan);
      }
    }).observe(root, { childList: true, characterData: true, subtree: true });
  }
}
