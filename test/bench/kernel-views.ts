/**
 * Cost of reading the kernel samplers' mmapped maps in userspace (issue 19):
 * the JS readers before the native scan (test/helpers/kernel-views-old.ts)
 * against the ones in src/samplers/kernel (scanU64 in the addon), on the same
 * buffers, in one process:
 *
 *   npx tsx test/bench/kernel-views.ts [--rounds 20] [--pace-ms 1000] [--warm 2000] [--synthetic] [--cgroups N] [--opt]
 *
 * Buffers: a snapshot of this host's histograms (every kernel sampler run for
 * 3 s in an Agent, each histogram series of its frame written back as 496
 * u64 buckets; --synthetic or without root: 31 histograms of 0-80 adjacent
 * buckets), and the per-cgroup slots the way three samplers read them (4096
 * inode slots with as many live cgroups as this host's cpu hierarchy has, or
 * --cgroups,
 * widths 1, 1 and the syscall classes), and network_drops' search for new
 * reasons in its bank of 256 slots per CPU (4 reasons counted, all seen).
 * Runs under the V8 flags of the agent at 1 Hz (AGENT_V8_FLAGS in
 * src/agent/v8-flags.ts; --no-opt until 2026-11-26, the figures of that day
 * in README.md), unless --opt. Two paces: warm (--warm rounds back to back) and paced (each
 * of --rounds rounds after --pace-ms of sleep and a 32 MiB sweep that evicts
 * the caches, as a 1 Hz tick finds them), old and new in alternating order
 * within a round. Printed: median µs per histogram and per sampler's slot
 * walk, and per tick of all of them.
 */
import { readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { AGENT_V8_FLAGS } from '../../src/agent/v8-flags.js';
import { cpuModel, fmt, say, sleep } from './common.js';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string' }, 'pace-ms': { type: 'string' }, warm: { type: 'string' },
    synthetic: { type: 'boolean' }, cgroups: { type: 'string' }, opt: { type: 'boolean' },
  },
});
const ROUNDS = Number(flags.rounds ?? 20);
const PACE_MS = Number(flags['pace-ms'] ?? 1000);
const WARM = Number(flags.warm ?? 2000);
const CGROUPS = flags.cgroups === undefined ? undefined : Number(flags.cgroups);
if (!(ROUNDS >= 3) || !(PACE_MS >= 0) || !(WARM >= 10) || (CGROUPS !== undefined && !(CGROUPS >= 1 && CGROUPS <= 1000))) {
  process.stderr.write('usage: npx tsx test/bench/kernel-views.ts [--rounds N>=3] [--pace-ms MS] [--warm N>=10] [--synthetic] [--cgroups 1-1000] [--opt]\n');
  process.exit(2);
}
// before any of the readers is compiled
if (flags.opt !== true) for (const f of AGENT_V8_FLAGS) setFlagsFromString(f);

const { H2_BUCKETS } = await import('../../src/metrics/histogram.js');
const { CounterBankView, HistogramView, PackedView } = await import('../../src/samplers/kernel/views.js');
const { liveSlots } = await import('../../src/samplers/kernel/per-cgroup.js');
const { SYSCALL_CLASSES } = await import('../../src/samplers/syscall/classes.js');
const { OldCounterBankView, OldHistogramView, OldPackedView, oldLiveSlots } = await import('../helpers/kernel-views-old.js');
const { prng } = await import('../helpers/prng.js');

type Sparse = { index: readonly number[]; count: readonly number[] };

/** Every histogram series the kernel samplers publish after 3 s on this host. */
async function realHistograms(): Promise<Sparse[]> {
  const { KernelHarness } = await import('../helpers/kernel.js');
  const { SAMPLERS } = await import('../../src/samplers/registry.js');
  const kernel = SAMPLERS.filter((d) => d.kernel === true).map((d) => d.name);
  const harness = await KernelHarness.start(kernel);
  try {
    await sleep(3000);
    const out: Sparse[] = [];
    for (const name of kernel) {
      const { state } = harness.status(name).status;
      if (state !== 'active' && state !== 'degraded') continue;
      for (const v of (await harness.read(name)).values()) if (typeof v === 'object') out.push(v);
    }
    return out;
  } finally {
    await harness.stop();
  }
}

