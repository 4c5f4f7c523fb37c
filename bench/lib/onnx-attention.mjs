// ONNX's Attention op (opset 23) as a one-node model: used by the Node bench's onnxruntime-web adapter and by the
// Chromium bench page (bench/browser-page.mjs), so both run the very same model.
import { model, node, valueInfo, DataType } from './onnx.mjs';

const F = DataType.FLOAT;

// ONNX Attention (opset 23), 4-D 'bhsd' inputs; with `past`, past_key/past_value in and present_key/present_value out.
export function attentionOpModel({ batch = 1, heads, kvHeads = heads, nq, nk, d, causal, past = 0 }) {
  const inputs = [valueInfo('q', F, [batch, heads, nq, d]), valueInfo('k', F, [batch, kvHeads, nk, d]), valueInfo('v', F, [batch, kvHeads, nk, d])];
  const outputs = [valueInfo('o', F, [batch, heads, nq, d])];
  const names = ['q', 'k', 'v'], outs = ['o'];
  if (past) {
    inputs.push(valueInfo('past_key', F, [batch, kvHeads, past, d]), valueInfo('past_value', F, [batch, kvHeads, past, d]));
    outputs.push(valueInfo('present_key', F, [batch, kvHeads, past + nk, d]), valueInfo('present_value', F, [batch, kvHeads, past + nk, d]));
    names.push('', 'past_key', 'past_value');
    outs.push('present_key', 'present_value');
  }
  return model({ nodes: [node('Attention', names, outs, { is_causal: causal ? 1 : 0 })], inputs, outputs, opsets: { '': 23 } });
}
