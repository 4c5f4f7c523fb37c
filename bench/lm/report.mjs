// The LM bench's printed table and the ratios its targets are stated in. Times are wall-clock medians; beside
// them, in parentheses, the median CPU time of the runtime's process (Node only), which waiting for a core on a
// loaded machine does not inflate: where the two differ much, the machine was busy.

const mb = (b) => (b == null ? 'n/a' : `${(b / 2 ** 20).toFixed(0)} MiB`);
const med = (x) => (x?.length ? [...x].sort((a, b) => a - b)[x.length >> 1] : null);
const fmt = (x, digits = 1) => (x == null || !Number.isFinite(x) ? '—' : x.toFixed(digits));
const withCpu = (wall, cpu, digits) => `${fmt(wall, digits)}${cpu == null ? '' : ` (${fmt(cpu, digits)})`}`;

export function printResults(s, log) {
  const { config } = s.model.manifest;
  const kvBytes = 2 * config.n_layer * config.n_positions * config.n_embd * 4;
  const rows = [];
  for (const r of Object.values(s.results)) {
    const prefillMs = med(r.prefill), msPerToken = med(r.decode);
    const prefillCpuMs = med(r.prefillCpu), cpuPerToken = med(r.decodeCpu);
    const tokS = msPerToken ? 1000 / msPerToken : null, cpuTokS = cpuPerToken ? 1000 / cpuPerToken : null;
    const gbps = tokS ? (tokS * s.model.weightBytes[r.dtype]) / 1e9 : null;
    const cpuGbps = cpuTokS ? (cpuTokS * s.model.weightBytes[r.dtype]) / 1e9 : null;
    const other = r.otherCores.filter((x) => x != null);
    Object.assign(r, { prefillMs, msPerToken, prefillCpuMs, cpuPerToken, tokS, cpuTokS, gbps, cpuGbps,
      otherCoresMean: other.length ? other.reduce((a, b) => a + b, 0) / other.length : null });
    rows.push(r);
  }
  log(`\nGPT-2 shape (${(s.model.manifest.parameters / 1e6).toFixed(1)} M parameters), one thread; prefill ${s.plan.prompt} tokens, decode ${s.plan.decode} greedy tokens after it; medians over ${s.rounds} round${s.rounds > 1 ? 's' : ''}; (CPU time of the runtime's process)`);
  log(`decode GB/s = weight bytes read per token (F32 ${(s.model.weightBytes.F32 / 1e6).toFixed(1)} MB, F16/BF16 ${(s.model.weightBytes.F16 / 1e6).toFixed(1)} MB) × tokens/s; wasm streaming read: ${s.stream.gbps.toFixed(2)} GB/s${s.stream.gbpsCpu ? ` (per CPU second ${s.stream.gbpsCpu.toFixed(2)})` : ''}`);
  log('runtime           weights  prefill ms (CPU)  tok/s  decode ms/tok (CPU)  tok/s (CPU)    GB/s (CPU)  % stream (CPU)  |err|/bound  memory                                other load');
  for (const r of rows) {
    const name = `${r.label.padEnd(17)} ${r.dtype.padEnd(7)}`;
    if (r.missing) { log(`${name}  not available: ${r.missing}`); continue; }
    if (!r.prefillMs && r.failed) { log(`${name}  FAILED: ${r.failed}`); continue; }
    const mem = r.runtime === 'attnlab' ? `wasm ${mb(r.memory?.labMemoryBytes)}, model ${mb(r.memory?.memoryBytes)}`
      : r.runtime === 'tfjs' ? `tensors ${mb(r.memory?.tensorBytes)}, heap ${mb(r.memory?.wasmBytes)}` : 'not exposed';
    log(`${name}  ${withCpu(r.prefillMs, r.prefillCpuMs, 0).padStart(16)}  ${fmt(r.prefillMs && (1000 * s.plan.prompt) / r.prefillMs).padStart(5)}  ` +
      `${withCpu(r.msPerToken, r.cpuPerToken, 1).padStart(19)}  ${withCpu(r.tokS, r.cpuTokS, 2).padStart(11)}  ${withCpu(r.gbps, r.cpuGbps, 2).padStart(12)}  ` +
      `${withCpu(r.gbps && (100 * r.gbps) / s.stream.gbps, r.cpuGbps && s.stream.gbpsCpu && (100 * r.cpuGbps) / s.stream.gbpsCpu, 0).padStart(11)} %  ` +
      `${fmt(r.maxErrOverBound, 3).padStart(11)}  ${`${mem}; RSS ${mb(r.rss)}`.padEnd(36)}  ${fmt(r.otherCoresMean, 2)} cores${r.failed ? `  (FAILED later: ${r.failed})` : ''}`);
  }
  // greedy tokens: runtimes on the same F32 weights should agree (the bound decides most steps)
  const f32 = rows.filter((r) => r.dtype === 'F32' && r.tokens);
  if (f32.length > 1) {
    const [a, ...rest] = f32;
    log(`greedy tokens (F32): ${rest.map((b) => { let n = 0; while (n < a.tokens.length && a.tokens[n] === b.tokens[n]) ++n; return `${b.label} equals ${a.label} for ${n} of ${a.tokens.length}`; }).join('; ')}`);
  }

  const get = (runtime, dtype) => rows.find((r) => r.runtime === runtime && r.dtype === dtype && r.tokS);
  const lab = get('attnlab', 'F32'), ort = get('ort', 'F32');
  const weights = s.model.manifest.dtypes.F32.weightBytes;
  // a ratio of wall times, and of CPU times where both have them
  const ratio = (a, b, cpuA, cpuB) => `${fmt(a / b, 2)}×${cpuA && cpuB ? ` (CPU ${fmt(cpuA / cpuB, 2)}×)` : ''}`;
  const line = (what, value, target, met) => log(`  ${what.padEnd(58)} ${value.padStart(20)}   target ${target}${met == null ? '' : met ? '  met' : '  MISSED'}`);
  log('\ntargets (attnlab against its ceiling and its peers; met/MISSED on wall time):');
  if (!lab) {
    const why = s.results['attnlab:F32']?.missing ?? s.results['attnlab:F32']?.failed ?? 'attnlab was not run';
    log(`  — (${why})`);
  } else {
    const cpuShare = lab.cpuGbps && s.stream.gbpsCpu ? ` (CPU ${fmt((100 * lab.cpuGbps) / s.stream.gbpsCpu, 0)} %)` : '';
    line('decode F32: share of the wasm streaming read', `${fmt((100 * lab.gbps) / s.stream.gbps, 0)} %${cpuShare}`, '≥ 80 %', lab.gbps >= 0.8 * s.stream.gbps);
    if (ort) line('decode F32 tokens/s: attnlab / onnxruntime-web', ratio(lab.tokS, ort.tokS, lab.cpuTokS, ort.cpuTokS), '> 1', lab.tokS > ort.tokS);
    for (const d of ['F16', 'BF16']) {
      const h = get('attnlab', d);
      if (h) line(`decode ${d} (kept half-size) tokens/s / attnlab F32`, ratio(h.tokS, lab.tokS, h.cpuTokS, lab.cpuTokS), '≥ 1.6', h.tokS >= 1.6 * lab.tokS);
    }
    if (ort) line('prefill tokens/s: attnlab / onnxruntime-web', ratio(ort.prefillMs, lab.prefillMs, ort.prefillCpuMs, lab.prefillCpuMs), '≥ 1.3', ort.prefillMs >= 1.3 * lab.prefillMs);
    // the module's whole wasm memory (lab.memoryBytes): what loading left it at, copies included; smaller than the
    // model's own share means the model lives in a module this lab's memoryBytes does not see (no verdict then)
    const mem = lab.memory?.labMemoryBytes, share = lab.memory?.memoryBytes;
    const seen = mem != null && !(share > mem);
    const limit = 1.15 * (weights + kvBytes);
    line(`wasm memory: lab.memoryBytes / (weights ${mb(weights)} + KV cache ${mb(kvBytes)})`,
      seen ? `${fmt(mem / (weights + kvBytes), 3)}×` : `n/a (lab ${mb(mem)} < model ${mb(share)})`, `≤ 1.15 (${mb(limit)})`, seen ? mem <= limit : null);
  }
  log(`  (KV cache counted at the full context: 2 × ${config.n_layer} layers × ${config.n_positions} positions × ${config.n_embd} × 4 bytes)`);
}