function syntheticHistograms(): Sparse[] {
  const rand = prng(31);
  return Array.from({ length: 31 }, (_, h) => {
    const n = [0, 2, 10, 20, 40, 80][h % 6]!;
    const start = Math.floor(rand() * (H2_BUCKETS - n));
    const index = Array.from({ length: n }, (_, i) => start + i);
    return { index, count: index.map(() => 1 + Math.floor(rand() * 1e9)) };
  });
}

let source = 'synthetic';
let sparse: Sparse[];
if (flags.synthetic === true || process.getuid?.() !== 0) {
  sparse = syntheticHistograms();
} else {
  try {
    sparse = await realHistograms();
    source = 'this host, kernel samplers after 3 s';
  } catch (error) {
    say(`no snapshot of the kernel samplers (${String(error)}): synthetic histograms`);
    sparse = syntheticHistograms();
  }
}
const histBuffer = new BigUint64Array(sparse.length * H2_BUCKETS);
sparse.forEach((h, k) => h.index.forEach((i, j) => (histBuffer[k * H2_BUCKETS + i] = BigInt(h.count[j]!))));
const oldHist = sparse.map((_, k) => new OldHistogramView(histBuffer.buffer, k));
const newHist = sparse.map((_, k) => new HistogramView(histBuffer.buffer, k));

// per-cgroup: the slot arrays of cpu_migrations, scheduler_runqueue (width 1) and syscall_counts
function cgroupCount(): number {
  let n = 0;
  const walk = (dir: string, depth: number): void => {
    n++;
    if (depth === 0) return;
    try {
      for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(`${dir}/${e.name}`, depth - 1);
    } catch {
      // gone meanwhile
    }
  };
  for (const root of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup']) {
    try {
      readdirSync(root);
      walk(root, 4);
      return n;
    } catch {
      // not this one
    }
  }
  return 16;
}
const SLOTS = 4096;
const LIVE = CGROUPS ?? cgroupCount();
const rand = prng(4096);
const slotSets = [1, 1, SYSCALL_CLASSES.length].map((width) => {
  const inodes = new BigUint64Array(SLOTS);
  const counters = new BigUint64Array(SLOTS * width);
  for (let c = 0; c < LIVE; c++) {
    const id = 1 + c * 3;
    inodes[id] = 0x1_0000_0000n + BigInt(1000 + c);
    for (let k = 0; k < width; k++) counters[id * width + k] = BigInt(Math.floor(rand() * 1e7));
  }
  return {
    width,
    old: { counters: new OldPackedView(counters.buffer, SLOTS * width), inodes: new OldPackedView(inodes.buffer, SLOTS) },
    now: { counters: new PackedView(counters.buffer, SLOTS * width), inodes: new PackedView(inodes.buffer, SLOTS) },
  };
});

// network_drops: slot 0 the total, reasons 2..255; a few counted on some CPU
const CPUS = 2;
const dropWords = new BigUint64Array(CPUS * 256);
for (const [cpu, r] of [[0, 0], [1, 0], [0, 2], [1, 5], [1, 16], [0, 255]] as const) dropWords[cpu * 256 + r] = 17n;
const oldDrops = new OldCounterBankView(dropWords.buffer, 256, CPUS);
const newDrops = new CounterBankView(dropWords.buffer, 256, CPUS);
const isSeen = new Uint8Array(256);
for (const r of [2, 5, 16, 255]) isSeen[r] = 1;
/** the loop of network_drops' refresh before and after: how many new reasons it finds (none, in steady state) */
const oldReasons = (): number => {
  let grew = 0;
  for (let r = 2; r <= 255; r++) if (isSeen[r] === 0 && oldDrops.total(r) !== 0) grew++;
  return grew;
};
const newReasons = (): number => {
  let grew = 0;
  for (const r of newDrops.touched()) if (r >= 2 && r <= 255 && isSeen[r] === 0) grew++;
  return grew;
};

