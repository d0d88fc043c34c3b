import test from 'ava';
import { loadedObjects } from '../../src/samplers/kernel/loaded.js';
import { SYSCALL_CLASSES } from '../../src/samplers/syscall/classes.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { count, hist, KernelHarness, node, num, quantile, sumOf, window, type Values } from '../helpers/kernel.js';

// syscall_latency above [kernel] syscall_timing_budget: a class running more syscalls a
// second per CPU than the budget is timed 1 in 2^k, each timed one counted 2^k times
// (bpf/syscall/shared.bpf.c, src/samplers/syscall/shared/sampling.ts). A budget of 20 000 a
// second per CPU makes a child's getppid burst (hundreds of thousands a second) sampled, while
// other processes' syscalls on a busy machine (a few thousand a second per class) stay timed.

const N = 200_000;
// process.ppid calls getppid(2) on every read
const GETPPID = `let s = 0; for (let i = 0; i < ${N}; i++) s += process.ppid; if (s === 0) process.exit(1);`;
const QUERY = SYSCALL_CLASSES.indexOf('query');

/** sample_shift[] of the loaded object, read back from its .bss (u32 enabled, u32 epoch, u8 per class). */
function shifts(): number[] {
  const object = loadedObjects().find(([name]) => name.includes('syscall_latency'))?.[1];
  if (object === undefined) throw new Error('no syscall_latency object loaded');
  const bss = object.maps().find((m) => m.name.endsWith('.bss'))?.name;
  const value = bss === undefined ? null : object.lookup(bss, Buffer.alloc(4));
  if (value === null) throw new Error('no .bss');
  return [...value.subarray(8, 8 + SYSCALL_CLASSES.length)];
}

let k: KernelHarness;
let lastRead = 0;
/** A read of syscall_latency at least 300 ms after the last (the plan takes rates over windows of 250 ms or more); every read refreshes both samplers. */
async function readLatency(): Promise<Values> {
  const wait = lastRead + 300 - performance.now();
  if (wait > 0) await sleep(wait);
  const v = await k.read('syscall_latency');
  lastRead = performance.now();
  return v;
}
test.before(async () => {
  k = await KernelHarness.start(['syscall_counts', 'syscall_latency'], { syscallTimingBudget: 20_000 });
});
test.after.always(async () => {
  await k?.stop();
});

test.serial('a burst above the budget is sampled next: fewer timed, each counted 2^k times, percentiles as before', async (t) => {
  const a = await readLatency();
  const ca = await k.read('syscall_counts', false);
  await node(GETPPID);
  // this read's rates choose the shifts of the next interval (and every read refreshes both samplers: one read a tick)
  const b = await readLatency();
  const cb = await k.read('syscall_counts', false);
  t.is(num(b.get('syscall_latency_timed{op=query}')), 1, 'the first burst was timed one by one');
  const shift = shifts()[QUERY] as number;
  t.true(shift >= 3, `query's shift after ~${N} getppid calls in well under a second: ${shift}`);

  await node(GETPPID);
  const c = await readLatency();
  const cc = await k.read('syscall_counts', false);
  t.is(num(c.get('syscall_latency_timed{op=query}')), 1 / 2 ** shift, 'the frame says what share of the class was timed');

  const exact = window(a.get('syscall_latency{op=query}'), b.get('syscall_latency{op=query}'));
  const sampled = window(b.get('syscall_latency{op=query}'), c.get('syscall_latency{op=query}'));
  const countedA = sumOf(cb, 'syscall', { op: 'query' }) - sumOf(ca, 'syscall', { op: 'query' });
  const countedB = sumOf(cc, 'syscall', { op: 'query' }) - sumOf(cb, 'syscall', { op: 'query' });
  t.log(`query: exact window ${count(exact)} timed of ${countedA} counted; sampled at 1/${2 ** shift}: ${count(sampled)} (weighted) of ${countedB}`);
  // the two windows are read a moment apart, and the query class is the machine's (getpid and the like
  // of every process): a few syscalls may fall between; sampled at 1/2 or doubled, thousands would differ
  t.true(Math.abs(count(exact) - countedA) <= 10, `below the budget every syscall is timed and counted once: ${count(exact)} timed, ${countedA} counted`);
  // weighted, the sampled histogram estimates the class's syscalls (about N / 2^shift timed: a few % of noise)
  const ratio = count(sampled) / countedB;
  t.true(ratio > 0.8 && ratio < 1.25, `weighted count / counted = ${ratio.toFixed(3)}`);
  // the kernel timed 1 in 2^k and added 2^k: bucket counts are multiples of 2^k, bar a syscall in flight at a read
  const step = 2 ** shift;
  const off = hist(sampled).count.filter((n) => n % step !== 0).length;
  t.true(off <= 2, `${off} of ${hist(sampled).count.length} buckets hold counts that are not multiples of ${step}`);
  // the same work, timed whole and sampled: the same median bucket or a neighbour (1/8 of a power of two apart)
  const p50a = quantile(exact, 0.5);
  const p50b = quantile(sampled, 0.5);
  t.log(`query p50: ${p50a} ns timed whole, ${p50b} ns sampled`);
  t.true(p50b >= p50a / 2 && p50b <= p50a * 2, `p50 ${p50a} → ${p50b} ns`);
  // a class far below the budget is still timed one by one
  t.is(num(c.get('syscall_latency_timed{op=sleep}')), 1);
  t.is(shifts()[SYSCALL_CLASSES.indexOf('sleep')], 0);
});

