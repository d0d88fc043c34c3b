import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { cgroupPaths } from '../../src/samplers/cgroup/read.js';
import { TreeListing } from '../../src/samplers/cgroup/walk.js';
import { KernelHarness, node, num, type Values } from '../helpers/kernel.js';

// Real cgroups, made by this test under a parent of its own in the v1 cpu and
// cpuacct hierarchies of this machine (rezolus-test-<pid>), holding only
// processes it started, removed at the end, also on failure.

const CPU = '/sys/fs/cgroup/cpu';
const CPUACCT = '/sys/fs/cgroup/cpuacct';
const PARENT = `rezolus-test-${process.pid}`;
const HAVE_V1 = existsSync(join(CPU, 'cpu.cfs_quota_us')) && existsSync(join(CPUACCT, 'cpuacct.usage_user'));

/** Removes a cgroup tree bottom-up (cgroup directories go with rmdir only). */
function removeTree(dir: string): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(join(dir, e.name));
  try {
    rmdirSync(dir);
  } catch {
    // a task still inside: left for the next cleanup
  }
}

test.after.always(() => {
  removeTree(join(CPU, PARENT));
  removeTree(join(CPUACCT, PARENT));
});

const seriesOf = (v: Values, cgroup: string): string[] => [...v.keys()].filter((k) => k.includes(`cgroup=${cgroup},`) || k.endsWith(`cgroup=${cgroup}}`));

/**
 * Runs `node -e script` inside cgroup `rel` of the cpu and cpuacct hierarchies
 * and resolves with the CPU time used there (user + system, ns): a shell
 * moves itself in, runs node as its child, and reports its own and its
 * children's time (utime, stime, cutime, cstime of /proc/<shell>/stat, in
 * clock ticks of 10 ms); with `cpu`, node runs on that CPU only (taskset).
 */
function runIn(rel: string, script: string, cpu?: number): Promise<number> {
  const procs = (root: string): string => join(root, rel, 'cgroup.procs');
  const pin = cpu === undefined ? '' : `taskset -c ${cpu} `;
  const sh = `echo $$ > ${procs(CPU)} && echo $$ > ${procs(CPUACCT)} && ${pin}"$0" -e "$1" && cat /proc/$$/stat`;
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', sh, process.execPath, script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`exit ${code}: ${err}`));
      // fields after "(comm)": state is field 3; utime, stime 14, 15 (the shell); cutime, cstime 16, 17 (node)
      const fields = out.slice(out.lastIndexOf(')') + 2).trim().split(' ');
      resolve([10, 11, 12, 13].reduce((sum, i) => sum + Number(fields[i]), 0) * 10_000_000);
    });
  });
}

