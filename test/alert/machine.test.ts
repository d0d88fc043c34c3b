/**
 * The evaluator and the state machine driven by frames whose timing the
 * test chooses: `for`, hysteresis, keep_firing_for, missing data, a new
 * agent run in the middle of a window. Each case runs the same decide()
 * the evaluator runs on every tick.
 */
import test from 'ava';
import type { AlertState } from '../../src/alert/contract.js';
import { AlertEvaluator } from '../../src/alert/evaluator.js';
import { decide, type Current } from '../../src/alert/machine.js';
import { readRules, type RuleDefaults } from '../../src/alert/rules.js';
import type { Descriptor } from '../../src/frame/types.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { h, m, makeDescriptor, makeFrame, T0 } from '../helpers/frames.js';

const D: RuleDefaults = { windowMs: 10_000, forMs: 0, keepFiringForMs: 0, missing: 'stale', missingAfterMs: 5_000, severity: 'warning', capture: undefined };
const MEM: Descriptor = makeDescriptor('memory_meminfo', { memory_available: m('gauge', 'bytes', [], 'available') }, [['memory_available', []]]);
const RQ: Descriptor = makeDescriptor('scheduler_runqueue', { scheduler_runqueue_latency: m('histogram', 'nanoseconds', [], 'rq') }, [['scheduler_runqueue_latency', []]]);
const NET: Descriptor = makeDescriptor('network_protocols', { network_tcp_retransmitted_segments: m('counter', 'packets', [], 'r') }, [['network_tcp_retransmitted_segments', []]]);
const MiB = 1024 * 1024;
const T0MS = Number(T0 / 1_000_000n);

interface Seen {
  readonly t: number;
  readonly state: AlertState;
  readonly previous: AlertState;
  readonly value: number | null;
  readonly activeAt: number;
}

/** An evaluator and the records it would write, ticked at chosen times (ms after T0). */
function harness(rule: Record<string, unknown>) {
  const rules = readRules([rule], 'test.toml', metricCatalog(), D);
  const ev = new AlertEvaluator(rules);
  const records = new Map<string, Current & { at: number }>();
  const lastTrue = new Map<string, number>();
  const seen: Seen[] = [];
  return {
    seen,
    frame(at: number, d: Descriptor, value: Parameters<typeof makeFrame>[0]['values'][number], seq: number, instance = 1): void {
      ev.ingest(makeFrame({ host: 'h1', descriptor: d, values: [value], seq, instance, endNs: T0 + BigInt(at) * 1_000_000n }), T0MS + at);
    },
    tick(at: number): void {
      const now = T0MS + at;
      for (const [input, obs] of ev.observe(now)) {
        const cur = records.get(input.key);
        const next = decide(input.rule, input.key, cur, cur?.at, obs, now, lastTrue, T0MS);
        if (next === undefined) continue;
        records.set(input.key, { ...next, at: now });
        seen.push({ t: at, state: next.state, previous: next.previous, value: next.value, activeAt: next.activeAt - T0MS });
      }
    },
    states(): string[] {
      return seen.map((s) => `${s.t}:${s.state}`);
    },
  };
}