// the outputs agree before anything is timed
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a, (_, v) => (typeof v === 'bigint' ? `${v}n` : v)) === JSON.stringify(b, (_, v) => (typeof v === 'bigint' ? `${v}n` : v));
for (let k = 0; k < sparse.length; k++) if (!same(oldHist[k]!.read(), newHist[k]!.read())) throw new Error(`histogram ${k} differs`);
for (const s of slotSets) {
  if (!same(oldLiveSlots(s.old.counters, s.old.inodes, s.width, SLOTS), liveSlots(s.now.counters, s.now.inodes, s.width, SLOTS))) throw new Error('slots differ');
}

if (oldReasons() !== 0 || newReasons() !== 0) throw new Error('reasons differ');

let sink = 0;
const timeNs = (f: () => void): number => {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0);
};
const readOldHist = (): void => {
  for (const v of oldHist) sink += v.read().index.length;
};
const readNewHist = (): void => {
  for (const v of newHist) sink += v.read().index.length;
};
const readOldSlots = (): void => {
  for (const s of slotSets) sink += oldLiveSlots(s.old.counters, s.old.inodes, s.width, SLOTS).length;
};
const readNewSlots = (): void => {
  for (const s of slotSets) sink += liveSlots(s.now.counters, s.now.inodes, s.width, SLOTS).length;
};
const readOldDrops = (): void => {
  sink += oldReasons();
};
const readNewDrops = (): void => {
  sink += newReasons();
};
const sweep = new Uint8Array(32 << 20);
const evict = (): void => {
  for (let i = 0; i < sweep.length; i += 64) sweep[i] = (sweep[i]! + 1) & 0xff;
};
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

const parts: [string, () => void, () => void, number][] = [
  ['histograms', readOldHist, readNewHist, sparse.length],
  ['per-cgroup slot walks', readOldSlots, readNewSlots, slotSets.length],
  ['network_drops reason search', readOldDrops, readNewDrops, 1],
];
const rows: string[] = [];
for (const [name, old, now, n] of parts) {
  const warm = { old: [] as number[], now: [] as number[] };
  for (let r = 0; r < WARM; r++) {
    if (r % 2 === 0) {
      warm.old.push(timeNs(old));
      warm.now.push(timeNs(now));
    } else {
      warm.now.push(timeNs(now));
      warm.old.push(timeNs(old));
    }
  }
  const paced = { old: [] as number[], now: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const which of r % 2 === 0 ? (['old', 'now'] as const) : (['now', 'old'] as const)) {
      await sleep(PACE_MS / 2);
      evict();
      paced[which].push(timeNs(which === 'old' ? old : now));
    }
  }
  for (const [pace, t] of [['warm', warm], [`paced ${PACE_MS} ms`, paced]] as const) {
    const o = median(t.old) / 1000;
    const w = median(t.now) / 1000;
    rows.push(`| ${name} (${n}) | ${pace} | ${fmt(o / n)} | ${fmt(w / n)} | ${fmt(o)} | ${fmt(w)} | ${fmt(w / o)} |`);
  }
}

const nonZero = sparse.map((h) => h.index.length);
say(`${cpuModel()}, node ${process.version}, V8 ${flags.opt === true ? 'default' : AGENT_V8_FLAGS.join(' ')}`);
say(`histograms: ${sparse.length} (${source}), non-zero buckets per histogram: median ${median(nonZero)}, max ${Math.max(...nonZero)}, total ${nonZero.reduce((a, b) => a + b, 0)}`);
say(`per-cgroup: ${SLOTS} slots, ${LIVE} live, widths ${slotSets.map((s) => s.width).join(', ')}; network_drops: ${CPUS} CPUs x 256 slots`);
say('');
say('| reads (count) | pace | old µs each | new µs each | old µs all | new µs all | new/old |');
say('|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) say(r);
if (sink < 0) say('');