test.serial('a CPU-bound child in a cgroup with a 10 % quota: usage equals its CPU time, periods are throttled; removed, it leaves the output', async (t) => {
  if (!HAVE_V1) return t.pass('no v1 cpu/cpuacct hierarchies here');
  const rel = `${PARENT}/busy`;
  for (const root of [CPU, CPUACCT]) mkdirSync(join(root, rel), { recursive: true });
  writeFileSync(join(CPU, rel, 'cpu.cfs_period_us'), '100000');
  writeFileSync(join(CPU, rel, 'cpu.cfs_quota_us'), '10000');
  const k = await KernelHarness.start(['cgroup_resources', 'scheduler_runqueue'], { cgroups: { maxCgroups: 1024, maxDepth: 6 } });
  try {
    const name = `/${rel}`;
    const a = await k.read('cgroup_resources');
    const ra = await k.read('scheduler_runqueue');
    t.is(num(a.get(`cgroup_cpu_bandwidth_quota{cgroup=${name}}`)), 10_000_000, '10 ms per period, in ns');
    t.is(num(a.get(`cgroup_cpu_bandwidth_period_duration{cgroup=${name}}`)), 100_000_000);
    t.is(num(a.get(`cgroup_id{cgroup=${name}}`)), statSync(join(CPU, rel)).ino, 'the id is the inode in the cpu hierarchy');
    const childNs = await runIn(rel, 'const end = Date.now() + 3000; while (Date.now() < end);');
    const b = await k.read('cgroup_resources');
    const rb = await k.read('scheduler_runqueue');
    const usage = (key: string): number => num(b.get(key)) - num(a.get(key));
    const cgroupNs = usage(`cgroup_cpu_usage{cgroup=${name},state=user}`) + usage(`cgroup_cpu_usage{cgroup=${name},state=system}`);
    t.log(`child CPU ${(childNs / 1e6).toFixed(0)} ms, cgroup usage ${(cgroupNs / 1e6).toFixed(0)} ms, throttled periods +${usage(`cgroup_cpu_bandwidth_throttled_periods{cgroup=${name}}`)}`);
    // within 20 %, and the shell's own few ms and the 10 ms resolution of its children's time
    t.true(Math.abs(cgroupNs - childNs) <= 0.2 * childNs + 20e6, `cgroup ${cgroupNs} ns against the child's ${childNs} ns`);
    t.true(childNs < 0.3 * 3e9, 'the quota held the child near 10 % of a CPU');
    t.true(usage(`cgroup_cpu_bandwidth_throttled_periods{cgroup=${name}}`) >= 5);
    const throttledNs = usage(`cgroup_cpu_bandwidth_throttled_time{cgroup=${name}}`);
    t.true(throttledNs > 0);
    // a throttled task stays runnable: BPF sees the throttled time as runqueue wait of its cgroup
    const waitKey = `cgroup_scheduler_runqueue_wait{cgroup=${name}}`;
    const waitNs = num(rb.get(waitKey)) - (ra.has(waitKey) ? num(ra.get(waitKey)) : 0);
    t.log(`runqueue wait of the cgroup ${(waitNs / 1e6).toFixed(0)} ms, throttled ${(throttledNs / 1e6).toFixed(0)} ms`);
    t.true(waitNs >= 0.5 * throttledNs, 'the cgroup waited at least half its throttled time');

    for (const root of [CPU, CPUACCT]) rmdirSync(join(root, rel));
    const c = await k.read('cgroup_resources');
    t.deepEqual(seriesOf(c, name), [], 'a removed cgroup is no longer published');
    t.true(seriesOf(c, `/${PARENT}`).length > 0, 'its parent still is');
  } finally {
    await k.stop();
  }
});

test.serial('a cgroup removed and made again under its name between refreshes: its CPU usage is the new one\'s, not the old one\'s', async (t) => {
  if (!HAVE_V1) return t.pass('no v1 cpu/cpuacct hierarchies here');
  const rel = `${PARENT}/again`;
  for (const root of [CPU, CPUACCT]) mkdirSync(join(root, rel), { recursive: true });
  const k = await KernelHarness.start(['cgroup_resources'], { cgroups: { maxCgroups: 1024, maxDepth: 6 } });
  try {
    const name = `/${rel}`;
    const cpu = (v: Values): number => num(v.get(`cgroup_cpu_usage{cgroup=${name},state=user}`)) + num(v.get(`cgroup_cpu_usage{cgroup=${name},state=system}`));
    // 500 ms of its own CPU time, not of the clock: on a busy machine it gets less than the clock's
    await runIn(rel, 'const spent = () => { const u = process.cpuUsage(); return u.user + u.system; }; while (spent() < 500_000);');
    const old = cpu(await k.read('cgroup_resources'));
    t.true(old >= 300e6, `the first cgroup used ${old} ns`);
    for (const root of [CPU, CPUACCT]) rmdirSync(join(root, rel));
    for (const root of [CPU, CPUACCT]) mkdirSync(join(root, rel));
    const fresh = cpu(await k.read('cgroup_resources'));
    const own = Number(readFileSync(join(CPUACCT, rel, 'cpuacct.usage'), 'utf8'));
    t.log(`old ${(old / 1e6).toFixed(0)} ms; made again: published ${(fresh / 1e6).toFixed(0)} ms, its cpuacct.usage ${(own / 1e6).toFixed(0)} ms`);
    t.true(fresh <= own, 'no CPU time of the removed cgroup');
  } finally {
    await k.stop();
  }
});

test.serial('a v1 cgroup renamed and its name made again between refreshes: each name shows its own quota, not the kept files of the other', async (t) => {
  if (!HAVE_V1) return t.pass('no v1 cpu/cpuacct hierarchies here');
  const a = `${PARENT}/ren-a`;
  const b = `${PARENT}/ren-b`;
  mkdirSync(join(CPU, a), { recursive: true });
  writeFileSync(join(CPU, a, 'cpu.cfs_quota_us'), '50000');
  const k = await KernelHarness.start(['cgroup_resources'], { cgroups: { maxCgroups: 1024, maxDepth: 6 } });
  try {
    const quota = (v: Values, rel: string): number => num(v.get(`cgroup_cpu_bandwidth_quota{cgroup=/${rel}}`));
    t.is(quota(await k.read('cgroup_resources'), a), 50_000_000);
    renameSync(join(CPU, a), join(CPU, b));
    mkdirSync(join(CPU, a));
    writeFileSync(join(CPU, a, 'cpu.cfs_quota_us'), '20000');
    const after = await k.read('cgroup_resources');
    t.is(quota(after, a), 20_000_000, 'the new cgroup under the old name');
    t.is(quota(after, b), 50_000_000, 'the renamed one under its new name');
  } finally {
    await k.stop();
  }
});

