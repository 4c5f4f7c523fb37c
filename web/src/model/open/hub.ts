// Models from the Hugging Face Hub, by repository id: the files are at https://huggingface.co/{repo}/resolve/main/{file}
// (large ones answer with a redirect to the Hub's storage hosts, which web/headers.mjs's connect-src lists). Nothing is
// fetched until the learner asks: first the sizes (HEAD requests that follow the redirect: the final response's
// Content-Length is the file's size; the small JSON files that say which other files there are, and what the model's
// sizes are, are read whole), then the download, file by file, into the browser's Cache Storage, from which the engine
// reads them. A reload finds them there and downloads nothing.

export const HUB = 'https://huggingface.co';
/** The branch the files are read from: with the repository, the cache's key. */
export const REVISION = 'main';
/** Cache Storage's name for the downloaded files (the "Forget downloaded models" button deletes it). */
export const CACHE_NAME = 'attnlab-hub-models';

/** A repository id as the Hub spells them: `owner/name` (or a legacy `name`), letters, digits, `-`, `_`, `.`. */
export function validRepo(id: string): boolean {
  return /^(?:[A-Za-z0-9][\w.-]{0,95}\/)?[A-Za-z0-9][\w.-]{0,95}$/.test(id) && !id.includes('..');
}

export const fileUrl = (repo: string, file: string): string => `${HUB}/${repo}/resolve/${REVISION}/${encodeURIComponent(file)}`;

/** One file to download: its name, its size (undefined when the Hub did not say), and whether the cache has it. */
export interface HubFile { name: string; size: number | undefined; cached: boolean }

/** What the size check found: the files, their sizes, and config.json's text (for the memory estimate). */
export interface HubPlan { repo: string; files: HubFile[]; config: string; weightBytes: number; downloadBytes: number; unknownSizes: number }

export class HubError extends Error {}

const openCache = (): Promise<Cache> | null => (typeof caches === 'undefined' ? null : caches.open(CACHE_NAME));

async function cachedResponse(cache: Cache | null, repo: string, file: string): Promise<Response | undefined> {
  return cache ? cache.match(fileUrl(repo, file)) : undefined;
}

function failed(file: string, res: Response): HubError {
  if (res.status === 401 || res.status === 403) return new HubError(`${file}: the Hub refused it (${res.status}): the repository is private or gated, or does not exist`);
  if (res.status === 404) return new HubError(`${file}: not found on the Hub (404)`);
  return new HubError(`${file}: the Hub answered ${res.status} ${res.statusText}`.trim());
}

function networkError(file: string, e: unknown): Error {
  if (e instanceof DOMException && e.name === 'AbortError') return e;
  return new HubError(`${file}: the download failed (${e instanceof Error ? e.message : String(e)}): check the connection and try again`);
}

