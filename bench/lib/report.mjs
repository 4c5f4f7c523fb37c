// What the bench prints and the markdown table for docs/bench/results.md.

/** Every library the bench knows; `peer` = counts for "fastest peer"; `softmax` = also measured on softmax. */
export const LIBRARIES = [
  { id: 'attnlab-simd', family: 'attnlab', label: 'attnlab, wasm SIMD128', short: 'attnlab SIMD', softmax: true },
  { id: 'attnlab-simd-out', family: 'attnlab', label: 'attnlab, wasm SIMD128, `out` buffer reused', short: 'attnlab SIMD +out', softmax: true },
  { id: 'attnlab-scalar', family: 'attnlab', label: 'attnlab, scalar wasm', short: 'attnlab scalar', softmax: true },
  { id: 'ort-graph-kt', family: 'ort', label: 'onnxruntime-web, MatMul graph, Kᵀ input', short: 'ORT graph Kᵀ', peer: true, softmax: true },
  { id: 'ort-graph-transpose', family: 'ort', label: 'onnxruntime-web, graph with Transpose', short: 'ORT graph +T', peer: true },
  { id: 'ort-mha', family: 'ort', label: 'onnxruntime-web, MultiHeadAttention op', short: 'ORT MHA op', peer: true },
  { id: 'tfjs', family: 'tfjs', label: 'tfjs-backend-wasm (XNNPACK), Kᵀ input', short: 'tfjs-wasm', peer: true, softmax: true },
  { id: 'js', family: 'js', label: 'plain JS, blocked + online softmax', short: 'plain JS', softmax: true },
];
export const PEERS = LIBRARIES.filter((l) => l.peer).map((l) => l.id);
const byId = Object.fromEntries(LIBRARIES.map((l) => [l.id, l]));