test.serial('cgroups made and removed under new names: the paths of those gone are forgotten, not kept until a cap', async (t) => {
  if (!HAVE_V1) return t.pass('no v1 cpu/cpuacct hierarchies here');
  const base = join(CPU, PARENT, 'churn');
  const baseAcct = join(CPUACCT, PARENT, 'churn');
  mkdirSync(base, { recursive: true });
  mkdirSync(baseAcct, { recursive: true });
  const listing = new TreeListing(CPU, 6, true);
  const k = await KernelHarness.start(['cgroup_resources'], { cgroups: { maxCgroups: 1024, maxDepth: 6 } });
  try {
    /** the 40 cgroups of round `r`, the round before's removed */
    const round = (r: number): void => {
      for (let i = 0; i < 40; i++) for (const b of [base, baseAcct]) mkdirSync(join(b, `r${r}-${i}`));
      if (r > 0) for (let i = 0; i < 40; i++) for (const b of [base, baseAcct]) rmdirSync(join(b, `r${r - 1}-${i}`));
    };
    round(0);
    listing.list();
    listing.list();
    await k.read('cgroup_resources');
    const first = { kept: cgroupPaths.size, listed: listing.pathsKept };
    for (let r = 1; r <= 10; r++) {
      round(r);
      // twice: the listing keeps the paths it stats until the listing after
      for (let i = 0; i < 2; i++) listing.list();
      await k.read('cgroup_resources');
      await k.read('cgroup_resources');
    }
    const last = { kept: cgroupPaths.size, listed: listing.pathsKept };
    t.log(`paths kept after 40 cgroups: ${first.kept} (reader), ${first.listed} (listing); after 400 came and went: ${last.kept}, ${last.listed}`);
    t.true(first.kept >= 80, `${first.kept}: the reader keeps the paths of the cgroups it reads`);
    t.true(last.kept <= first.kept + 10, `reader: ${last.kept} paths kept against ${first.kept} for the same number of live cgroups`);
    t.true(last.listed <= 2 * first.listed + 5, `listing: ${last.listed} paths kept against ${first.listed} (it keeps those of the listing before)`);
  } finally {
    await k.stop();
    removeTree(base);
    removeTree(baseAcct);
  }
});

test.serial('1100 cgroups with max_cgroups 50: 50 cgroups of their own plus other, the rest counted as folded, and memory stays flat', async (t) => {
  if (!HAVE_V1) return t.pass('no v1 cpu/cpuacct hierarchies here');
  const base = join(CPU, PARENT, 'many');
  mkdirSync(base, { recursive: true });
  for (let i = 0; i < 1100; i++) mkdirSync(join(base, `c${String(i).padStart(4, '0')}`));
  const k = await KernelHarness.start(['cgroup_resources'], { cgroups: { maxCgroups: 50, maxDepth: 6 } });
  try {
    const cgroups = (v: Values): Set<string> => new Set([...v.keys()].map((key) => /cgroup=([^,}]+)/.exec(key)?.[1]).filter((c): c is string => c !== undefined));
    const first = await k.read('cgroup_resources');
    const seen = cgroups(first);
    t.is(seen.size, 51, '50 cgroups and other');
    t.true(seen.has('other'));
    const folded = num(first.get('cgroup_folded'));
    t.true(folded >= 1100 - 50, `${folded} folded`);
    for (let i = 0; i < 10; i++) await k.read('cgroup_resources');
    global.gc?.();
    const rss0 = process.memoryUsage().rss;
    for (let i = 0; i < 30; i++) await k.read('cgroup_resources');
    const grew = (process.memoryUsage().rss - rss0) / 2 ** 20;
    t.log(`${folded} folded; RSS ${grew.toFixed(1)} MiB after 30 more refreshes`);
    t.true(grew < 20, `RSS grew ${grew.toFixed(1)} MiB`);
    t.deepEqual(cgroups(await k.read('cgroup_resources')), seen, 'the same cgroups keep their places');
  } finally {
    await k.stop();
  }
});

