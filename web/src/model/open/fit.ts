// Will a model fit? Checked from the Hub's sizes before anything large is downloaded. The engine keeps a model's
// weights as the files store them (16-bit weights stay 16-bit), in its WebAssembly memory, which in this build can
// grow to 2 GiB (WebAssembly's 32-bit memories stop at 4 GiB; the engine is built with Emscripten's default maximum of
// 2 GiB, and its loader refuses a model past that, naming config.json). Beside the weights, the page's views need the
// key/value cache of a full context (float32). This is an estimate for the decision before the download; the engine's
// own check is the exact one.

/** What the engine can hold on the page's thread. */
export const ENGINE_MEMORY_BYTES = 2 ** 31;

/** The sizes the estimate needs, from config.json (GPT-2's names or the Llama family's). */
export interface SizeConfig { layers: number; context: number; kvWidth: number }

const int = (c: Record<string, unknown>, ...names: string[]): number | undefined => {
  for (const n of names) if (Number.isInteger(c[n]) && (c[n] as number) > 0) return c[n] as number;
  return undefined;
};

/** The sizes from config.json's text, or null when it does not say them (the engine will name the field). */
export function sizeConfig(text: string): SizeConfig | null {
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (!c || typeof c !== 'object') return null;
  const layers = int(c, 'n_layer', 'num_hidden_layers');
  const context = int(c, 'n_positions', 'max_position_embeddings');
  const d = int(c, 'n_embd', 'hidden_size');
  const heads = int(c, 'n_head', 'num_attention_heads');
  if (!layers || !context || !d || !heads) return null;
  const kvHeads = int(c, 'num_key_value_heads') ?? heads;
  const headDim = int(c, 'head_dim') ?? d / heads;
  return { layers, context, kvWidth: kvHeads * headDim };
}

/** Bytes a model needs: its weights (the safetensors files' sizes) and a full context's key/value cache. */
export function neededBytes(weightFileBytes: number, c: SizeConfig | null): number {
  const cache = c ? 2 * c.layers * c.context * c.kvWidth * 4 : 0;
  return weightFileBytes + cache;
}

/** Why a model of these sizes cannot be opened, or null. */
export function tooLarge(weightFileBytes: number, c: SizeConfig | null, mb: (n: number) => string): string | null {
  const need = neededBytes(weightFileBytes, c);
  if (need <= ENGINE_MEMORY_BYTES) return null;
  return `This model needs about ${mb(need)} (its weights, ${mb(weightFileBytes)}, and the key/value cache of a full context), `
    + `more than the ${mb(ENGINE_MEMORY_BYTES)} of memory the engine can use in this tab. Nothing was downloaded.`;
}
