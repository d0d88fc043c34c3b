import test from 'ava';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadNative } from '../../src/native/index.js';
import { scaled } from '../../src/samplers/cpu/perf/sampler.js';
import { KernelHarness, node, num, run, sumOf, type Values } from '../helpers/kernel.js';

// cpu_migrations, cpu_softirq (BPF), cpu_perf (perf_event_open) and
// rezolus_bpf against the live kernel, each with a known answer: a child that
// does N of something makes the counter rise by at least N. One harness for
// the file: the loaded-object registry is per process and per sampler name.

const SAMPLERS = ['cpu_migrations', 'cpu_softirq', 'cpu_perf', 'rezolus_bpf', 'scheduler_runqueue'];

let k: KernelHarness;
test.before(async () => {
  k = await KernelHarness.start(SAMPLERS, { bpfStats: true });
});
test.after.always(async () => {
  await k?.stop();
});

const delta = (a: Values, b: Values, metric: string, match: Record<string, string> = {}): number =>
  sumOf(b, metric, match) - sumOf(a, metric, match);

/** Whether this host has a hardware PMU: perf_event_open of cycles works (it fails with ENOENT on this VM). */
function hasPmu(): boolean {
  try {
    loadNative().closeFd(loadNative().perfOpen(0, 0, 0));
    return true;
  } catch {
    return false;
  }
}

test.serial('the BPF samplers load whole; cpu_perf runs degraded when there is no hardware PMU', (t) => {
  t.deepEqual(k.status('cpu_migrations').status, { state: 'active' });
  t.deepEqual(k.status('cpu_softirq').status, { state: 'active' });
  t.deepEqual(k.status('rezolus_bpf').status, { state: 'active' });
  const perf = k.status('cpu_perf').status;
  if (hasPmu()) return t.is(perf.state, 'active');
  t.is(perf.state, 'degraded');
  if (perf.state === 'degraded') {
    t.log(perf.reason);
    t.regex(perf.reason, /^unsupported: no hardware PMU \(perf_event_open cycles: ENOENT\)/);
  }
});

test('cpu_perf scales multiplexed counts by enabled/running and leaves out counters that never ran', (t) => {
  t.is(scaled(1000n, 500n, 500n), 1000);
  t.is(scaled(1000n, 400n, 100n), 4000);
  t.is(scaled(7n, 10n, 0n), undefined);
  t.is(scaled(2n ** 60n, 2n, 1n), 2n ** 61n, 'bigint past 2^53');
});

test.serial('cpu_perf frames carry the software counters for every CPU, and hardware ones only with a PMU', async (t) => {
  const v = await k.read('cpu_perf');
  for (const id of ['0', '1']) {
    for (const m of ['cpu_perf_clock', 'cpu_perf_context_switches', 'cpu_perf_migrations', 'cpu_perf_page_faults', 'cpu_perf_page_faults_minor', 'cpu_perf_page_faults_major']) {
      t.true(v.has(`${m}{id=${id}}`), `${m}{id=${id}}`);
    }
  }
  t.is([...v.keys()].some((key) => key.startsWith('cpu_cycles') || key.startsWith('cpu_instructions')), hasPmu());
  t.true(sumOf(v, 'cpu_perf_context_switches') > 0);
});

test.serial('cpu_perf cpu-clock of each CPU advances by the wall time between two reads', async (t) => {
  const a = await k.read('cpu_perf');
  const t0 = process.hrtime.bigint();
  await sleep(500);
  const b = await k.read('cpu_perf');
  const wall = Number(process.hrtime.bigint() - t0);
  for (const id of ['0', '1']) {
    const d = num(b.get(`cpu_perf_clock{id=${id}}`)) - num(a.get(`cpu_perf_clock{id=${id}}`));
    t.true(d > 0.8 * wall && d < 1.2 * wall, `cpu ${id}: clock +${d} ns over ${wall} ns of wall time`);
  }
});

