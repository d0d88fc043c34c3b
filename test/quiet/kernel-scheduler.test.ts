import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { valueToIndex } from '../../src/metrics/histogram.js';
import { count, KernelHarness, node, quantile, run, sumOf, window } from '../helpers/kernel.js';

// Kernel samplers load real BPF programs into this kernel (root, BTF): they
// run in the quiet suite, where no other test competes for the 2 CPUs.

let k: KernelHarness;
test.before(async () => {
  k = await KernelHarness.start(['scheduler_runqueue']);
});
test.after.always(async () => {
  await k?.stop();
});

test.serial('scheduler_runqueue loads whole', (t) => {
  t.deepEqual(k.status('scheduler_runqueue').status, { state: 'active' });
});

const BUSY = 'const end = Date.now() + Number(process.argv[1]); while (Date.now() < end);';

test.serial('4 busy tasks on 2 CPUs: runqueue latency p99 rises well above idle, and involuntary switches rise', async (t) => {
  // An idle baseline needs an idle machine: after a test that removed many cgroups, say, kernel
  // workers run for a while. Up to 5 one-second windows, until one has a p99 under 1 ms.
  let a = await k.read('scheduler_runqueue');
  let idleEnd = a;
  for (let i = 0; i < 5; i++) {
    await sleep(1000);
    idleEnd = await k.read('scheduler_runqueue');
    if (quantile(window(a.get('scheduler_runqueue_latency'), idleEnd.get('scheduler_runqueue_latency')), 0.99) < 1_000_000) break;
    a = idleEnd;
  }
  const busy = Array.from({ length: 4 }, () => run('taskset', ['-c', '0,1', process.execPath, '-e', BUSY, '1500']));
  await Promise.all(busy);
  const b = await k.read('scheduler_runqueue');
  const idle = window(a.get('scheduler_runqueue_latency'), idleEnd.get('scheduler_runqueue_latency'));
  const loaded = window(idleEnd.get('scheduler_runqueue_latency'), b.get('scheduler_runqueue_latency'));
  const idleP99 = quantile(idle, 0.99);
  const busyP99 = quantile(loaded, 0.99);
  t.log(`runqueue p99 idle ${(idleP99 / 1e3).toFixed(0)} µs (${count(idle)} events), busy ${(busyP99 / 1e3).toFixed(0)} µs (${count(loaded)} events)`);
  t.true(count(loaded) > 0);
  t.true(busyP99 >= 1_000_000, 'busy p99 at least 1 ms: 4 CPU hogs share 2 CPUs in slices of milliseconds');
  t.true(busyP99 >= 4 * idleP99, 'busy p99 well above the idle p99');
  const involuntary = sumOf(b, 'scheduler_context_switch', { kind: 'involuntary' }) - sumOf(idleEnd, 'scheduler_context_switch', { kind: 'involuntary' });
  t.true(involuntary >= 100, `preemptions among 4 hogs on 2 CPUs over 1.5 s: ${involuntary}`);
  const running = window(idleEnd.get('scheduler_running'), b.get('scheduler_running'));
  t.true(count(running) >= 100, 'preempted slices are in scheduler_running');
  t.true(sumOf(b, 'scheduler_runqueue_wait') > sumOf(idleEnd, 'scheduler_runqueue_wait'));
});

test.serial('a task that sleeps 50 ms shows in scheduler_offcpu near 50 ms', async (t) => {
  const a = await k.read('scheduler_runqueue');
  await node('const s = new Int32Array(new SharedArrayBuffer(4)); for (let i = 0; i < 20; i++) Atomics.wait(s, 0, 0, 50);');
  const b = await k.read('scheduler_runqueue');
  const off = window(a.get('scheduler_offcpu'), b.get('scheduler_offcpu'));
  // 20 sleeps of 50 ms: the buckets from 45 ms up hold at least 20 events
  const from = valueToIndex(45_000_000);
  const slept = off.index.reduce((s, idx, i) => (idx >= from ? s + (off.count[i] as number) : s), 0);
  t.true(slept >= 20, `offcpu events of 45 ms or more: ${slept}`);
});
