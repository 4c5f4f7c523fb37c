// Which files of a Hugging Face model folder the engine reads, and the checks the page makes before handing them to
// lab.loadModel: the engine names the file and field of anything malformed; the page only says what it needs that
// the engine would let pass (a tokenizer: the page shows text, so a folder without one cannot be shown).

/** The folder's files the page passes on, by name; everything else in a folder (README, *.bin, …) is left out. */
export function isModelFile(name: string): boolean {
  return ['config.json', 'generation_config.json', 'model.safetensors.index.json', 'tokenizer.json', 'tokenizer_config.json',
    'vocab.json', 'merges.txt'].includes(name) || /^[\w.-]+\.safetensors$/.test(name);
}

/** Why these files cannot make a model the page can show, or null. Names the missing file. */
export function missingFile(names: Iterable<string>): string | null {
  const have = new Set(names);
  if (!have.has('config.json')) return 'config.json is missing: every model folder has one (its architecture and sizes).';
  if (!have.has('model.safetensors') && !have.has('model.safetensors.index.json')) {
    return 'model.safetensors is missing (or, for a model in several files, model.safetensors.index.json and the files it names).';
  }
  if (!have.has('tokenizer.json') && !(have.has('vocab.json') && have.has('merges.txt'))) {
    return 'tokenizer.json is missing (or GPT-2\'s vocab.json with merges.txt): the page needs the model\'s tokenizer to show its tokens.';
  }
  return null;
}

/** The shard files a model.safetensors.index.json names (weight_map's values, each once, in order). */
export function shardsOf(indexText: string): string[] {
  let index: unknown;
  try {
    index = JSON.parse(indexText);
  } catch (e) {
    throw new Error(`model.safetensors.index.json is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const map = (index as { weight_map?: unknown } | null)?.weight_map;
  if (!map || typeof map !== 'object') throw new Error('model.safetensors.index.json: weight_map must be an object of tensor name → file name');
  const files = [...new Set(Object.values(map as Record<string, unknown>))];
  const bad = files.find((f) => typeof f !== 'string' || !/^[\w.-]+\.safetensors$/.test(f) || f.startsWith('.'));
  if (bad !== undefined) throw new Error(`model.safetensors.index.json: weight_map names ${JSON.stringify(bad)}, not a .safetensors file beside it`);
  return files as string[];
}

/** Parameters in a safetensors file, from its header (the first 8 + n bytes); buffers (GPT-2's attn.bias) left out. */
export async function countParameters(file: Blob, name: string): Promise<number> {
  const head = new DataView(await file.slice(0, 8).arrayBuffer());
  if (head.byteLength < 8) throw new Error(`${name} is too short to be a safetensors file`);
  const n = Number(head.getBigUint64(0, true));
  if (n > 100_000_000 || 8 + n > file.size) throw new Error(`${name}: its header length ${n} is past the file's end`);
  const header = JSON.parse(new TextDecoder().decode(await file.slice(8, 8 + n).arrayBuffer())) as Record<string, { shape?: number[] }>;
  let count = 0;
  for (const [tensor, t] of Object.entries(header)) {
    if (tensor === '__metadata__' || /\.attn\.(masked_)?bias$/.test(tensor)) continue;
    count += (t.shape ?? []).reduce((a, b) => a * b, 1);
  }
  return count;
}
