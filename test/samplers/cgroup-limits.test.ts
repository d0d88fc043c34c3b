import test from 'ava';
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/log/logger.js';
import { cgroupResourcesSampler } from '../../src/samplers/cgroup/sampler.js';
import type { Sampler } from '../../src/samplers/types.js';

// A cgroup's limits are read every 10 refreshes (and when it is new): a real cgroup
// rezolus-limits-<pid> of the v1 cpu hierarchy, its CFS quota changed between refreshes.

const CPU = '/sys/fs/cgroup/cpu';
const DIR = join(CPU, `rezolus-limits-${process.pid}`);
const NAME = `/rezolus-limits-${process.pid}`;
const usable = existsSync(join(CPU, 'cpu.cfs_quota_us')) && process.getuid?.() === 0;

test.after.always(() => {
  if (existsSync(DIR)) rmdirSync(DIR);
});

async function quotaNs(sampler: Sampler): Promise<unknown> {
  const { points } = await sampler.refresh();
  return points.find((p) => p.metric.name === 'cgroup_cpu_bandwidth_quota' && p.labels['cgroup'] === NAME)?.value;
}

test.serial('a new cgroup\'s quota is published at once, a changed one within 10 refreshes, and the last one read at every refresh between', async (t) => {
  if (!usable) return t.fail('needs root and the v1 cpu hierarchy (this machine has both)');
  const sampler = await cgroupResourcesSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  try {
    t.is(await quotaNs(sampler), undefined);
    mkdirSync(DIR);
    writeFileSync(join(DIR, 'cpu.cfs_quota_us'), '50000');
    t.is(await quotaNs(sampler), 50_000_000, 'a new cgroup: read at once');
    writeFileSync(join(DIR, 'cpu.cfs_quota_us'), '20000');
    const seen: unknown[] = [];
    for (let i = 0; i < 10; i++) seen.push(await quotaNs(sampler));
    t.true(seen.every((v) => v === 50_000_000 || v === 20_000_000), `published at every refresh: ${seen.join(' ')}`);
    t.is(seen.at(-1), 20_000_000, `the new quota within 10 refreshes: ${seen.join(' ')}`);
    writeFileSync(join(DIR, 'cpu.cfs_quota_us'), '-1');
    const after: unknown[] = [];
    for (let i = 0; i < 10; i++) after.push(await quotaNs(sampler));
    t.is(after.at(-1), undefined, 'unlimited again: no quota series');
  } finally {
    await sampler.close?.();
  }
});