export const fmtMs = (ms) => (ms == null ? '—' : ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
export const fmtGf = (g) => (g == null ? '—' : g >= 10 ? g.toFixed(1) : g.toFixed(2));
export const fmtErr = (e) => (e == null ? '—' : e === Infinity ? 'NaN/inf!' : e.toExponential(1));
const fmtRatio = (r) => (r == null ? '—' : `${r.toFixed(2)}×`);

/** The fastest peer of a cell: { id, ms } or null (ms = the run's statistic, median unless --stat=min). */
export function fastestPeer(cell) {
  let best = null;
  for (const id of PEERS) {
    const r = cell.results[id];
    if (r?.ms && (!best || r.ms < best.ms)) best = { id, ms: r.ms };
  }
  return best;
}

const cellTitle = (c) => (c.kind === 'attention'
  ? `attention n=${c.n} d=${c.d}${c.causal ? ' causal' : ''}`
  : `softmax ${c.n}×${c.n}`);

export function consoleCell(cell, peak, stat = 'median') {
  const peer = fastestPeer(cell);
  const lines = [];
  const att = cell.kind === 'attention';
  const loads = Object.values(cell.results).map((r) => r.otherCores).filter((x) => x != null);
  const busy = loads.length ? Math.max(...loads) : 0;
  lines.push(`${cellTitle(cell)} — ${att ? `${(cell.flops / 1e9).toFixed(3)} GFLOP per call (dense 4·n²·d)` : `${cell.n * cell.n} elements`}; ` +
    `checked ${cell.referenceRows} rows vs float64${busy > 0.3 ? `; other processes used up to ${busy.toFixed(1)} cores meanwhile` : ''}`);
  lines.push(`  ${'library'.padEnd(16)}${`${stat} ms`.padStart(11)}${`${stat === 'min' ? 'median' : 'min'} ms`.padStart(11)}${(att ? 'GFLOP/s' : 'Gelem/s').padStart(9)}${(att ? '% peak' : '').padStart(8)}${'× fastest peer'.padStart(16)}${'max |err|'.padStart(11)}${'calls'.padStart(7)}`);
  for (const [id, r] of Object.entries(cell.results)) {
    const name = byId[id]?.short ?? id;
    if (r.unsupported) { lines.push(`  ${name.padEnd(16)}  unsupported: ${r.unsupported}`); continue; }
    if (r.failed || !r.ms) { lines.push(`  ${name.padEnd(16)}  FAILED: ${r.failed ?? 'no result'}`); continue; }
    const thr = att ? r.gflops : r.gelemPerS;
    lines.push(`  ${name.padEnd(16)}${fmtMs(r.ms).padStart(11)}${fmtMs(stat === 'min' ? r.median : r.min).padStart(11)}${fmtGf(thr).padStart(9)}${(att && peak ? `${((100 * r.gflops) / peak).toFixed(0)}%` : '').padStart(8)}` +
      `${(peer ? fmtRatio(peer.ms / r.ms) : '—').padStart(16)}${fmtErr(r.maxAbsError).padStart(11)}${String(r.reps).padStart(7)}`);
  }
  return lines.join('\n');
}

const BUSY = 0.5;
/** '†' when other processes used more than BUSY cores while any library of the cell was measured. */
function busyMark(cell) {
  return Object.values(cell.results).some((r) => (r.otherCores ?? 0) > BUSY) ? ' †' : '';
}

function libsIn(cells) {
  const ids = new Set(cells.flatMap((c) => Object.keys(c.results)));
  return LIBRARIES.filter((l) => ids.has(l.id));
}

// This machine kind sometimes runs a process 1.5–1.8× slower for minutes (seen as bimodal samples, with no
// other process busy): a cell whose rounds disagree by more than UNSTEADY is marked '‡' rather than trusted.
const UNSTEADY = 1.25;
const roundMedians = (r) => (r?.ms ? r.roundMedians?.filter((x) => x > 0) ?? [] : []);
function unsteady(r) {
  const m = roundMedians(r);
  return m.length >= 2 && Math.max(...m) / Math.min(...m) > UNSTEADY;
}

function mdCell(r, att) {
  if (!r) return '';
  if (r.unsupported) return 'unsupported';
  if (r.failed || !r.ms) return 'failed';
  return `${fmtMs(r.ms)} (${fmtGf(att ? r.gflops : r.gelemPerS)})${unsteady(r) ? ' ‡' : ''}`;
}

/** The footnote for '‡' cells, listing their round medians, or null when there are none. */
function unsteadyNote(cells) {
  const list = [];
  for (const c of cells)
    for (const [id, r] of Object.entries(c.results))
      if (unsteady(r)) list.push(`${byId[id]?.short ?? id} at ${c.kind === 'softmax' ? `${c.n}×${c.n}` : `n = ${c.n}, d = ${c.d}${c.causal ? ', causal' : ''}`}: ${roundMedians(r).map(fmtMs).join(' / ')} ms`);
  if (!list.length) return null;
  return `‡ the rounds' medians of this cell differ by more than ${Math.round((UNSTEADY - 1) * 100)} % (the machine slowed that process for a while; the pooled median is shown): ${list.join('; ')}.`;
}

export function markdownReport(results) {
  const m = results.machine;
  const stat = results.stat ?? 'median';
  const out = [];
  const peak = results.peak?.gflops;
  out.push(`Measured by \`${results.command.replace(/^node bench\/run\.mjs/, 'npm run bench --')}\` on ${m.date.slice(0, 10)}: ${m.cpuModel} (${m.cpuFamily ? `family ${m.cpuFamily} model ${m.cpuModelNumber}; ` : ''}${m.logicalCpus} logical CPUs${m.hypervisor ? ', VM' : ''}, ${m.simdFlags.join('/')}), ` +
    `Node ${m.node} (V8 ${m.v8}), ${m.os}. One thread for every library. ` +
    `Load average at start ${m.loadAverageAtStart.join(' ')}; other processes used ${m.otherCoresMean ?? '?'} cores on average (max ${m.otherCoresMax?.toFixed?.(2) ?? '?'}) while cells were measured${(m.otherCoresMean ?? 0) > 0.2 ? ' — the machine was busy, compare only within this run' : ''}.`);
  out.push('');
  if (peak) out.push(`**Single-core wasm SIMD128 peak**: ${fmtGf(peak)} GFLOP/s (${results.peak.kernel}; best call at start/end of the run; medians ${fmtGf(results.peak.medianAtStart)} / ${fmtGf(results.peak.medianAtEnd)}).`);
  out.push('');
  const kb = (b) => (b >= 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(0)} KB`);
  const versions = Object.entries(results.libraries).map(([id, i]) => (i.failed
    ? `${byId[id]?.short ?? id}: failed to load (${i.failed})`
    : `${byId[id]?.short ?? id}: ${i.library} ${i.version}${i.wasmBytes ? ` (${i.wasmFile ?? 'module'} ${kb(i.wasmBytes)})` : ''}`));
  out.push(`Libraries: ${versions.join('; ')}.`);
  out.push('');

  if (results.attention.length) {
    const libs = libsIn(results.attention);
    out.push(`### Attention — ${stat} ms (GFLOP/s)`);
    out.push('');
    out.push(`GFLOP/s counts 4·n²·d per call${peak ? ` (% of the ${fmtGf(peak)} GFLOP/s peak in the last columns)` : ''}; **causal rows are counted with the same dense 4·n²·d**, so skipped masked work shows as higher throughput. ` +
      '"× peer" = time of the fastest of onnxruntime-web / tfjs-wasm in that row ÷ time of attnlab SIMD (> 1 = attnlab faster).');
    out.push('');
    out.push(`| n | d | causal | ${libs.map((l) => l.short).join(' | ')} | attnlab SIMD × peer | SIMD % peak |`);
    out.push(`|---:|---:|:---:|${libs.map(() => '---:|').join('')}---:|---:|`);
    for (const c of results.attention) {
      const peer = fastestPeer(c);
      const s = c.results['attnlab-simd'];
      const ratio = peer && s?.ms ? `**${(peer.ms / s.ms).toFixed(2)}×** (vs ${byId[peer.id].short})` : '—';
      const pct = s?.gflops && peak ? `${((100 * s.gflops) / peak).toFixed(0)}%` : '—';
      out.push(`| ${c.n}${busyMark(c)} | ${c.d} | ${c.causal ? 'yes' : ''} | ${libs.map((l) => mdCell(c.results[l.id], true)).join(' | ')} | ${ratio} | ${pct} |`);
    }
    out.push('');
    if ([...results.attention, ...results.softmax].some((c) => busyMark(c))) {
      out.push(`† other processes used more than ${BUSY} cores (of ${m.logicalCpus}) while that row was measured: its numbers are noisier.`);
      out.push('');
    }
    const wins = {};
    for (const c of results.attention) {
      let best = null;
      for (const id of ['ort-graph-kt', 'ort-graph-transpose', 'ort-mha']) if (c.results[id]?.ms && (!best || c.results[id].ms < c.results[best].ms)) best = id;
      if (best) wins[best] = (wins[best] ?? 0) + 1;
    }
    if (Object.keys(wins).length) {
      out.push(`onnxruntime-web's fastest form per row: ${Object.entries(wins).map(([id, k]) => `${byId[id].short} in ${k}`).join(', ')} of ${results.attention.length} rows (all three are measured; the ratio uses whichever was fastest).`);
      out.push('');
    }
    out.push('Max |error| vs the float64 reference (all rows for n ≤ 1024, 256 sampled rows above):');
    out.push('');
    out.push(`| n | d | causal | ${libs.map((l) => l.short).join(' | ')} |`);
    out.push(`|---:|---:|:---:|${libs.map(() => '---:|').join('')}`);
    for (const c of results.attention) {
      out.push(`| ${c.n} | ${c.d} | ${c.causal ? 'yes' : ''} | ${libs.map((l) => { const r = c.results[l.id]; return r?.ms ? fmtErr(r.maxAbsError) : ''; }).join(' | ')} |`);
    }
    out.push('');
  }
  if (results.softmax.length) {
    const libs = libsIn(results.softmax);
    out.push(`### Row softmax over n×n — ${stat} ms (G elements/s), max |error|`);
    out.push('');
    out.push(`| n×n | ${libs.map((l) => l.short).join(' | ')} | attnlab SIMD × tfjs | attnlab SIMD × peer |`);
    out.push(`|---|${libs.map(() => '---:|').join('')}---:|---:|`);
    for (const c of results.softmax) {
      const s = c.results['attnlab-simd'], tf = c.results.tfjs, peer = fastestPeer(c);
      const vsTf = s?.ms && tf?.ms ? `**${(tf.ms / s.ms).toFixed(2)}×**` : '—';
      const vsPeer = s?.ms && peer ? `${(peer.ms / s.ms).toFixed(2)}×` : '—';
      out.push(`| ${c.n}×${c.n}${busyMark(c)} | ${libs.map((l) => { const r = c.results[l.id]; return r?.ms ? `${mdCell(r, false)}, ${fmtErr(r.maxAbsError)}` : mdCell(r, false); }).join(' | ')} | ${vsTf} | ${vsPeer} |`);
    }
    out.push('');
    const fm = m.freshMemory, big = results.softmax.at(-1);
    if (fm && big.n * big.n * 4 > 32 * 2 ** 20) {
      const mib = (big.n * big.n * 4) / 2 ** 20;
      out.push(`At ${big.n}×${big.n} every library returns a fresh ${mib.toFixed(0)} MiB array, above glibc's 32 MiB mmap ceiling, so each call page-faults it in: ` +
        `≈ ${((mib * 256 * fm.usPerPage) / 1000).toFixed(0)} ms of every time in that row (measured here: ${fm.usPerPage.toFixed(1)} µs per 4 KiB page).`);
      out.push('');
    }
  }
  // After both tables: '‡' can appear in either.
  const unsteadyText = unsteadyNote([...results.attention, ...results.softmax]);
  if (unsteadyText) out.push(unsteadyText, '');
  const st = results.streaming;
  if (st && !st.failed) {
    out.push(`### attnlab streaming path (SIMD, fresh instance, d = 64, non-causal)${(st.otherCores ?? 0) > BUSY ? ' †' : ''}`);
    out.push('');
    out.push(`| n | ${stat} ms | GFLOP/s | ns / n² | time/n² vs n=${st.rows[0].n} | wasm memory | max abs error (64 rows) |`);
    out.push('|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of st.rows) {
      out.push(`| ${r.n} | ${fmtMs(r.ms)}${unsteady(r) ? ' ‡' : ''} | ${fmtGf(r.gflops)} | ${r.nsPerN2.toFixed(3)} | ${r.relativeToFirst.toFixed(2)}× | ${r.memoryBytes == null ? 'n/a' : `${(r.memoryBytes / 2 ** 20).toFixed(1)} MiB`} | ${fmtErr(r.maxAbsError)} |`);
    }
    out.push('');
    const shaky = st.rows.filter(unsteady);
    if (shaky.length) out.push(`‡ rounds more than ${Math.round((UNSTEADY - 1) * 100)} % apart (each round a fresh instance; the pooled median is shown): ${shaky.map((r) => `n = ${r.n}: ${roundMedians(r).map(fmtMs).join(' / ')} ms`).join('; ')}.`, '');
    if ((st.otherCores ?? 0) > BUSY) out.push(`† other processes used ${st.otherCores} cores on average during these measurements: the times are noisy (memory figures are not).`, '');
    out.push(`Wasm memory includes the inputs and output copied in (4 × n × 64 floats = ${(4 * st.rows.at(-1).n * 64 * 4 / 2 ** 20).toFixed(0)} MiB at n = ${st.rows.at(-1).n}); it grows on demand and never shrinks.`);
    out.push('');
  }
  const mh = results.multiHead;
  if (mh && !mh.failed) {
    out.push(`### Explorer-sized multiHeadAttention (attnlab SIMD, ${mh.n} tokens, d_model ${mh.dModel}, ${mh.heads} heads)${(mh.otherCores ?? 0) > BUSY ? ' †' : ''}`);
    out.push('');
    out.push(`| returnIntermediates | causal | ${stat} µs per call |`);
    out.push('|:---:|:---:|---:|');
    for (const r of mh.rows) out.push(`| ${r.returnIntermediates ? 'yes' : 'no'} | ${r.causal ? 'yes' : 'no'} | ${(r.ms * 1000).toFixed(1)} |`);
    out.push('');
  }
  const op = results.operator;
  if (op) {
    const busy = Object.values(op).flatMap((c) => Object.values(c.results)).some((r) => (r.otherCores ?? 0) > BUSY);
    out.push(`### The whole operator (attnlab SIMD vs onnxruntime-web's Attention op, opset 23, one thread)${busy ? ' †' : ''}`);
    out.push('');
    out.push(`| call | attnlab ${stat} ms (CPU ms) | onnxruntime-web ${stat} ms (CPU ms) | attnlab vs ORT (in CPU time) | max abs error (attnlab / ORT) |`);
    out.push('|---|---:|---:|---:|---:|');
    const ms = (r) => (r?.ms ? `${fmtMs(r.ms)}${unsteady(r) ? ' ‡' : ''} (${fmtMs(r.cpuMs)})` : mdCell(r, true) || '—');
    const row = (label, a, o) => `| ${label} | ${ms(a)} | ${ms(o)} | ${a?.ms && o?.ms ? `${(o.ms / a.ms).toFixed(2)}× (${(o.cpuMs / a.cpuMs).toFixed(2)}×)` : '—'} | ${fmtErr(a?.maxAbsError)} / ${fmtErr(o?.maxAbsError)} |`;
    const dc = op.decode, pf = op.prefill, bh = op.batchHeads;
    out.push(row(`decode step: ${dc.heads} query heads over ${dc.kvHeads} KV heads, d = ${dc.d}, ${dc.past} cached keys (attnlab: kvCache append + attention; ORT: past/present)`, dc.results['attnlab-simd'], dc.results['ort-graph-kt']));
    out.push(row(`prefill: batch ${pf.batch}, ${pf.heads} heads, n = ${pf.n}, d = ${pf.d}, causal`, pf.results['attnlab-simd'], pf.results['ort-graph-kt']));
    out.push('');
    const one = bh.results.batched, many = bh.results.single;
    if (one?.ms && many?.ms)
      out.push(`Batch × heads in one call (batch ${bh.batch} × ${bh.heads} heads, n = ${bh.n}, d = ${bh.d}): ${fmtMs(one.ms)} ms (CPU ${fmtMs(one.cpuMs)}), against ${fmtMs(many.ms)} ms (CPU ${fmtMs(many.cpuMs)}) for the same ${bh.batch * bh.heads} heads one call each: ${(many.ms / one.ms).toFixed(3)}× (in CPU time ${(many.cpuMs / one.cpuMs).toFixed(3)}×; max abs error ${fmtErr(one.maxAbsError)}).`, '');
  }
  out.push('### Performance targets in this run');
  out.push('');
  for (const line of targetLines(targets(results))) out.push(`- ${line}`);
  out.push('');
  out.push('How: ' + results.method.scope + '. ' + results.method.timing + '. Inputs: ' + results.method.inputs + '.');
  out.push('');
  for (const [id, i] of Object.entries(results.libraries)) if (i.how) out.push(`- ${byId[id]?.short ?? id}: ${i.how}`);
  out.push('');
  return out.join('\n');
}

