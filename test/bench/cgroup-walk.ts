/**
 * CPU of listing a cgroup hierarchy with each cgroup's inode (the kernfs id
 * of cgroup_id and of the BPF samplers' cgroup names): the listing's own stat
 * (listCgroups with an inode map) against the listing then a stat per cgroup
 * (how it was done up to 2026-11-29), taking turns in one process, on N
 * cgroups made for the run under the cpu hierarchy (v1) or the v2 tree.
 * Needs root.
 *
 *   npx tsx test/bench/cgroup-walk.ts [N ...]     (default 10 1000)
 */
import { cpus } from 'node:os';
import { mkdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isCgroupFs, listCgroups } from '../../src/samplers/cgroup/walk.js';

const root = ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/unified', '/sys/fs/cgroup'].find((r) => isCgroupFs(r));
if (root === undefined) throw new Error('no cgroup file system mounted');
const sizes = process.argv.slice(2).map(Number);
const base = join(root, `rezolus-walk-bench-${process.pid}`);
const DEPTH = 4;

const twoStats = (): bigint => {
  let sum = 0n;
  for (const p of listCgroups(root, DEPTH, true)) sum += statSync(join(root, p), { bigint: true }).ino;
  return sum;
};
const oneStat = (): bigint => {
  const inodes = new Map<string, bigint>();
  listCgroups(root, DEPTH, true, inodes);
  let sum = 0n;
  for (const ino of inodes.values()) sum += ino;
  return sum;
};
const median = (a: readonly number[]): number => [...a].sort((x, y) => x - y)[a.length >> 1] as number;

process.stdout.write(`CPU: ${cpus()[0]?.model ?? '?'}; hierarchy ${root}, depth ${DEPTH}\n`);
for (const n of sizes.length > 0 ? sizes : [10, 1000]) {
  mkdirSync(base);
  try {
    for (let i = 0; i < n; i++) mkdirSync(join(base, `c${i}`));
    if (oneStat() !== twoStats()) throw new Error('the two ways give other inodes');
    const iterations = Math.max(20, Math.round(20_000 / n));
    const times = { one: [] as number[], two: [] as number[] };
    for (let round = 0; round < 6; round++) {
      for (const [way, f] of [['two', twoStats], ['one', oneStat]] as const) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < iterations; i++) f();
        const c = process.cpuUsage(c0);
        times[way].push((c.user + c.system) / iterations);
      }
    }
    const one = median(times.one);
    const two = median(times.two);
    process.stdout.write(`${n} cgroups: listing + a stat each ${two.toFixed(1)} µs, the listing's own stat ${one.toFixed(1)} µs: ${(one / two).toFixed(2)}x\n`);
  } finally {
    for (let i = 0; i < n; i++) {
      try {
        rmdirSync(join(base, `c${i}`));
      } catch {
        // not made
      }
    }
    rmdirSync(base);
  }
}
