// The model the real-model views run on, and opening another: a model folder from disk (files, a folder, or a
// drop), or a repository from the Hugging Face Hub by id (size first, then a download with progress and Cancel, kept
// in the browser's cache). A load that fails or is cancelled says why here, and the page keeps the model it had.
import '../../styles/model.css';
import type { Model } from 'attnlab';
import type { Lab, LabContext } from '../lab';
import { el, clear, nextId } from '../../ui/dom';
import { loadShippedModel, onRealModelStatus, realModel, realModelStatus, setRealModel, onRealModel, type RealModelInfo } from '../../model/real-model';
import { countParameters, missingFile, shardsOf } from '../../model/open/files';
import { showToken } from '../../model/real-head';
import { fromDrop, fromFileList, type DiskFiles } from '../../model/open/disk';
import { tooLarge, sizeConfig, ENGINE_MEMORY_BYTES, neededBytes } from '../../model/open/fit';
import { downloadPlan, forgetDownloads, planDownload, validRepo, type HubPlan } from '../../model/open/hub';

/** Suggested repositories, with the download size the Hub lists for their files (measured again before downloading). */
const SUGGESTIONS = [
  { repo: 'openai-community/gpt2', about: 'GPT-2 small, 124 M parameters, about 550 MB' },
  { repo: 'HuggingFaceTB/SmolLM-135M', about: 'a Llama-family model, 135 M parameters, about 270 MB' },
];

/** Sizes as the Hub shows them: decimal megabytes. */
export function mb(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  return `${(n / 1e3).toFixed(1)} kB`;
}

const millions = (n: number): string => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} billion` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} million` : n.toLocaleString('en'));

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const isAbort = (e: unknown): boolean => e instanceof DOMException && e.name === 'AbortError';