test.serial('a shell re-pinned between CPU 0 and 1 N times: cpu_migrations from and to rise by N on each side', async (t) => {
  const N = 100; // round trips: 2N migrations of the shell
  const a = await k.read('cpu_migrations');
  const pa = await k.read('cpu_perf');
  await run('taskset', ['-c', '0', 'sh', '-c', `for i in $(seq ${N}); do taskset -cp 1 $$ >/dev/null; taskset -cp 0 $$ >/dev/null; done`]);
  const b = await k.read('cpu_migrations');
  const pb = await k.read('cpu_perf');
  const from0 = delta(a, b, 'cpu_migrations', { id: '0', direction: 'from' });
  const to1 = delta(a, b, 'cpu_migrations', { id: '1', direction: 'to' });
  const from1 = delta(a, b, 'cpu_migrations', { id: '1', direction: 'from' });
  const to0 = delta(a, b, 'cpu_migrations', { id: '0', direction: 'to' });
  const perfMigrations = delta(pa, pb, 'cpu_perf_migrations');
  t.log(`${2 * N} re-pins: from0 ${from0} to1 ${to1} from1 ${from1} to0 ${to0}; perf cpu-migrations ${perfMigrations}`);
  for (const [name, n] of [['0→', from0], ['→1', to1], ['1→', from1], ['→0', to0]] as const) t.true(n >= N, `${name}: ${n} >= ${N}`);
  // every migration leaves one CPU and joins another: on 2 CPUs from0 = to1 and from1 = to0
  // (up to a migration landing between the reads of the two CPUs' banks)
  t.true(Math.abs(from0 - to1) <= 2, `from0 ${from0} = to1 ${to1}`);
  t.true(Math.abs(from1 - to0) <= 2, `from1 ${from1} = to0 ${to0}`);
  t.true(perfMigrations >= 2 * N, `perf software cpu-migrations saw them too: ${perfMigrations}`);
});

const UDP_PING_PONG = `
const dgram = require('node:dgram');
const n = Number(process.argv[1]);
const server = dgram.createSocket('udp4');
const client = dgram.createSocket('udp4');
server.on('message', (msg, rinfo) => server.send(msg, rinfo.port, rinfo.address));
let left = n;
client.on('message', () => {
  if (--left === 0) { client.close(); server.close(); return; }
  client.send('x', server.address().port, '127.0.0.1');
});
server.bind(0, '127.0.0.1', () => client.bind(0, '127.0.0.1', () => client.send('x', server.address().port, '127.0.0.1')));
`;

test.serial('N UDP round trips on loopback: softirq net_rx rises by at least 2N and its time rises', async (t) => {
  const N = 500;
  const a = await k.read('cpu_softirq');
  await node(UDP_PING_PONG, [String(N)]);
  const b = await k.read('cpu_softirq');
  const netRx = delta(a, b, 'softirq', { kind: 'net_rx' });
  const netRxTime = delta(a, b, 'softirq_time', { kind: 'net_rx' });
  t.log(`${N} round trips (${2 * N} datagrams): net_rx softirqs ${netRx}, ${(netRxTime / 1e3).toFixed(0)} µs`);
  // each datagram is queued to the loopback backlog and raises NET_RX; ping-pong never batches two
  t.true(netRx >= 2 * N, `net_rx ${netRx} >= ${2 * N}`);
  t.true(netRxTime > 0);
  t.true(netRxTime / netRx < 1_000_000, 'under 1 ms per net_rx softirq on average');
});

test.serial('over 1 s idle: timer softirqs run and their time is counted', async (t) => {
  const a = await k.read('cpu_softirq');
  await sleep(1000);
  const b = await k.read('cpu_softirq');
  const timer = delta(a, b, 'softirq', { kind: 'timer' });
  const timerTime = delta(a, b, 'softirq_time', { kind: 'timer' });
  const all = delta(a, b, 'softirq');
  const allTime = delta(a, b, 'softirq_time');
  t.log(`1 s: timer ${timer} (${(timerTime / 1e3).toFixed(0)} µs), all kinds ${all} (${(allTime / 1e3).toFixed(0)} µs)`);
  t.true(timer >= 1, `timer softirqs in 1 s: ${timer}`);
  t.true(timerTime > 0);
  t.true(allTime < 2 * 1e9, 'softirq time on 2 CPUs in about 1 s stays under 2 s');
});

