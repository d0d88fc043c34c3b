/**
 * Refresh cost of the cgroup_resources sampler with 10, 100 and 1000 cgroups
 * of its own (the default max_cgroups 1024, so none folded), made by this
 * script under rezolus-bench-<pid> in every v1 hierarchy the sampler reads
 * (cpu, cpuacct, memory, blkio, pids) and removed at the end, also on error
 * and Ctrl-C.
 *
 *   npx tsx test/bench/cgroups.ts            # 200 refreshes per size
 *   npx tsx test/bench/cgroups.ts 50
 *
 * Printed: µs per refresh (the agent's refreshNs/refreshes, refresh +
 * describe + encode), series, frame bytes, and µs per cgroup.
 */
import { existsSync, mkdirSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { KernelHarness } from '../helpers/kernel.js';

const REFRESHES = Number(process.argv[2] ?? 200);
const ROOTS = ['cpu', 'cpuacct', 'memory', 'blkio', 'pids'].map((c) => `/sys/fs/cgroup/${c}`).filter((r) => existsSync(r));
const PARENT = `rezolus-bench-${process.pid}`;

function cleanup(): void {
  for (const root of ROOTS) {
    const dir = join(root, PARENT);
    if (!existsSync(dir)) continue;
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rmdirSync(join(dir, e.name));
    rmdirSync(dir);
  }
}
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

try {
  process.stdout.write(`cgroup_resources refresh cost, ${REFRESHES} refreshes per size, hierarchies: ${ROOTS.join(' ')}\n`);
  process.stdout.write('cgroups (made)  cgroups published  series  frame B  µs per refresh  µs per cgroup\n');
  let made = 0;
  for (const n of [10, 100, 1000]) {
    for (; made < n; made++) for (const root of ROOTS) mkdirSync(join(root, PARENT, `c${String(made).padStart(4, '0')}`), { recursive: true });
    const k = await KernelHarness.start(['cgroup_resources'], { cgroups: { maxCgroups: 1024, maxDepth: 6 } });
    for (let i = 0; i < 20; i++) await k.agent.tickOnce();
    const a = k.status('cgroup_resources');
    for (let i = 0; i < REFRESHES; i++) await k.agent.tickOnce();
    const b = k.status('cgroup_resources');
    const v = await k.read('cgroup_resources');
    const published = new Set([...v.keys()].map((key) => /cgroup=([^,}]+)/.exec(key)?.[1]).filter(Boolean)).size;
    const us = Number(b.refreshNs - a.refreshNs) / (b.refreshes - a.refreshes) / 1000;
    process.stdout.write(
      `${String(n).padStart(14)}  ${String(published).padStart(17)}  ${String(b.lastSeries).padStart(6)}  ${String(b.lastFrameBytes).padStart(7)}  ${us.toFixed(0).padStart(14)}  ${(us / published).toFixed(1).padStart(13)}\n`,
    );
    await k.stop();
  }
} finally {
  cleanup();
}
