import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BpfObject } from '../../src/native/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadedObjects } from '../../src/samplers/kernel/loaded.js';
import { H2_BUCKETS } from '../../src/metrics/histogram.js';
import { SYSCALL_CLASSES } from '../../src/samplers/syscall/classes.js';
import { acquireSyscallBpf } from '../../src/samplers/syscall/shared/hub.js';
import { PENDING_SLOTS } from '../../src/samplers/syscall/shared/maps.js';
import { count, KernelHarness, node, quantile, run, sumOf, window } from '../helpers/kernel.js';

// syscall_counts and syscall_latency share one BPF object (bpf/syscall/shared.bpf.c):
// one sys_enter for both, sys_exit only while latency is on. Each sampler alone runs
// only what it needs and leaves the other's maps untouched; together they count and
// time the same syscalls; one leaving does not disturb the other.
// Serial: the objects are shared by every Agent of this process.

const N = 100_000;
// process.ppid calls getppid(2) on every read
const GETPPID = `let s = 0; for (let i = 0; i < ${N}; i++) s += process.ppid; if (s === 0) process.exit(1);`;

/** The shared object as rezolus_bpf sees it: the name it is registered under and its attached programs. */
function registered(): { name: string; attached: string[]; object: BpfObject } | undefined {
  const found = loadedObjects().find(([name]) => name.includes('syscall_'));
  if (found === undefined) return undefined;
  const [name, object] = found;
  return { name, object, attached: object.programs().filter((p) => p.attached).map((p) => p.name).sort() };
}

/** Sum of every u64 of an mmapable map of the object. */
function mapSum(object: BpfObject, map: string): bigint {
  let sum = 0n;
  for (const v of new BigUint64Array(object.mmap(map))) sum += v;
  return sum;
}

test.serial('syscall_counts alone: sys_enter only, counts every call, never touches the latency histograms', async (t) => {
  const k = await KernelHarness.start(['syscall_counts']);
  try {
    t.deepEqual(k.status('syscall_counts').status, { state: 'active' });
    const r = registered();
    t.is(r?.name, 'syscall_counts');
    t.deepEqual(r?.attached, ['sys_enter']);
    const a = await k.read('syscall_counts');
    await node(GETPPID);
    const b = await k.read('syscall_counts');
    const counted = sumOf(b, 'syscall', { op: 'query' }) - sumOf(a, 'syscall', { op: 'query' });
    t.log(`${counted} query syscalls counted for ${N} getppid calls`);
    t.true(counted >= N);
    t.is(mapSum(r!.object, 'latency'), 0n, 'no latency recorded while latency is off');
  } finally {
    await k.stop();
  }
  t.is(registered(), undefined, 'closed with its last sampler');
});

test.serial('syscall_latency alone: sys_enter and sys_exit, times every call, counts nothing', async (t) => {
  const k = await KernelHarness.start(['syscall_latency']);
  try {
    t.deepEqual(k.status('syscall_latency').status, { state: 'active' });
    const r = registered();
    t.is(r?.name, 'syscall_latency');
    t.deepEqual(r?.attached, ['sys_enter', 'sys_exit']);
    const a = await k.read('syscall_latency');
    await node(GETPPID);
    const b = await k.read('syscall_latency');
    const timed = count(window(a.get('syscall_latency{op=query}'), b.get('syscall_latency{op=query}')));
    t.log(`${timed} query syscalls timed for ${N} getppid calls`);
    t.true(timed >= N);
    t.is(mapSum(r!.object, 'counters'), 0n, 'no per-CPU counts while counts are off');
    t.is(mapSum(r!.object, 'cgroup_syscall'), 0n, 'no per-cgroup counts while counts are off');
  } finally {
    await k.stop();
  }
});

/** Query syscalls as the object has them now: counted (every CPU's bank) and timed (the class's histogram), read back to back. */
function queryNow(object: BpfObject): { counted: bigint; timed: bigint } {
  const q = SYSCALL_CLASSES.indexOf('query');
  const bank = new BigUint64Array(object.mmap('counters'));
  const hist = new BigUint64Array(object.mmap('latency'));
  let counted = 0n;
  for (let i = q; i < bank.length; i += 16) counted += bank[i]!;
  let timed = 0n;
  for (let i = q * H2_BUCKETS; i < (q + 1) * H2_BUCKETS; i++) timed += hist[i]!;
  return { counted, timed };
}