test('for: pending first, firing once the condition held for `for`; back to inactive when it stops before', (t) => {
  const a = harness({ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB', for: '3s' });
  // low from t=2s to 4s (2s: not long enough), then from 6s on
  const values = [500, 500, 50, 50, 50, 500, 50, 50, 50, 50, 50, 50];
  values.forEach((v, i) => {
    a.frame(i * 1000, MEM, v * MiB, i + 1);
    a.tick(i * 1000 + 100);
  });
  t.deepEqual(a.states(), ['2100:pending', '5100:inactive', '6100:pending', '9100:firing']);
  t.is(a.seen[3]?.activeAt, 6100, 'firing keeps the start of the episode');
  t.is(a.seen[3]?.value, 50 * MiB, 'with the measured value');
});

test('hysteresis: a firing alert holds between clear and threshold, resolves past clear', (t) => {
  const a = harness({ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB', clear: '200MiB' });
  const values = [500, 50, 150, 150, 190, 250, 150];
  values.forEach((v, i) => {
    a.frame(i * 1000, MEM, v * MiB, i + 1);
    a.tick(i * 1000 + 100);
  });
  // 150 and 190 are above the threshold but below clear: still firing; 250 resolves; 150 alone does not fire again
  t.deepEqual(a.states(), ['1100:firing', '5100:resolved']);
});

test('hysteresis holds a pending alert too: a value hovering at the threshold does not flap pending <-> inactive', (t) => {
  const a = harness({ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB', clear: '200MiB', for: '3s' });
  const values = [500, 90, 110, 90, 110, 90, 250];
  values.forEach((v, i) => {
    a.frame(i * 1000, MEM, v * MiB, i + 1);
    a.tick(i * 1000 + 100);
  });
  t.deepEqual(a.states(), ['1100:pending', '4100:firing', '6100:resolved']);
});

test('keep_firing_for: a firing alert resolves only after the condition was false that long', (t) => {
  const a = harness({ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB', keep_firing_for: '3s' });
  // low at 1s, a one-frame recovery at 2s (flap), low at 3s, then high from 4s
  const values = [500, 50, 500, 50, 500, 500, 500, 500, 500];
  values.forEach((v, i) => {
    a.frame(i * 1000, MEM, v * MiB, i + 1);
    a.tick(i * 1000 + 100);
  });
  // last true at 3.1s: resolved at the first tick 3s later
  t.deepEqual(a.states(), ['1100:firing', '6100:resolved']);
});

test('missing data, stale: an active alert turns stale when frames stop, and fires again when they come back bad', (t) => {
  const a = harness({ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB', missing_after: '3s' });
  a.frame(0, MEM, 50 * MiB, 1);
  a.tick(100);
  for (const at of [1100, 2100, 3100]) a.tick(at); // no frame yet: heard 100 ms before the 0.1 s tick, missing from 3.0 s
  a.frame(5000, MEM, 50 * MiB, 2);
  a.tick(5100);
  t.deepEqual(a.states(), ['100:firing', '3100:stale', '5100:firing']);
  t.is(a.seen[1]?.value, null, 'stale has no value');
  t.is(a.seen[2]?.activeAt, 100, 'the same episode');
});

test('missing data, resolve and fire', (t) => {
  const r = harness({ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB', missing: 'resolve', missing_after: '2s' });
  r.frame(0, MEM, 50 * MiB, 1);
  r.tick(100);
  r.tick(2100);
  t.deepEqual(r.states(), ['100:firing', '2100:resolved']);

  const f = harness({ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB', missing: 'fire', missing_after: '2s' });
  f.frame(0, MEM, 500 * MiB, 1);
  f.tick(100);
  f.tick(1100);
  f.tick(2100);
  f.frame(3000, MEM, 500 * MiB, 2);
  f.tick(3100);
  t.deepEqual(f.states(), ['2100:firing', '3100:resolved']);
});

test('age: a host that stops sending fires after the threshold and resolves when it is back', (t) => {
  const a = harness({ name: 'silent', metric: 'memory_available', reduce: 'age', op: '>', threshold: '3s' });
  a.frame(0, MEM, 1, 1);
  for (let at = 1000; at <= 5000; at += 1000) a.tick(at);
  a.frame(5500, MEM, 1, 2);
  a.tick(6000);
  t.deepEqual(a.states(), ['4000:firing', '6000:resolved']);
  t.is(a.seen[0]?.value, 4000, 'the age in ms');
});

test('histogram p99 over the window: the events of the window only, resolved when they leave it', (t) => {
  const a = harness({ name: 'rq', metric: 'scheduler_runqueue_latency', reduce: 'p99', threshold: '1ms', window: '3s' });
  // bucket 100 holds ~10 µs values; bucket 200 ~ 1.5 ms (h2, g=3)
  let fast = 0;
  let slow = 0;
  for (let i = 0; i < 12; i++) {
    fast += 1000;
    if (i === 4) slow += 500; // one burst of slow wakeups at 4 s
    const hist = slow > 0 ? h([100, fast], [200, slow]) : h([100, fast]);
    a.frame(i * 1000, RQ, hist, i + 1);
    a.tick(i * 1000 + 100);
  }
  // the burst is in the 3 s window from 4 s to 6.x s; at 7 s the window starts at 4 s: the base holds the burst
  t.deepEqual(a.states(), ['4100:firing', '7100:resolved']);
  t.true((a.seen[0]?.value ?? 0) > 1e6, `p99 over 1 ms: ${a.seen[0]?.value}`);
});

test('a counter that restarts (a new agent run) gives no negative rate and starts its window again', (t) => {
  const a = harness({ name: 'rt', metric: 'network_tcp_retransmitted_segments', reduce: 'rate', op: '>', threshold: 100, window: '2s' });
  a.frame(0, NET, 1_000_000, 1);
  a.frame(1000, NET, 1_000_050, 2);
  a.tick(1100);
  // new run: the counter starts near zero; the old base must not give -1e6/s, nor a huge rate later
  a.frame(2000, NET, 10, 1, 2);
  a.tick(2100);
  a.frame(3000, NET, 60, 2, 2);
  a.tick(3100);
  a.frame(4000, NET, 1060, 3, 2);
  a.tick(4100);
  t.deepEqual(a.states(), ['4100:firing']);
  t.is(a.seen[0]?.value, 525, '(1060 - 10) / 2 s');
});

test('rate_max sees a one-frame burst that the window rate averages away', (t) => {
  const avg = harness({ name: 'r', metric: 'network_tcp_retransmitted_segments', reduce: 'rate', op: '>', threshold: 300, window: '5s' });
  const burst = harness({ name: 'r', metric: 'network_tcp_retransmitted_segments', reduce: 'rate_max', op: '>', threshold: 300, window: '5s' });
  const counts = [0, 10, 20, 1020, 1030, 1040];
  counts.forEach((c, i) => {
    for (const x of [avg, burst]) x.frame(i * 1000, NET, c, i + 1);
  });
  avg.tick(5100);
  burst.tick(5100);
  t.deepEqual(avg.states(), [], '1040 / 5 s = 208/s');
  t.deepEqual(burst.states(), ['5100:firing']);
  t.is(burst.seen[0]?.value, 1000);
});

test('group = each: one alert per matched series, summed otherwise', (t) => {
  const CG: Descriptor = makeDescriptor('cgroup_resources', { cgroup_cpu_bandwidth_throttled_time: m('counter', 'nanoseconds', ['cgroup'], 't') }, [
    ['cgroup_cpu_bandwidth_throttled_time', ['/a']],
    ['cgroup_cpu_bandwidth_throttled_time', ['/b']],
  ]);
  // /a throttled 0.2 s/s, /b 0.1 s/s
  const frames = [makeFrame({ host: 'h1', descriptor: CG, values: [0, 0], seq: 1, endNs: T0 }), makeFrame({ host: 'h1', descriptor: CG, values: [0.2e9, 0.1e9], seq: 2, endNs: T0 + 1_000_000_000n })];
  const e2 = new AlertEvaluator(readRules([{ name: 'thr', metric: 'cgroup_cpu_bandwidth_throttled_time', group: 'each', reduce: 'rate', threshold: '15%', window: '1s' }], 't', metricCatalog(), D));
  const s2 = new AlertEvaluator(readRules([{ name: 'thr', metric: 'cgroup_cpu_bandwidth_throttled_time', reduce: 'rate', threshold: '25%', window: '1s' }], 't', metricCatalog(), D));
  for (const f of frames) {
    e2.ingest(f, T0MS + 1000);
    s2.ingest(f, T0MS + 1000);
  }
  const eachObs = [...e2.observe(T0MS + 1100)].map(([i, o]) => [i.series.cgroup, o.value]);
  const sumObs = [...s2.observe(T0MS + 1100)].map(([i, o]) => [i.series, o.value]);
  t.deepEqual(eachObs, [['/a', 0.2e9], ['/b', 0.1e9]]);
  t.deepEqual(sumObs, [[{}, 0.3e9]]);
});

test('windows of series that went quiet are forgotten, unless their alert is active', (t) => {
  const rules = readRules([{ name: 'mem', metric: 'memory_available', reduce: 'last', op: '<', threshold: '100MiB' }], 't', metricCatalog(), D);
  const ev = new AlertEvaluator(rules);
  for (const host of ['a', 'b', 'c']) ev.ingest(makeFrame({ host, descriptor: MEM, values: [1], seq: 1 }), T0MS);
  ev.ingest(makeFrame({ host: 'c', descriptor: MEM, values: [1], seq: 2 }), T0MS + 3_000_000);
  const dropped = ev.forget(T0MS + 3_600_001, 3_600_000, (key) => key.startsWith('b.'));
  t.deepEqual(dropped, ['a.mem._'], 'a: quiet for an hour; b: quiet but its alert is active; c: fed 10 min ago');
  t.is(ev.size, 2);
});
