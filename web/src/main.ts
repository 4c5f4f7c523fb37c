// Boot: read the URL, load the engine once, mount the labs, keep the URL in step with the state.
import './styles/base.css';
import './styles/labs.css';
import { loadEngine } from './engine';
import { parseQuery } from './state/url-state';
import { Store } from './state/store';
import { el } from './ui/dom';
import { setTex } from './ui/katex';
import { saveLoadControls } from './ui/save-load';
import { setNavLabel } from './ui/nav-label';
import type { Lab, LabContext } from './labs/lab';
import { softmaxLab } from './labs/softmax/softmax-lab';
import { attentionLab } from './labs/attention/attention-lab';
import { multiheadLab } from './labs/attention/multihead-lab';
import { kvLookupLab } from './labs/intuition/kv-lookup-lab';
import { pullLab } from './labs/intuition/pull-lab';
import { sqrtDkLab } from './labs/attention/sqrt-dk-lab';
import { stabilityLab } from './labs/softmax/stability-lab';
import { causalLab } from './labs/attention/causal-lab';
import { asymLab } from './labs/intuition/asym-lab';
import { spacesLab } from './labs/intuition/spaces-lab';
import { costLab } from './labs/cost/cost-lab';
import { benchLab } from './labs/appendix/bench-lab';
import { readingLab } from './labs/reading/further-reading';
import { learnLab } from './labs/learn/learn-lab';
import { positionLab } from './labs/position/position-lab';
import { modelViewLab } from './labs/model-view/model-view-lab';
import { modelLab } from './labs/model/model-lab';
import { loadShippedModel } from './model/trained';
import { engineCalls } from './engine';
import { navOverflow } from './ui/nav-overflow';
import { keyboardScrollable } from './ui/scroll-focus';
import { explainTerms } from './ui/glossary';

/** The labs, in page order: the ideas, the full pipeline, its cost, the articles, then the appendix. */
const LABS: Lab[] = [softmaxLab, kvLookupLab, pullLab, spacesLab, asymLab, modelLab, attentionLab, sqrtDkLab, stabilityLab, causalLab, multiheadLab, modelViewLab, positionLab, learnLab, costLab, readingLab, benchLab];

const status = document.getElementById('engine-status')!;
const notice = document.getElementById('notice')!;
const main = document.getElementById('main')!;
const navList = document.getElementById('section-nav-list')!;

function showNotice(rejected: string[], unknown: number): void {
  if (rejected.length === 0 && unknown === 0) return;
  const parts: string[] = [];
  if (rejected.length) parts.push(`These link parameters were not valid and were reset to their defaults: ${rejected.join(', ')}.`);
  if (unknown) parts.push(`${unknown} unknown parameter${unknown > 1 ? 's were' : ' was'} ignored.`);
  const close = el('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Dismiss notice', text: '×' });
  close.addEventListener('click', () => { notice.hidden = true; });
  // textContent only: parameter names are ours, but nothing from the URL is ever parsed as HTML.
  notice.append(el('p', { text: parts.join(' ') }), close);
  notice.hidden = false;
}

function buildNav(): void {
  for (const lab of LABS) {
    navList.appendChild(el('li', {}, el('a', { href: `#${lab.id}`, text: lab.nav })));
  }
  const share = el('button', { type: 'button', class: 'chip share', 'data-control': 'share', title: 'Copy a link to exactly this view' });
  setNavLabel(share, 'Copy link', 'Link');
  share.addEventListener('click', async () => {
    store?.flushUrl();
    try {
      await navigator.clipboard.writeText(location.href);
      setNavLabel(share, 'Link copied', 'Copied');
    } catch {
      setNavLabel(share, 'Copy the address bar', 'Copy the URL');
    }
    window.setTimeout(() => setNavLabel(share, 'Copy link', 'Link'), 2000);
  });
  // Copy link and Save / load stay at the right end of the bar; only the list of sections scrolls sideways.
  const saveLoad = saveLoadControls(store!);
  const bar = navList.parentElement!;
  const scroller = el('div', { class: 'nav-scroller' });
  bar.insertBefore(scroller, navList);
  scroller.appendChild(navList);
  bar.append(el('ul', { class: 'nav-actions' }, el('li', { class: 'nav-share' }, share), saveLoad.item), saveLoad.panel);
  // Highlight the section in view: the last one whose top has passed the band 30–40 % down the viewport, none above
  // the first (the introduction). Worked out from the layout whenever a section crosses the band, so a jump (Home,
  // a link, scrolling back to the top) leaves no stale highlight behind.
  const links = new Map(LABS.map((l) => [l.id, navList.querySelector<HTMLAnchorElement>(`a[href="#${l.id}"]`)!]));
  const sections = [...main.querySelectorAll<HTMLElement>('section.lab')];
  const observer = new IntersectionObserver(() => {
    const line = window.innerHeight * 0.4;
    let current: string | undefined;
    for (const s of sections) if (s.getBoundingClientRect().top <= line) current = s.id;
    links.forEach((a, id) => (id === current ? a.setAttribute('aria-current', 'true') : a.removeAttribute('aria-current')));
  }, { rootMargin: '-30% 0px -60% 0px' });
  sections.forEach((s) => observer.observe(s));
  navOverflow(navList);
}