test.serial('both: one object, counts and latency agree on the calls of a child', async (t) => {
  const k = await KernelHarness.start(['syscall_counts', 'syscall_latency']);
  try {
    const r = registered();
    t.is(r?.name, 'syscall_counts+syscall_latency');
    t.deepEqual(r?.attached, ['sys_enter', 'sys_exit']);
    t.is(loadedObjects().filter(([name]) => name.includes('syscall_')).length, 1, 'one object for both');
    const ca = await k.read('syscall_counts');
    const la = await k.read('syscall_latency');
    const a = queryNow(r!.object);
    await node(GETPPID);
    const b = queryNow(r!.object);
    const cb = await k.read('syscall_counts');
    const lb = await k.read('syscall_latency');
    t.true(sumOf(cb, 'syscall', { op: 'query' }) - sumOf(ca, 'syscall', { op: 'query' }) >= N, 'published counts');
    t.true(count(window(la.get('syscall_latency{op=query}'), lb.get('syscall_latency{op=query}'))) >= N, 'published latency');
    const counted = Number(b.counted - a.counted);
    const timed = Number(b.timed - a.timed);
    t.log(`query syscalls: ${counted} counted, ${timed} timed for ${N} getppid calls`);
    t.true(counted >= N);
    // counted at entry, timed at exit, read microseconds apart: only syscalls in flight differ
    t.true(Math.abs(counted - timed) <= 100, `counted ${counted} and timed ${timed}`);
  } finally {
    await k.stop();
  }
});

test.serial('an agent with latency disabled sizes no per-thread stamps; one enabling latency later gets an object of its own', async (t) => {
  const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim());
  const entries = (object: BpfObject, map: string): number | undefined => object.maps().find((m) => m.name === map)?.maxEntries;
  const counts = await KernelHarness.start(['syscall_counts']);
  try {
    const c = registered();
    t.is(entries(c!.object, 'started'), 1, 'stamps: one entry, not pid_max');
    t.is(entries(c!.object, 'cgroup_syscall'), 4096 * 8 * 16);
    const latency = await KernelHarness.start(['syscall_latency']);
    try {
      const objects = loadedObjects().filter(([name]) => name.includes('syscall_'));
      t.deepEqual(objects.map(([name]) => name).sort(), ['syscall_counts', 'syscall_latency']);
      const l = objects.find(([name]) => name === 'syscall_latency')![1];
      t.is(entries(l, 'started'), pidMax);
      t.is(entries(l, 'cgroup_syscall'), 1, 'per-cgroup counters: one entry');
      const la = await latency.read('syscall_latency');
      const ca = await counts.read('syscall_counts');
      await node(GETPPID);
      const lb = await latency.read('syscall_latency');
      const cb = await counts.read('syscall_counts');
      t.true(count(window(la.get('syscall_latency{op=query}'), lb.get('syscall_latency{op=query}'))) >= N);
      t.true(sumOf(cb, 'syscall', { op: 'query' }) - sumOf(ca, 'syscall', { op: 'query' }) >= N);
    } finally {
      await latency.stop();
    }
  } finally {
    await counts.stop();
  }
});

const ctx = { procRoot: '/proc', sysRoot: '/sys', log: silentLogger() };
/** Class `read` of src/samplers/syscall/classes.ts */
const READ = SYSCALL_CLASSES.indexOf('read');

test.serial('latency joining and leaving a running syscall_counts: sys_exit comes and goes, the counts go on', async (t) => {
  // without an agent to ask, the object is sized for both roles
  const counts = acquireSyscallBpf('syscall_counts', ctx);
  try {
    t.deepEqual(registered()?.attached, ['sys_enter']);
    const total = (): bigint => {
      const bank = counts.bpf.counters('counters');
      let sum = 0n;
      for (let k = 0; k < SYSCALL_CLASSES.length; k++) sum += BigInt(bank.total(k));
      return sum;
    };
    const latency = acquireSyscallBpf('syscall_latency', ctx);
    t.is(latency.bpf, counts.bpf, 'the same object');
    t.is(registered()?.name, 'syscall_counts+syscall_latency');
    t.deepEqual(registered()?.attached, ['sys_enter', 'sys_exit']);
    const before = mapSum(latency.bpf.object, 'latency');
    await node(GETPPID);
    t.true(mapSum(latency.bpf.object, 'latency') - before >= BigInt(N), 'timed while joined');
    latency.release();
    t.is(registered()?.name, 'syscall_counts');
    t.deepEqual(registered()?.attached, ['sys_enter']);
    const timed = mapSum(counts.bpf.object, 'latency');
    const a = total();
    await node(GETPPID);
    t.true(total() - a >= BigInt(N), 'counts go on');
    t.is(mapSum(counts.bpf.object, 'latency'), timed, 'nothing timed once latency left');
  } finally {
    counts.release();
  }
  t.is(registered(), undefined);
});

