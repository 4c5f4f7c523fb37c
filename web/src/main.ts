// Boot: read the URL, load the engine once, mount the labs, keep the URL in step with the state.
import './styles/base.css';
import './styles/labs.css';
import { loadEngine } from './engine';
import { parseQuery } from './state/url-state';
import { Store } from './state/store';
import { el } from './ui/dom';
import { setTex } from './ui/katex';
import { saveLoadControls } from './ui/save-load';
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

/** The labs, in page order. Later sections (issue 5's figures, issue 6's tools) register here. */
const LABS: Lab[] = [softmaxLab, kvLookupLab, pullLab, spacesLab, asymLab, attentionLab, sqrtDkLab, stabilityLab, causalLab, multiheadLab, costLab, benchLab];

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
  const share = el('button', { type: 'button', class: 'chip share', 'data-control': 'share', text: 'Copy link to this view' });
  share.addEventListener('click', async () => {
    store?.flushUrl();
    try {
      await navigator.clipboard.writeText(location.href);
      share.textContent = 'Link copied';
    } catch {
      share.textContent = 'Copy the address bar';
    }
    window.setTimeout(() => { share.textContent = 'Copy link to this view'; }, 2000);
  });
  navList.appendChild(el('li', { class: 'nav-share' }, share));
  // Save / load the whole state as JSON; its panel sits under the list (the list scrolls sideways).
  const saveLoad = saveLoadControls(store!);
  navList.appendChild(saveLoad.item);
  navList.parentElement!.appendChild(saveLoad.panel);
  // Highlight the section in view.
  const links = new Map(LABS.map((l) => [l.id, navList.querySelector<HTMLAnchorElement>(`a[href="#${l.id}"]`)!]));
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      links.forEach((a, id) => (id === e.target.id ? a.setAttribute('aria-current', 'true') : a.removeAttribute('aria-current')));
    }
  }, { rootMargin: '-30% 0px -60% 0px' });
  main.querySelectorAll('section.lab').forEach((s) => observer.observe(s));
}

let store: Store | undefined;
const timings: Record<string, number> = {};

async function boot(): Promise<void> {
  setTex(document.getElementById('hero-formula')!, String.raw`\operatorname{softmax}\!\big(QK^{\top}/\sqrt{d_k}\big)\,V`);
  const parsed = parseQuery(location.search);
  showNotice(parsed.rejected, parsed.unknown);
  store = new Store(parsed.state);

  let engine;
  try {
    engine = await loadEngine();
  } catch (err) {
    status.textContent = `The WebAssembly engine failed to load: ${err instanceof Error ? err.message : String(err)}`;
    status.classList.add('error');
    throw err;
  }
  const info = engine.buildInfo();
  document.body.dataset.backend = engine.backend;
  status.textContent = `Engine: attnlab ${info.version}, ${engine.backend === 'wasm-simd' ? 'WebAssembly SIMD128' : 'WebAssembly (scalar)'}.`;

  const ctx: LabContext = {
    engine,
    store,
    reportTiming(lab, ms) {
      timings[lab] = ms;
      document.body.dataset[`recompute${lab[0].toUpperCase()}${lab.slice(1)}`] = ms.toFixed(2);
      document.getElementById('build-info')!.textContent =
        `attnlab ${info.version} · backend ${engine.backend} · last recompute (engine + render): ${Object.entries(timings).map(([k, v]) => `${k} ${v.toFixed(1)} ms`).join(', ')}`;
    },
  };
  for (const lab of LABS) {
    const section = el('section', { class: 'lab', id: lab.id, 'aria-labelledby': `${lab.id}-title` });
    main.appendChild(section);
    lab.mount(section, ctx);
    section.querySelector('h2')?.setAttribute('id', `${lab.id}-title`);
  }
  buildNav();
  store.flushUrl();
  document.body.dataset.ready = 'true';
  // Re-apply the anchor now that the sections exist.
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
}

boot().catch((err) => {
  document.body.dataset.ready = 'error';
  console.error(err);
});