test.serial('three quiet windows bring the class back to being timed one by one', async (t) => {
  await node(GETPPID);
  await readLatency();
  t.true((shifts()[QUERY] as number) > 0);
  // windows with only this process's own getppid calls (none): the burst is held for three windows, then let go
  await readLatency();
  await readLatency();
  t.true((shifts()[QUERY] as number) > 0, 'held while the burst is one of the last three windows');
  await readLatency();
  // other classes may stay sampled on a busy machine (other processes' syscalls count too): query is this test's
  t.is(shifts()[QUERY], 0);
  const a = await readLatency();
  await node(`for (let i = 0; i < 1000; i++) process.ppid;`);
  const b = await readLatency();
  const timed = count(window(a.get('syscall_latency{op=query}'), b.get('syscall_latency{op=query}')));
  t.true(timed >= 1000, `${timed} query syscalls timed for 1000 getppid calls`);
});

test.serial('two sampled classes in strict turns on one thread are both estimated: the draw does not follow the pattern', async (t) => {
  // getppid (query) and fstat (filesystem) one after the other: each class sees every other draw of the thread's generator
  const TURNS = `const fs = require('node:fs'); let s = 0; for (let i = 0; i < ${N / 2}; i++) { s += process.ppid; s += fs.fstatSync(0).mode; } if (s === 0) process.exit(1);`;
  await node(TURNS);
  const a = await readLatency();
  const ca = await k.read('syscall_counts', false);
  const FS = SYSCALL_CLASSES.indexOf('filesystem');
  t.true((shifts()[QUERY] as number) >= 2 && (shifts()[FS] as number) >= 2, `shifts: ${shifts().join(' ')}`);
  await node(TURNS);
  const b = await readLatency();
  const cb = await k.read('syscall_counts', false);
  for (const op of ['query', 'filesystem']) {
    const weighted = count(window(a.get(`syscall_latency{op=${op}}`), b.get(`syscall_latency{op=${op}}`)));
    const counted = sumOf(cb, 'syscall', { op }) - sumOf(ca, 'syscall', { op });
    t.log(`${op}: timed at 1/${1 / num(b.get(`syscall_latency_timed{op=${op}}`))}, ${weighted} weighted of ${counted} counted`);
    t.true(num(b.get(`syscall_latency_timed{op=${op}}`)) < 1);
    t.true(weighted / counted > 0.8 && weighted / counted < 1.25, `${op}: ${weighted} / ${counted}`);
  }
});