/** Waits until `pid` is blocked in read(2) (syscall 0 on x86_64, the first field of /proc/<pid>/syscall). */
async function blockedInRead(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if (readFileSync(`/proc/${pid}/syscall`, 'latin1').split(' ')[0] === '0') return;
    } catch {
      // not there yet
    }
    await sleep(25);
  }
  throw new Error(`pid ${pid} never blocked in read`);
}

test.serial('a stamp left while latency was off is not taken when it comes back', async (t) => {
  // A child blocks in read(2) while latency is on (stamped), returns while latency
  // is off (no sys_exit: the stamp stays) and blocks in read again (no stamp); then
  // latency comes back. Without the epoch check its next sys_exit would take the old
  // stamp and time a read that began before latency came back.
  const counts = acquireSyscallBpf('syscall_counts', ctx); // keeps the object (and its stamps) alive
  const child = spawn('perl', ['-e', 'sysread(STDIN, $b, 1) for 1 .. 2'], { stdio: ['pipe', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    let latency = acquireSyscallBpf('syscall_latency', ctx);
    await blockedInRead(child.pid as number);
    latency.release();
    child.stdin.write('x');
    await sleep(100);
    await blockedInRead(child.pid as number);
    await sleep(3000);
    const began = performance.now();
    latency = acquireSyscallBpf('syscall_latency', ctx);
    try {
      const reads = latency.bpf.histogram('latency', READ);
      const a = reads.read();
      child.stdin.write('y');
      t.is(await exited, 0);
      const b = reads.read();
      const bound = (performance.now() - began) * 1e6;
      const timed = window(a, b);
      const longest = quantile(timed, 1);
      t.log(`${count(timed)} reads timed, the longest <= ${(longest / 1e6).toFixed(1)} ms; latency back for ${(bound / 1e6).toFixed(0)} ms`);
      // every read timed began after latency came back: none can be longer (h2 buckets are within 1/8)
      t.true(longest <= bound * 1.25, `a read of ${(longest / 1e6).toFixed(0)} ms was timed in ${(bound / 1e6).toFixed(0)} ms`);
    } finally {
      latency.release();
    }
  } finally {
    child.kill('SIGKILL');
    counts.release();
  }
});

/** Stamps standing as the object counts them: the sum of its `pending` slots (a slot per kernel stack). */
function pendingSum(object: BpfObject): number {
  const key = Buffer.alloc(4);
  let sum = 0;
  for (let slot = 0; slot < PENDING_SLOTS; slot++) {
    key.writeUInt32LE(slot);
    sum += object.lookup('pending', key)?.readUInt32LE(0) ?? 0;
  }
  return sum;
}

/** Stamps of thread ids that are gone (their threads died stamped): a full scan of `started`. */
function deadStamps(object: BpfObject): number {
  const pidMax = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1'));
  const key = Buffer.alloc(4);
  let dead = 0;
  for (let tid = 1; tid < pidMax; tid++) {
    key.writeUInt32LE(tid);
    const stamp = object.lookup('started', key);
    if (stamp === null || stamp.readBigUInt64LE(0) === 0n) continue;
    if (!existsSync(`/proc/${tid}`)) dead++;
  }
  return dead;
}

/** The thread ids alive now. */
function liveThreads(): number[] {
  const tids: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      for (const tid of readdirSync(`/proc/${pid}/task`)) tids.push(Number(tid));
    } catch {
      // the process is gone
    }
  }
  return tids;
}

/** The stamps of live threads standing now, and the stamps counted just before and after they were read. */
function liveStampsAndCounted(object: BpfObject): { standing: number; before: number; after: number } {
  const tids = liveThreads();
  const key = Buffer.alloc(4);
  const before = pendingSum(object);
  let standing = 0;
  for (const tid of tids) {
    key.writeUInt32LE(tid);
    const stamp = object.lookup('started', key);
    if (stamp !== null && stamp.readBigUInt64LE(0) !== 0n) standing++;
  }
  return { standing, before, after: pendingSum(object) };
}

/** ia32exit's exit code when this kernel does not serve 32-bit syscalls */
const NO_IA32 = 3;