/** The size of a file not in the cache: a HEAD request, redirect followed; null for a 404. */
async function headSize(repo: string, file: string, signal: AbortSignal): Promise<number | undefined | null> {
  let res: Response;
  try {
    res = await fetch(fileUrl(repo, file), { method: 'HEAD', signal, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    throw networkError(file, e);
  }
  if (res.status === 404) return null;
  if (!res.ok) throw failed(file, res);
  const length = res.headers.get('Content-Length');
  // A compressed answer's length is not the file's (small files only: the Hub does not compress weights).
  return length !== null && !res.headers.get('Content-Encoding') ? Number(length) : undefined;
}

/** A small file's text, from the cache or downloaded into it; null for a 404 (when `optional`). */
async function smallText(cache: Cache | null, repo: string, file: string, signal: AbortSignal): Promise<string | null> {
  const hit = await cachedResponse(cache, repo, file);
  if (hit) return hit.status === 404 ? null : hit.text();
  let res: Response;
  try {
    res = await fetch(fileUrl(repo, file), { signal, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    throw networkError(file, e);
  }
  if (res.status === 404) {
    await cache?.put(fileUrl(repo, file), new Response(null, { status: 404 }));
    return null;
  }
  if (!res.ok) throw failed(file, res);
  const bytes = new Uint8Array(await res.arrayBuffer());
  await cache?.put(fileUrl(repo, file), new Response(bytes, { headers: { 'Content-Length': String(bytes.length) } }));
  return new TextDecoder().decode(bytes);
}

/**
 * A file's size and whether it is cached; null when the repository has no such file. That a file is not there is
 * kept in the cache too (an empty 404 answer), so a reload asks the Hub nothing for a model it has.
 */
async function sizeOf(cache: Cache | null, repo: string, file: string, signal: AbortSignal): Promise<HubFile | null> {
  const hit = await cachedResponse(cache, repo, file);
  if (hit?.status === 404) return null;
  if (hit) return { name: file, size: Number(hit.headers.get('Content-Length') ?? (await hit.blob()).size), cached: true };
  const size = await headSize(repo, file, signal);
  if (size === null) await cache?.put(fileUrl(repo, file), new Response(null, { status: 404 }));
  return size === null ? null : { name: file, size, cached: false };
}

/**
 * The files of `repo` and their sizes: config.json and, when there is one, model.safetensors.index.json are read
 * (and kept in the cache); the weights and tokenizer files are only asked for their size.
 */
export async function planDownload(repo: string, signal: AbortSignal, shardsOf: (index: string) => string[]): Promise<HubPlan> {
  const cache = await openCache();
  const config = await smallText(cache, repo, 'config.json', signal);
  if (config === null) throw new HubError(`config.json: not found on the Hub (404): is "${repo}" a model repository?`);
  const files: HubFile[] = [{ name: 'config.json', size: new TextEncoder().encode(config).length, cached: true }];
  const add = (f: HubFile | null) => { if (f) files.push(f); return f; };
  add(await sizeOf(cache, repo, 'generation_config.json', signal));
  let weights = [add(await sizeOf(cache, repo, 'model.safetensors', signal))];
  if (!weights[0]) {
    const index = await smallText(cache, repo, 'model.safetensors.index.json', signal);
    if (index === null) throw new HubError('model.safetensors: not found on the Hub (404), nor model.safetensors.index.json: the page reads safetensors weights only');
    files.push({ name: 'model.safetensors.index.json', size: new TextEncoder().encode(index).length, cached: true });
    weights = [];
    for (const shard of shardsOf(index)) {
      const f = await sizeOf(cache, repo, shard, signal);
      if (!f) throw new HubError(`${shard}: named by model.safetensors.index.json, but not found on the Hub (404)`);
      weights.push(add(f));
    }
  }
  if (!add(await sizeOf(cache, repo, 'tokenizer.json', signal))) {
    const vocab = add(await sizeOf(cache, repo, 'vocab.json', signal));
    const merges = add(await sizeOf(cache, repo, 'merges.txt', signal));
    if (!vocab || !merges) throw new HubError('tokenizer.json: not found on the Hub (404), nor vocab.json with merges.txt: the page needs the model\'s tokenizer');
  }
  const weightBytes = weights.reduce((s, f) => s + (f?.size ?? 0), 0);
  const downloadBytes = files.reduce((s, f) => s + (f.cached ? 0 : f.size ?? 0), 0);
  const unknownSizes = files.filter((f) => f.size === undefined).length;
  return { repo, files, config, weightBytes, downloadBytes, unknownSizes };
}

/** Progress of one file's download: bytes so far and its size. */
export type FileProgress = (file: string, loaded: number, total: number | undefined) => void;

/** Downloads one file into the cache, counting its bytes as they arrive; a cut or cancelled download leaves nothing. */
async function download(cache: Cache, repo: string, f: HubFile, signal: AbortSignal, progress: FileProgress): Promise<void> {
  const url = fileUrl(repo, f.name);
  let res: Response;
  try {
    res = await fetch(url, { signal, credentials: 'omit', cache: 'no-store' });
  } catch (e) {
    throw networkError(f.name, e);
  }
  if (!res.ok || !res.body) throw failed(f.name, res);
  let loaded = 0;
  progress(f.name, 0, f.size);
  const counted = res.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, out) {
      loaded += chunk.byteLength;
      progress(f.name, loaded, f.size);
      out.enqueue(chunk);
    },
  }));
  try {
    const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' };
    if (f.size !== undefined) headers['Content-Length'] = String(f.size);
    await cache.put(url, new Response(counted, { headers }));
  } catch (e) {
    await cache.delete(url);
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('The download was cancelled.', 'AbortError');
    throw new HubError(`${f.name}: the download stopped after ${loaded} of ${f.size ?? '?'} bytes (${e instanceof Error ? e.message : String(e)})`);
  }
  if (f.size !== undefined && loaded !== f.size) {
    await cache.delete(url);
    throw new HubError(`${f.name}: the download ended after ${loaded} bytes, but the Hub said ${f.size}`);
  }
}

/** Downloads what the cache lacks, then returns every file of the plan as a Blob read from the cache. */
export async function downloadPlan(plan: HubPlan, signal: AbortSignal, progress: FileProgress): Promise<Map<string, Blob>> {
  const cache = await openCache();
  const files = new Map<string, Blob>();
  for (const f of plan.files) {
    let hit = await cachedResponse(cache, plan.repo, f.name);
    if (!hit || !hit.ok) {
      if (!cache) throw new HubError('this browser offers no Cache Storage here (a page opened from disk or a private window): models from the Hub cannot be kept');
      await download(cache, plan.repo, f, signal, progress);
      hit = await cachedResponse(cache, plan.repo, f.name);
      if (!hit) throw new HubError(`${f.name}: the browser did not keep the download (is its storage full?)`);
    } else {
      progress(f.name, f.size ?? 0, f.size);
    }
    files.set(f.name, await hit.blob());
  }
  return files;
}

/** Deletes every downloaded model from this browser. */
export async function forgetDownloads(): Promise<boolean> {
  return typeof caches === 'undefined' ? false : caches.delete(CACHE_NAME);
}
