/**
 * Refresh cost of the cgroup_resources sampler with 10, 100 and 1000 cgroups
 * of its own (the default max_cgroups 1024, so none folded), made by this
 * script under rezolus-bench-<pid> in every v1 hierarchy the sampler reads
 * (cpu, cpuacct, memory, blkio, pids) and removed at the end, also on error
 * and Ctrl-C.
 *
 *   npx tsx test/bench/cgroups.ts            # 200 refreshes per size
 *   npx tsx test/bench/cgroups.ts 50
 *   npx tsx test/bench/cgroups.ts 50 --against ../old   # another checkout's sampler, in turns
 *   npx tsx test/bench/cgroups.ts 50 --open-files 4096  # more files kept open than the default 1024
 *
 * Printed: µs per refresh (the agent's refreshNs/refreshes, refresh +
 * describe + encode), series, frame bytes, and µs per cgroup, with cgroupfs
 * files kept open between refreshes ([cgroups] open_files, the default) and
 * opened for every read (open_files = 0), two turns each, in one run.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { KernelHarness } from '../helpers/kernel.js';
import { removeBenchCgroups } from './common.js';

const { values: flags, positionals } = parseArgs({ options: { against: { type: 'string' }, 'open-files': { type: 'string', default: '1024' } }, allowPositionals: true });
const REFRESHES = Number(positionals[0] ?? 200);
/** [cgroups] open_files of the "kept open" turns (the default 1024) */
const OPEN_FILES = Number(flags['open-files']);
if (!Number.isInteger(OPEN_FILES) || OPEN_FILES < 1) throw new Error(`--open-files takes a whole number ≥ 1, not ${flags['open-files']}`);
/** another checkout whose sampler (its test/helpers/kernel.ts) takes turns with this one's in the same process */
const AGAINST = flags.against === undefined ? undefined : resolve(flags.against);
const Against: typeof KernelHarness | undefined =
  AGAINST === undefined ? undefined : ((await import(pathToFileURL(join(AGAINST, 'test', 'helpers', 'kernel.ts')).href)) as { KernelHarness: typeof KernelHarness }).KernelHarness;
const ROOTS = ['cpu', 'cpuacct', 'memory', 'blkio', 'pids'].map((c) => `/sys/fs/cgroup/${c}`).filter((r) => existsSync(r));
const PARENT = `rezolus-bench-${process.pid}`;

function cleanup(): void {
  removeBenchCgroups(ROOTS, PARENT);
}
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

/** µs per refresh (and what it published) with `openFiles` cgroupfs files kept open (0: opened for every read). */
async function measure(openFiles: number, harness: typeof KernelHarness = KernelHarness): Promise<{ us: number; published: number; series: number; bytes: number }> {
  const k = await harness.start(['cgroup_resources'], { cgroups: { maxCgroups: 1024, maxDepth: 6, openFiles } });
  try {
    for (let i = 0; i < 20; i++) await k.agent.tickOnce();
    const a = k.status('cgroup_resources');
    for (let i = 0; i < REFRESHES; i++) await k.agent.tickOnce();
    const b = k.status('cgroup_resources');
    const v = await k.read('cgroup_resources');
    const published = new Set([...v.keys()].map((key) => /cgroup=([^,}]+)/.exec(key)?.[1]).filter(Boolean)).size;
    return { us: Number(b.refreshNs - a.refreshNs) / (b.refreshes - a.refreshes) / 1000, published, series: b.lastSeries, bytes: b.lastFrameBytes };
  } finally {
    await k.stop();
  }
}

try {
  process.stdout.write(`cgroup_resources refresh cost, ${REFRESHES} refreshes per size and mode, hierarchies: ${ROOTS.join(' ')}\n`);
  process.stdout.write(`files kept open ([cgroups] open_files ${OPEN_FILES}; default 1024) against opened for every read (open_files 0), taking turns\n`);
  if (AGAINST !== undefined) process.stdout.write(`and the sampler of ${AGAINST} (its defaults), taking turns too\n`);
  process.stdout.write(
    `cgroups (made)  cgroups published  series  frame B  µs per refresh  µs per cgroup  µs/refresh, open_files 0  kept / opened${AGAINST === undefined ? '' : '  µs/refresh, against  this / against'}\n`,
  );
  let made = 0;
  for (const n of [10, 100, 1000]) {
    for (; made < n; made++) for (const root of ROOTS) mkdirSync(join(root, PARENT, `c${String(made).padStart(4, '0')}`), { recursive: true });
    const kept: number[] = [];
    const opened: number[] = [];
    const other: number[] = [];
    let last = await measure(OPEN_FILES);
    for (let turn = 0; turn < 2; turn++) {
      if (turn > 0) last = await measure(OPEN_FILES);
      kept.push(last.us);
      opened.push((await measure(0)).us);
      if (Against !== undefined) other.push((await measure(1024, Against)).us);
    }
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    const k = mean(kept);
    const o = mean(opened);
    const a = other.length > 0 ? `  ${mean(other).toFixed(0).padStart(19)}  ${(k / mean(other)).toFixed(2).padStart(14)}` : '';
    process.stdout.write(
      `${String(n).padStart(14)}  ${String(last.published).padStart(17)}  ${String(last.series).padStart(6)}  ${String(last.bytes).padStart(7)}  ${k.toFixed(0).padStart(14)}  ${(k / last.published).toFixed(1).padStart(13)}  ${o.toFixed(0).padStart(24)}  ${(k / o).toFixed(2).padStart(13)}${a}\n`,
    );
  }
} finally {
  cleanup();
}
