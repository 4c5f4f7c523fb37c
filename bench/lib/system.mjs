// Machine description and a cheap noise meter: CPU time used by everything else on the machine while a cell
// was measured (from /proc/stat, minus the bench's own processes).
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';

const read = (f) => { try { return fs.readFileSync(f, 'utf8'); } catch { return ''; } };

export function machineInfo() {
  const cpuinfo = read('/proc/cpuinfo');
  const field = (name) => (cpuinfo.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm')) ?? [])[1]?.trim();
  const flags = (field('flags') ?? '').split(/\s+/);
  let v8 = process.versions.v8;
  return {
    cpuModel: field('model name') ?? os.cpus()[0]?.model ?? 'unknown',
    cpuFamily: field('cpu family'), cpuModelNumber: field('model'), stepping: field('stepping'),
    cpuMHz: field('cpu MHz'), cacheSize: field('cache size'),
    simdFlags: ['sse4_2', 'avx', 'avx2', 'fma', 'avx512f'].filter((f) => flags.includes(f)),
    hypervisor: flags.includes('hypervisor'),
    logicalCpus: os.cpus().length,
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version, v8,
    date: new Date().toISOString(),
    loadAverageAtStart: os.loadavg().map((x) => +x.toFixed(2)),
    repo: gitState(),
  };
}

/** Commit of the checkout and whether the engine's sources differ from it (the build may include local edits). */
function gitState() {
  try {
    const git = (...a) => execFileSync('git', a, { stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const changed = git('status', '--porcelain', '--', 'src', 'CMakeLists.txt').split('\n').filter(Boolean).length;
    return { commit: git('rev-parse', '--short=12', 'HEAD'), uncommittedEngineFiles: changed };
  } catch {
    return null;
  }
}

let ticksPerSecond = 100;
try { ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100; } catch { /* keep 100 */ }

/** Snapshot of the machine's CPU counters, in ms. */
export function cpuSnapshot() {
  const line = read('/proc/stat').split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return null;
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  const own = process.cpuUsage();
  return {
    busyMs: ((user + nice + system + irq + softirq) * 1000) / ticksPerSecond,
    stealMs: ((steal ?? 0) * 1000) / ticksPerSecond,
    ownMs: (own.user + own.system) / 1000,
    wallMs: performance.now(),
  };
}

/**
 * Average number of cores used by other processes between two snapshots, given the CPU ms the worker spent.
 * Resolution is one clock tick (10 ms), so short intervals are rough.
 */
export function otherLoad(a, b, workerCpuMs) {
  if (!a || !b) return null;
  const wall = b.wallMs - a.wallMs;
  if (wall <= 0) return null;
  const others = b.busyMs - a.busyMs - (b.ownMs - a.ownMs) - workerCpuMs;
  return { otherCores: Math.max(0, others / wall), stealCores: (b.stealMs - a.stealMs) / wall };
}

/** CPU time (ms) of process `pid` and all its descendants (a browser and its renderers), from /proc. */
export function treeCpuMs(pid = process.pid) {
  const parent = new Map(), cpu = new Map();
  for (const p of fs.readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(+p, +f[1]);
      cpu.set(+p, +f[11] + +f[12]);
    } catch { /* gone */ }
  }
  let ticks = 0;
  for (const [p, t] of cpu) {
    for (let q = p; q > 1; q = parent.get(q) ?? 0) if (q === pid) { ticks += t; break; }
  }
  return (ticks * 1000) / ticksPerSecond;
}