test.serial('a child making N getppid calls in a cgroup, on any CPU: cgroup_syscall{op=query} of that cgroup rises by at least N', async (t) => {
  if (!HAVE_V1) return t.pass('no v1 cpu/cpuacct hierarchies here');
  const rel = `${PARENT}/calls`;
  for (const root of [CPU, CPUACCT]) mkdirSync(join(root, rel), { recursive: true });
  const k = await KernelHarness.start(['syscall_counts'], { cgroups: { maxCgroups: 1024, maxDepth: 6 } });
  try {
    const N = 100_000;
    const key = `cgroup_syscall{cgroup=/${rel},op=query}`;
    const a = await k.read('syscall_counts');
    const before = a.has(key) ? num(a.get(key)) : 0;
    await runIn(rel, `let s = 0; for (let i = 0; i < ${N}; i++) s += process.ppid; if (s === 0) process.exit(1);`);
    const b = await k.read('syscall_counts');
    const rose = num(b.get(key)) - before;
    t.log(`${rose} query syscalls counted for /${rel}`);
    t.true(rose >= N);
    t.true(rose < N + 5000, 'and not the whole host\'s');

    // whichever CPU makes them (each adds to its own copy of the slot, the reader sums the copies)
    for (const cpu of [...new Set([0, cpus().length - 1])]) {
      const from = num((await k.read('syscall_counts')).get(key));
      await runIn(rel, `let s = 0; for (let i = 0; i < ${N}; i++) s += process.ppid; if (s === 0) process.exit(1);`, cpu);
      const pinned = num((await k.read('syscall_counts')).get(key)) - from;
      t.log(`CPU ${cpu}: ${pinned} query syscalls counted for /${rel}`);
      t.true(pinned >= N && pinned < N + 5000, `CPU ${cpu}: ${pinned}`);
    }

    // a child in no cgroup of its own counts for the root, with sched_autogroup on as here
    const rootKey = 'cgroup_syscall{cgroup=/,op=query}';
    const rootBefore = num(b.get(rootKey));
    await node(`let s = 0; for (let i = 0; i < ${N}; i++) s += process.ppid; if (s === 0) process.exit(1);`);
    const c = await k.read('syscall_counts');
    t.log(`${num(c.get(rootKey)) - rootBefore} query syscalls counted for / (autogroup ${readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim()})`);
    t.true(num(c.get(rootKey)) - rootBefore >= N);

    // removed, its counts stop being published once the hierarchy is listed again (each second)
    for (const root of [CPU, CPUACCT]) rmdirSync(join(root, rel));
    await new Promise((r) => setTimeout(r, 1100));
    t.false((await k.read('syscall_counts')).has(key), 'a removed cgroup is no longer published');
  } finally {
    await k.stop();
  }
});

test.serial('a shell re-pinned between CPUs N times in a cgroup: cgroup_cpu_migrations of that cgroup rises by at least N', async (t) => {
  if (!HAVE_V1) return t.pass('no v1 cpu/cpuacct hierarchies here');
  const rel = `${PARENT}/hops`;
  for (const root of [CPU, CPUACCT]) mkdirSync(join(root, rel), { recursive: true });
  const k = await KernelHarness.start(['cpu_migrations'], { cgroups: { maxCgroups: 1024, maxDepth: 6 } });
  try {
    const N = 50;
    const key = `cgroup_cpu_migrations{cgroup=/${rel}}`;
    const a = await k.read('cpu_migrations');
    const procs = (root: string): string => join(root, rel, 'cgroup.procs');
    await new Promise<void>((resolve, reject) => {
      const sh = `echo $$ > ${procs(CPU)} && echo $$ > ${procs(CPUACCT)} && for i in $(seq ${N}); do taskset -cp 1 $$ >/dev/null; taskset -cp 0 $$ >/dev/null; done`;
      const child = spawn('taskset', ['-c', '0', 'sh', '-c', sh], { stdio: 'ignore' });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
    });
    const b = await k.read('cpu_migrations');
    const rose = num(b.get(key)) - (a.has(key) ? num(a.get(key)) : 0);
    t.log(`${rose} migrations counted for /${rel} after ${2 * N} re-pins`);
    t.true(rose >= N);
  } finally {
    await k.stop();
  }
});