let store: Store | undefined;
const timings: Record<string, number> = {};

async function boot(): Promise<void> {
  setTex(document.getElementById('hero-formula')!, String.raw`\operatorname{softmax}\!\big(QK^{\top}/\sqrt{d_k}\big)\,V`);
  const parsed = parseQuery(location.search);
  showNotice(parsed.rejected, parsed.unknown);
  store = new Store(parsed.state);

  let engine;
  // The trained model (a 19 KB file) loads beside the engine; without it the "trained" weights fall back to identity.
  const trained = loadShippedModel().then(() => undefined, (err: unknown) => err);
  try {
    engine = await loadEngine();
    const err = await trained;
    if (err) console.error(err);
  } catch (err) {
    status.textContent = `The WebAssembly engine failed to load: ${err instanceof Error ? err.message : String(err)}`;
    status.classList.add('error');
    throw err;
  }
  const info = engine.buildInfo();
  document.body.dataset.backend = engine.backend;
  status.textContent = `Engine: attnlab ${info.version}, ${engine.backend === 'wasm-simd' ? 'WebAssembly SIMD128' : 'WebAssembly (scalar)'}.`;

  // What one edit cost: engine calls counted from the first listener of an update to the last (the labs
  // subscribe in between). Figures off screen catch up when they scroll into view; those calls are not counted.
  let callsAtStart = 0;
  let lastEdit = '';
  store.subscribe(() => { callsAtStart = engineCalls.total; });
  const buildInfo = document.getElementById('build-info')!;
  const showInfo = () => {
    buildInfo.textContent = `attnlab ${info.version} · backend ${engine.backend}${lastEdit} · last recompute (engine + render): ${Object.entries(timings).map(([k, v]) => `${k} ${v.toFixed(1)} ms`).join(', ')}`;
  };
  const ctx: LabContext = {
    engine,
    store,
    reportTiming(lab, ms) {
      timings[lab] = ms;
      document.body.dataset[`recompute${lab[0].toUpperCase()}${lab.slice(1)}`] = ms.toFixed(2);
      showInfo();
    },
  };
  for (const lab of LABS) {
    const section = el('section', { class: 'lab', id: lab.id, 'aria-labelledby': `${lab.id}-title` });
    main.appendChild(section);
    lab.mount(section, ctx);
    section.querySelector('h2')?.setAttribute('id', `${lab.id}-title`);
  }
  store.subscribe(() => {
    const calls = engineCalls.total - callsAtStart;
    document.body.dataset.engineCallsLastEdit = String(calls);
    lastEdit = ` · last edit: ${calls} engine call${calls === 1 ? '' : 's'}`;
    showInfo();
  });
  buildNav();
  keyboardScrollable(main);
  explainTerms([document.querySelector<HTMLElement>('.site-header .wrap')!, main]);
  store.flushUrl();
  document.body.dataset.ready = 'true';
  // Re-apply the anchor now that the sections exist: at once, not smoothly (a smooth scroll passes the real-model
  // sections, which then load and grow, and ends short of the anchor).
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView({ behavior: 'instant' as ScrollBehavior });
}

boot().catch((err) => {
  document.body.dataset.ready = 'error';
  console.error(err);
});