test.serial('a child touching P fresh pages: cpu_perf page faults (and minor faults) rise by at least P', async (t) => {
  const P = 20_000; // 80 MB of 4 KiB pages; THP is madvise-only here, so one fault per page
  const a = await k.read('cpu_perf');
  await node('const n = Number(process.argv[1]); const b = Buffer.alloc(n * 4096); for (let i = 0; i < n; i++) b[i * 4096] = 1;', [String(P)]);
  const b = await k.read('cpu_perf');
  const faults = delta(a, b, 'cpu_perf_page_faults');
  const minor = delta(a, b, 'cpu_perf_page_faults_minor');
  const major = delta(a, b, 'cpu_perf_page_faults_major');
  t.log(`${P} pages touched: page-faults ${faults}, minor ${minor}, major ${major}`);
  t.true(faults >= P, `page faults ${faults} >= ${P}`);
  t.true(minor >= P, `minor faults ${minor} >= ${P}`);
  t.true(faults >= minor + major - 100, 'page-faults counts at least the minor and major ones (read at slightly different moments)');
});

test.serial('a child sleeping N times: context switches rise by N in cpu_perf, scheduler_runqueue and rezolus_bpf', async (t) => {
  const N = 300;
  const before = new Map<string, Values>();
  for (const s of ['cpu_perf', 'scheduler_runqueue', 'rezolus_bpf']) before.set(s, await k.read(s));
  await node('const s = new Int32Array(new SharedArrayBuffer(4)); for (let i = 0; i < Number(process.argv[1]); i++) Atomics.wait(s, 0, 0, 1);', [String(N)]);
  const after = new Map<string, Values>();
  for (const s of ['cpu_perf', 'scheduler_runqueue', 'rezolus_bpf']) after.set(s, await k.read(s));
  const perf = delta(before.get('cpu_perf')!, after.get('cpu_perf')!, 'cpu_perf_context_switches');
  const bpf = delta(before.get('scheduler_runqueue')!, after.get('scheduler_runqueue')!, 'scheduler_context_switch');
  const match = { sampler: 'scheduler_runqueue', program: 'sched_switch' };
  const runs = delta(before.get('rezolus_bpf')!, after.get('rezolus_bpf')!, 'rezolus_bpf_run_count', match);
  const runTime = delta(before.get('rezolus_bpf')!, after.get('rezolus_bpf')!, 'rezolus_bpf_run_time', match);
  t.log(`${N} sleeps: perf context-switches ${perf}, scheduler_context_switch ${bpf}, sched_switch runs ${runs} in ${(runTime / 1e3).toFixed(0)} µs (${(runTime / Math.max(runs, 1)).toFixed(0)} ns/run)`);
  t.true(perf >= N, `perf context switches ${perf} >= ${N}`);
  t.true(bpf >= N);
  t.true(runs >= N, `sched_switch ran ${runs} >= ${N} times`);
  t.true(runTime > 0, 'run time is counted: bpf_stats is on');
  // three views of the same switches, read at slightly different moments of one tick
  t.true(Math.abs(runs - perf) <= 0.2 * perf + 200, `sched_switch runs ${runs} ≈ perf context switches ${perf}`);
});

test.serial('rezolus_bpf lists the programs of every loaded BPF sampler', async (t) => {
  const v = await k.read('rezolus_bpf');
  for (const [sampler, program] of [
    ['cpu_migrations', 'sched_migrate_task'],
    ['cpu_softirq', 'softirq_entry'],
    ['cpu_softirq', 'softirq_exit'],
    ['scheduler_runqueue', 'sched_switch'],
    ['scheduler_runqueue', 'sched_wakeup'],
  ] as const) {
    t.true(v.has(`rezolus_bpf_run_count{sampler=${sampler},program=${program}}`), `${sampler}/${program}`);
    t.true(v.has(`rezolus_bpf_run_time{sampler=${sampler},program=${program}}`), `${sampler}/${program}`);
  }
  t.true(sumOf(v, 'rezolus_bpf_run_count', { sampler: 'cpu_softirq' }) > 0);
  t.true(sumOf(v, 'rezolus_bpf_run_time', { sampler: 'cpu_softirq' }) > 0);
});