export const modelLab: Lab = {
  id: 'open-model',
  nav: 'Model',
  mount(section: HTMLElement, ctx: LabContext) {
    const offline = location.protocol === 'file:';
    section.classList.add('model-lab');
    section.dataset.state = 'idle';
    section.append(
      el('h2', { text: 'The model: open a real one' }),
      el('p', { class: 'intro', text: 'The views below can run on a real language model, trained on real text. Open one from your disk (a Hugging Face model folder) or download one from the Hugging Face Hub.' }),
    );

    // --- what is open ------------------------------------------------------------------------------------------
    const current = el('dl', { class: 'model-facts', 'data-figure': 'model-current' });
    const params = new WeakMap<Model, number>();
    function showCurrent(): void {
      clear(current);
      const now = realModel();
      if (!now) {
        const st = realModelStatus();
        const why = st.state === 'loading' ? `loading the page’s own model${st.total ? ` (${Math.round((100 * st.loaded) / st.total)} %)` : ''}…`
          : st.state === 'error' ? `the page’s own model did not load: ${st.message ?? 'unknown error'}` : 'no real model yet';
        current.append(el('dt', { text: 'Open' }), el('dd', { text: why, 'data-fact': 'name' }));
        return;
      }
      const { model } = now, info = now;
      const c = model.config;
      const p = params.get(model) ?? now.parameters;
      const where = info.source === 'hub' ? `the Hugging Face Hub (${info.repo})` : info.source === 'disk' ? 'your disk' : 'shipped with the page';
      const rows: [string, string, string][] = [
        ['Open', info.name, 'name'],
        ['From', where, 'source'],
        ['Architecture', `${c.architecture}${c.ropeTheta === null ? '' : ', rotary positions'}`, 'architecture'],
        ['Layers × heads', `${c.layers} × ${c.heads}${c.kvHeads !== c.heads ? ` (${c.kvHeads} key/value heads)` : ''}, d_model ${c.dModel}`, 'layers'],
        ['Parameters', p === undefined ? '…' : millions(p), 'parameters'],
        ['Memory', `${mb(model.memoryBytes)} (weights ${mb(model.weightBytes)})`, 'memory'],
      ];
      for (const [k, v, key] of rows) current.append(el('dt', { text: k }), el('dd', { text: v, 'data-fact': key }));
    }
    onRealModel(() => showCurrent());
    onRealModelStatus(() => { if (!realModel()) showCurrent(); });
    // The page's own model, once the panel comes near the screen (the views below load it the same way).
    const near = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      near.disconnect();
      if (!realModel()) loadShippedModel().catch(() => { /* the model view's status line says why */ });
    }, { rootMargin: '200px 0px' });
    near.observe(section);

    // --- try it: the model's next token, through the engine's softmax ------------------------------------------
    const tryId = nextId('model-try');
    const tryText = el('input', { type: 'text', id: tryId, value: 'The old man walked to the', 'data-control': 'model-try-text', autocomplete: 'off' });
    const tryButton = el('button', { type: 'button', class: 'chip', 'data-control': 'model-try', text: 'Next token' });
    const tryOut = el('p', { class: 'model-try-out', 'data-figure': 'model-try-out', 'aria-live': 'polite' });
    tryButton.addEventListener('click', () => {
      const now = realModel();
      if (!now?.model.tokenizer) { tryOut.textContent = 'No real model is open.'; return; }
      try {
        const ids = now.model.tokenizer.encode(tryText.value);
        if (ids.length === 0) { tryOut.textContent = 'Type some text first.'; return; }
        const keep = ids.slice(Math.max(0, ids.length - now.model.config.context));
        const { logits, shape: [n, V] } = now.model.forward(keep);
        const probs = ctx.engine.softmax(Float32Array.from(logits.subarray((n - 1) * V, n * V)), { cols: V });
        const top = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a]).slice(0, 3);
        tryOut.textContent = `${now.name} predicts: ${top.map((t) => `“${showToken(now.model.tokenizer!.decode([t]))}” ${(probs[t] * 100).toFixed(1)} %`).join(', ')}`;
      } catch (e) {
        tryOut.textContent = errorText(e);
      }
    });
    section.append(
      el('div', { class: 'model-now panel' },
        el('h3', { text: 'Open now' }), current,
        el('div', { class: 'model-try' }, el('label', { for: tryId, text: 'Try it' }), tryText, tryButton), tryOut),
    );

    // --- messages and progress ---------------------------------------------------------------------------------
    const status = el('p', { class: 'model-status', role: 'status', 'data-figure': 'model-status' });
    const error = el('p', { class: 'model-error', role: 'alert', 'data-figure': 'model-error', hidden: true });
    const bar = el('progress', { class: 'model-progress', max: 1, value: 0, 'aria-label': 'Download progress', hidden: true });
    const fileList = el('ul', { class: 'model-files', 'data-figure': 'model-files' });
    const cancel = el('button', { type: 'button', class: 'chip', 'data-control': 'model-cancel', text: 'Cancel', hidden: true });
    let controller: AbortController | undefined;
    cancel.addEventListener('click', () => controller?.abort(new DOMException('The download was cancelled.', 'AbortError')));

    function say(text: string, state: string): void {
      section.dataset.state = state;
      status.textContent = text;
    }
    function fail(text: string, state = 'error'): void {
      const kept = realModel();
      const said = /[.!?…]$/.test(text) ? text : `${text}.`;  // (engine and fetch messages end without a full stop)
      error.textContent = `${said}${kept ? ` The page still runs on ${kept.name}.` : ''}`;
      error.hidden = false;
      say('', state);
    }
    function busy(on: boolean): void {
      cancel.hidden = !on;
      for (const b of section.querySelectorAll<HTMLButtonElement | HTMLInputElement>('[data-busy-off]')) b.disabled = on;
    }

    /** Hands files to the engine; on success the model becomes the page's. */
    async function open(files: Map<string, Blob>, info: RealModelInfo): Promise<void> {
      const missing = missingFile(files.keys());
      if (missing) { fail(`Could not open the model: ${missing}`); return; }
      controller = new AbortController();
      const { signal } = controller;
      busy(true);
      say(`Reading ${info.name} into the engine…`, 'loading');
      try {
        const model = await ctx.engine.loadModel(files, {
          signal,
          onProgress: ({ file, loaded, total }) => {
            if (total) say(`Reading ${info.name} into the engine: ${file} ${Math.round((100 * loaded) / total)} %`, 'loading');
          },
        });
        let count = 0;
        for (const [name, blob] of files) if (name.endsWith('.safetensors')) count += await countParameters(blob, name);
        params.set(model, count);
        setRealModel(model, info);
        error.hidden = true;
        say(`Opened ${info.name}.`, 'open');
      } catch (e) {
        fail(isAbort(e) ? 'Cancelled: nothing was opened.' : `Could not open the model: ${errorText(e)}`, isAbort(e) ? 'cancelled' : 'error');
      } finally {
        busy(false);
        controller = undefined;
      }
    }

    // --- from disk ---------------------------------------------------------------------------------------------
    // Each file input lies, transparent, over a label that looks like a button: a click opens the browser's chooser
    // natively (no script-made click, which browsers refuse without a user's gesture), the input is the target at the
    // label's size, and its keyboard focus is shown on the label.
    const filesId = nextId('model-files');
    const folderId = nextId('model-folder');
    const pickFiles = el('input', { type: 'file', multiple: true, id: filesId, class: 'file-input', 'data-control': 'model-files', 'data-busy-off': true });
    const pickFolder = el('input', { type: 'file', id: folderId, class: 'file-input', 'data-control': 'model-folder', 'data-busy-off': true });
    const folderPicks = 'webkitdirectory' in pickFolder;
    if (folderPicks) pickFolder.setAttribute('webkitdirectory', '');
    const chooseFiles = el('span', { class: 'file-pick' }, el('label', { for: filesId, class: 'chip file-chip', text: 'Choose files' }), pickFiles);
    const chooseFolder = el('span', { class: 'file-pick', hidden: !folderPicks }, el('label', { for: folderId, class: 'chip file-chip', text: 'Choose a folder' }), pickFolder);
    const fromDisk = (d: DiskFiles) => {
      error.hidden = true;
      const name = d.folder ?? 'a model from disk';
      void open(d.files as Map<string, Blob>, { name, source: 'disk' });
    };
    for (const input of [pickFiles, pickFolder]) {
      input.addEventListener('change', () => {
        if (input.files?.length) fromDisk(fromFileList(input.files));
        input.value = '';
      });
    }
    const drop = el('div', { class: 'model-drop', 'data-figure': 'model-drop' },
      el('p', { text: 'Drop a model folder or its files here: config.json, the .safetensors weights (with model.safetensors.index.json when there are several), tokenizer.json (or vocab.json and merges.txt), generation_config.json.' }),
      el('div', { class: 'button-group' }, chooseFiles, chooseFolder));
    drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('over');
      if (!e.dataTransfer || controller) return;
      fromDrop(e.dataTransfer).then(fromDisk, (err: unknown) => fail(`Could not read the dropped files: ${errorText(err)}`));
    });

    // --- from the Hub ------------------------------------------------------------------------------------------
    const repoId = nextId('model-repo');
    const listId = nextId('model-repos');
    const repoInput = el('input', { type: 'text', id: repoId, list: listId, placeholder: 'owner/name', spellcheck: 'false', autocomplete: 'off', 'data-control': 'model-repo', 'data-busy-off': true });
    const datalist = el('datalist', { id: listId }, ...SUGGESTIONS.map((s) => el('option', { value: s.repo, label: s.about })));
    const check = el('button', { type: 'button', class: 'chip', 'data-control': 'model-size', text: 'Check size', 'data-busy-off': true });
    const download = el('button', { type: 'button', class: 'chip primary', 'data-control': 'model-download', text: 'Download', hidden: true, 'data-busy-off': true });
    const forget = el('button', { type: 'button', class: 'chip', 'data-control': 'model-forget', text: 'Forget downloaded models', 'data-busy-off': true });
    const sizeLine = el('p', { class: 'model-size', 'data-figure': 'model-size' });
    let plan: HubPlan | undefined;

    const suggestions = el('ul', { class: 'model-suggestions' }, ...SUGGESTIONS.map((s) => {
      const b = el('button', { type: 'button', class: 'link-button', text: s.repo, 'data-busy-off': true });
      b.addEventListener('click', () => { repoInput.value = s.repo; plan = undefined; download.hidden = true; sizeLine.textContent = ''; repoInput.focus(); });
      return el('li', {}, b, ` — ${s.about}`);
    }));
    repoInput.addEventListener('input', () => { plan = undefined; download.hidden = true; sizeLine.textContent = ''; });

    check.addEventListener('click', async () => {
      const repo = repoInput.value.trim();
      error.hidden = true;
      download.hidden = true;
      clear(fileList);
      if (!validRepo(repo)) { fail(`“${repo}” is not a repository id: it is written owner/name, e.g. ${SUGGESTIONS[0].repo}.`); return; }
      controller = new AbortController();
      busy(true);
      say(`Finding the size of ${repo}…`, 'sizing');
      try {
        plan = await planDownload(repo, controller.signal, shardsOf);
        const sizes = plan.files.map((f) => `${f.name} ${f.size === undefined ? 'size unknown' : mb(f.size)}${f.cached ? ' (in this browser)' : ''}`).join(', ');
        const refused = tooLarge(plan.weightBytes, sizeConfig(plan.config), mb);
        if (refused) {
          sizeLine.textContent = `${repo}: ${sizes}.`;
          fail(`Too large for this tab: ${refused}`, 'refused');
          plan = undefined;
          return;
        }
        const need = neededBytes(plan.weightBytes, sizeConfig(plan.config));
        sizeLine.textContent = `${repo}: ${plan.downloadBytes === 0 && plan.unknownSizes === 0 ? 'everything is in this browser already, nothing to download' : `${mb(plan.downloadBytes)} to download${plan.unknownSizes ? ` and ${plan.unknownSizes} small file(s) of unknown size` : ''}`} (${sizes}). It needs about ${mb(need)} of the engine's ${mb(ENGINE_MEMORY_BYTES)}.`;
        download.textContent = plan.downloadBytes === 0 ? 'Open' : `Download ${mb(plan.downloadBytes)}`;
        download.hidden = false;
        say('', 'sized');
      } catch (e) {
        plan = undefined;
        fail(isAbort(e) ? 'Cancelled.' : `Could not find the size: ${errorText(e)}`, isAbort(e) ? 'cancelled' : 'error');
      } finally {
        busy(false);
        controller = undefined;
      }
    });

    download.addEventListener('click', async () => {
      if (!plan) return;
      const p = plan;
      error.hidden = true;
      controller = new AbortController();
      busy(true);
      download.hidden = true;
      // One row per file: its bytes so far; the bar counts the whole download.
      clear(fileList);
      const rows = new Map(p.files.map((f) => {
        const li = el('li', { 'data-file': f.name, text: `${f.name}: ${f.cached ? 'in this browser' : 'waiting'}` });
        fileList.append(li);
        return [f.name, li];
      }));
      const done = new Map<string, number>();
      const total = p.downloadBytes || 1;
      bar.hidden = p.downloadBytes === 0;
      bar.value = 0;
      say(`Downloading ${p.repo}…`, 'downloading');
      try {
        const files = await downloadPlan(p, controller.signal, (file, loaded, size) => {
          const f = p.files.find((x) => x.name === file)!;
          if (!f.cached) done.set(file, loaded);
          rows.get(file)!.textContent = `${file}: ${f.cached ? 'in this browser' : `${mb(loaded)} of ${size === undefined ? '?' : mb(size)}`}`;
          const sum = [...done.values()].reduce((a, b) => a + b, 0);
          bar.value = Math.min(1, sum / total);
          status.textContent = `Downloading ${p.repo}: ${mb(sum)} of ${mb(p.downloadBytes)}`;
        });
        bar.hidden = true;
        const name = p.repo.split('/').pop()!;
        plan = undefined;
        sizeLine.textContent = '';
        busy(false);
        await open(files, { name, source: 'hub', repo: p.repo });
      } catch (e) {
        bar.hidden = true;
        fail(isAbort(e) ? 'Download cancelled: the files that finished stay in this browser, the rest was not kept.' : `Could not download the model: ${errorText(e)}`, isAbort(e) ? 'cancelled' : 'error');
        download.hidden = !plan;
      } finally {
        busy(false);
        controller = undefined;
      }
    });

    forget.addEventListener('click', async () => {
      const gone = await forgetDownloads();
      plan = undefined;
      download.hidden = true;
      sizeLine.textContent = '';
      say(gone ? 'Deleted every model downloaded from the Hub from this browser (the open model stays open).' : 'There were no downloaded models to delete.', 'idle');
    });

    const hub = offline
      ? el('p', { class: 'help', text: 'This offline copy makes no network requests: it opens models from your disk only. The page on the web can download them from the Hugging Face Hub.' })
      : el('div', { class: 'model-hub' },
        el('div', { class: 'model-repo-row' }, el('label', { for: repoId, text: 'Repository' }), repoInput, check), datalist,
        el('p', { class: 'help', text: 'Suggestions:' }), suggestions, sizeLine,
        el('div', { class: 'button-group' }, download),
        el('p', { class: 'help', text: 'Downloads are kept in this browser’s cache (by repository and the main branch), so a reload does not download them again. Delete them with the button, or with the browser’s “clear site data”.' }),
        el('div', { class: 'button-group' }, forget));

    // Closed until the learner wants another model: at 390 px the panel is then a few lines tall.
    const openAnother = el('details', { class: 'model-open-another', 'data-figure': 'model-open' },
      el('summary', { text: 'Open another model' }),
      el('div', { class: 'two-col model-open' },
        el('div', { class: 'panel' }, el('h3', { text: 'From your disk' }), drop),
        el('div', { class: 'panel' }, el('h3', { text: 'From the Hugging Face Hub' }), hub)));
    section.append(openAnother, el('div', { class: 'model-progress-row' }, bar, cancel), status, fileList, error);
    showCurrent();
  },
};