/** C programs of the churn below, compiled once per run: each makes `n` children and exits 0 when all did as told. */
const CHURN = {
  // each child exits by a 32-bit syscall (int 0x80, eax 1: exit), whose number is not the table's
  ia32exit: `#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  for (int i = 0; i < n; i++) {
    pid_t p = fork();
    if (p == 0) { __asm__ volatile("int $0x80" :: "a"(1), "b"(0)); _exit(1); }
    int st;
    if (waitpid(p, &st, 0) != p) return 2;
    /* a kernel without ia32 emulation (or with it turned off) faults on int 0x80 */
    if (i == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) return ${NO_IA32};
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return 2;
  }
  return 0;
}
`,
  // in each child a second thread execs /bin/true while the leader waits for it
  threadexec: `#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static char *args[] = {"/bin/true", 0};
static char *env[] = {0};
static void *run(void *unused) { execve(args[0], args, env); _exit(3); }
int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  for (int i = 0; i < n; i++) {
    pid_t p = fork();
    if (p == 0) { pthread_t t; pthread_create(&t, 0, run, 0); pthread_join(t, 0); _exit(4); }
    int st;
    if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 2;
  }
  return 0;
}
`,
};

/** Runs a command to completion: its exit code (null when a signal ended it). */
function exitCode(cmd: string, args: readonly string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', resolve);
  });
}

function compileChurn(dir: string): Record<keyof typeof CHURN, string> {
  const out = {} as Record<keyof typeof CHURN, string>;
  for (const [name, source] of Object.entries(CHURN) as [keyof typeof CHURN, string][]) {
    const c = join(dir, `${name}.c`);
    writeFileSync(c, source);
    execFileSync('cc', ['-O1', '-pthread', '-o', join(dir, name), c]);
    out[name] = join(dir, name);
  }
  return out;
}

test.serial('threads and processes that come and go leave no stamp behind, the stamps counted are the stamps standing, and a blocked read is still timed', async (t) => {
  // sys_exit looks at a thread's stamp only when its stack's `pending` slot counts one.
  // A thread that dies stamped would leave a slot counted for good, so what would is not
  // stamped: exit and exit_group, 32-bit syscalls, an execve of a thread not its process's
  // leader. A count dropped too early would lose the long syscalls.
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-churn-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const bin = compileChurn(dir);
  const latency = acquireSyscallBpf('syscall_latency', ctx);
  try {
    const object = latency.bpf.object;
    await run('sh', ['-c', 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done']);
    await node(`const { Worker } = require('node:worker_threads');
(async () => { for (let i = 0; i < 60; i++) await new Promise((r) => new Worker('', { eval: true }).once('exit', r)); })();`);
    const ia32 = await exitCode(bin.ia32exit, ['200']);
    if (ia32 === NO_IA32) t.log('this kernel faults on int 0x80 (no ia32 emulation): no 32-bit exits in the churn');
    else t.is(ia32, 0, 'ia32exit: every child exited 0 by a 32-bit exit');
    await run(bin.threadexec, ['200']);
    // Stamps of threads that are gone stay standing (and counted) for good; those of live
    // threads come and go as they enter and leave syscalls, so the two sides are read
    // close together, a few times: a count without its stamp would show every time.
    const dead = deadStamps(object);
    let best = { standing: 0, before: 0, after: 0, gap: Number.POSITIVE_INFINITY };
    for (let i = 0; i < 5 && best.gap > 2; i++) {
      const r = liveStampsAndCounted(object);
      const standing = r.standing + dead;
      const gap = Math.max(Math.abs(r.before - standing), Math.abs(r.after - standing));
      if (gap < best.gap) best = { ...r, standing, gap };
    }
    t.log(
      `after 300 processes, 60 threads, ${ia32 === 0 ? '200 exits by 32-bit syscall, ' : ''}200 execs by a second thread: ${best.standing} stamps standing (${dead} of threads gone), ${best.before}-${best.after} counted`,
    );
    t.true(dead < 10, `${dead} stamps left by threads that are gone`);
    t.true(best.gap <= 8, `${best.before}-${best.after} counted against ${best.standing} standing`);

    // a read that blocks: counted while it blocks, timed when it returns
    const reads = latency.bpf.histogram('latency', READ);
    const a = reads.read();
    const child = spawn('perl', ['-e', 'sysread(STDIN, $b, 1)'], { stdio: ['pipe', 'ignore', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    await blockedInRead(child.pid as number);
    await sleep(300);
    child.stdin.write('x');
    t.is(await exited, 0);
    const longest = quantile(window(a, reads.read()), 1);
    t.log(`the longest read timed: ${(longest / 1e6).toFixed(0)} ms`);
    t.true(longest >= 250e6, 'the blocked read was timed');
  } finally {
    latency.release();
  }
});