/** The project's performance targets, evaluated on this run (ratios within the run; `pass` is null when not measured). */
export function targets(results) {
  const out = [];
  const cell = (n, d, causal) => results.attention.find((c) => c.n === n && c.d === d && c.causal === causal);
  const ratio = (c) => {
    const s = c?.results['attnlab-simd'], p = c && fastestPeer(c);
    return s?.ms && p ? p.ms / s.ms : null;
  };
  for (const [causal, need] of [[false, 1.3], [true, 2.5]]) {
    for (const n of [256, 1024, 2048]) {
      const r = ratio(cell(n, 64, causal));
      out.push({ target: `attention${causal ? ' causal' : ''} n=${n} d=64: ≥ ${need}× the fastest peer`, value: r == null ? 'not measured' : `${r.toFixed(2)}×`, pass: r == null ? null : r >= need });
    }
  }
  const sm = results.softmax.find((c) => c.n === 1024);
  const smR = sm?.results['attnlab-simd']?.ms && sm.results.tfjs?.ms ? sm.results.tfjs.ms / sm.results['attnlab-simd'].ms : null;
  out.push({ target: 'softmax 1024×1024: ≥ 1.5× tfjs-wasm', value: smR == null ? 'not measured' : `${smR.toFixed(2)}×`, pass: smR == null ? null : smR >= 1.5 });
  const st = results.streaming;
  const big = st?.rows?.find((r) => r.n === 16384);
  out.push({
    target: 'streaming n=16384 d=64: wasm memory < 64 MB',
    value: big?.memoryBytes == null ? 'not measured' : `${(big.memoryBytes / 1e6).toFixed(1)} MB`,
    pass: big?.memoryBytes == null ? null : big.memoryBytes < 64e6,
  });
  if (st?.rows?.length > 1) {
    const v = st.rows.map((r) => r.nsPerN2).sort((a, b) => a - b);
    const mid = v[v.length >> 1];
    const lo = v[0] / mid, hi = v.at(-1) / mid;
    out.push({
      target: `streaming time/n² flat within ±20% (n = ${st.rows[0].n}…${st.rows.at(-1).n}, vs the median ${mid.toFixed(2)} ns)`,
      value: `${((lo - 1) * 100).toFixed(0)}% … +${((hi - 1) * 100).toFixed(0)}%`,
      pass: lo >= 0.8 && hi <= 1.2,
    });
  }
  const op = results.operator;
  if (op) {
    const a = op.decode.results['attnlab-simd'], o = op.decode.results['ort-graph-kt'];
    const r = a?.ms && o?.ms ? o.ms / a.ms : null;
    out.push({ target: `decode step (8 heads over 2 KV heads, d = 64, 4096 cached keys): ≥ 3× onnxruntime-web's Attention with past/present`, value: r == null ? 'not measured' : `${r.toFixed(2)}×`, pass: r == null ? null : r >= 3 });
    const one = op.batchHeads.results.batched, many = op.batchHeads.results.single;
    const b = one?.ms && many?.ms ? many.ms / one.ms : null;
    out.push({ target: 'batch × heads in one call ≥ 0.95× the summed single-head calls (n = 1024, d = 64)', value: b == null ? 'not measured' : `${b.toFixed(3)}×`, pass: b == null ? null : b >= 0.95 });
  }
  const mh = results.multiHead?.rows?.find((r) => r.returnIntermediates && !r.causal);
  out.push({ target: 'explorer multiHeadAttention (32 tokens, d_model 64, 4 heads, intermediates) < 1 ms', value: mh?.ms ? `${(mh.ms * 1000).toFixed(0)} µs` : 'not measured', pass: mh?.ms ? mh.ms < 1 : null });
  return out;
}

export function targetLines(list) {
  return list.map((t) => `${t.pass == null ? '·' : t.pass ? '✓' : '✗'} ${t.target}: ${t.value}`);
}
