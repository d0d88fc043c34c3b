import test from 'ava';
import { type SparseHistogram, fromValues, indexToRange, valueToIndex } from '../../../src/metrics/histogram.js';
import { QueryError, runQuery } from '../../../src/viewer/query/run.js';
import { type SeriesInfo, Track } from '../../../src/viewer/track.js';
import { T0, info, prng } from './helpers.js';

type Value = number | SparseHistogram;

const CPUS = 32;

/**
 * A host's track: `samples` samples at `spacing` ms ending at T0 + spacing·(i+1):
 * cpu_usage (per CPU, state user, busy(cpu) ns per ms), memory_available (a
 * gauge), scheduler_runqueue_latency (histogram of value 1000 + i % 7 per sample
 * for sample i) and cpu_cores (unlabelled gauge). Run 2 from sample `restartAt`.
 */
function hostTrack(samples: number, spacing: number, restartAt = Number.POSITIVE_INFINITY): Track {
  const track = new Track();
  const cpuInfo = Array.from({ length: CPUS }, (_, c) => info('cpu_usage', 'counter', 'nanoseconds', { state: 'user', id: String(c) }));
  const mem = info('memory_available', 'gauge', 'bytes');
  const cores = info('cpu_cores', 'gauge', 'cores');
  const rq = info('scheduler_runqueue_latency', 'histogram', 'nanoseconds');
  const rqValues: number[] = [];
  for (let i = 0; i < samples; i++) {
    const at = T0 + spacing * (i + 1);
    const run = i >= restartAt ? 2 : 1;
    if (i === restartAt) rqValues.length = 0;
    rqValues.push(1000 + (i % 7) * 100);
    const values = new Map<string, { info: SeriesInfo; value: Value }>();
    cpuInfo.forEach((ci, c) => values.set(ci.id, { info: ci, value: (i - (run === 2 ? restartAt : 0)) * spacing * 1000 * (c + 1) }));
    values.set(mem.id, { info: mem, value: 1e9 + (i === 1234 ? 5e8 : 0) + (i % 10) });
    values.set(cores.id, { info: cores, value: CPUS });
    values.set(rq.id, { info: rq, value: fromValues(rqValues) });
    track.append(at, run, values);
  }
  return track;
}

const hour = hostTrack(3600, 1000);

test('rate of per-CPU counters: one series per CPU, sorted numerically, unit per second', (t) => {
  const r = runQuery([hour], { metric: 'cpu_usage', fn: 'rate', match: {}, start: T0, end: T0 + 3_600_000, budget: 300 });
  t.is(r.unit, 'nanoseconds/s');
  t.is(r.fn, 'rate');
  t.is(r.step, 15_000);
  t.is(r.t.length, 241);
  t.is(r.t[0], T0);
  t.is(r.t[1], T0 + 15_000);
  t.deepEqual(
    r.series.map((s) => s.name),
    Array.from({ length: CPUS }, (_, c) => `user ${c}`),
  );
  // CPU c is busy (c + 1) · 1000 ns per ms = (c + 1) · 10^6 ns/s
  r.series.forEach((s, c) => {
    t.is(s.id, `cpu_usage/user/${c}`);
    t.deepEqual(s.labels, { state: 'user', id: String(c) });
    // step 0 holds samples 1..14 (ends at 1 s..14 s, sample 0 has no predecessor)
    for (const k of [0, 1, 100, 239]) {
      t.true(Math.abs((s.avg[k] as number) - (c + 1) * 1e6) < 1e-6, `cpu ${c} step ${k}: ${s.avg[k]}`);
      t.true(Math.abs((s.max[k] as number) - (c + 1) * 1e6) < 1e-6);
    }
  });
});

test('match globs select the series', (t) => {
  const q = { metric: 'cpu_usage', fn: 'rate', start: T0, end: T0 + 60_000, budget: 100 } as const;
  t.deepEqual(
    runQuery([hour], { ...q, match: { id: '1?' } }).series.map((s) => s.labels.id),
    ['10', '11', '12', '13', '14', '15', '16', '17', '18', '19'],
  );
  t.deepEqual(
    runQuery([hour], { ...q, match: { id: '3*', state: 'u*' } }).series.map((s) => s.labels.id),
    ['3', '30', '31'],
  );
  const none = runQuery([hour], { ...q, match: { state: 'system' } });
  t.deepEqual(none.series, []);
  t.is(none.step, 1000); // still the native spacing: 60 000 / 100 = 600 ms would be finer
  t.is(none.unit, 'nanoseconds/s');
});

test('a gauge keeps its one-sample spike, and an unlabelled series is "total"', (t) => {
  const r = runQuery([hour], { metric: 'memory_available', fn: 'value', match: {}, start: T0, end: T0 + 3_600_000, budget: 300 });
  t.is(r.unit, 'bytes');
  t.is(r.series.length, 1);
  const s = r.series[0] as (typeof r.series)[number];
  t.is(s.name, 'total');
  // sample 1234 ends at T0 + 1 235 000 → step 82 (1 230 000 .. 1 245 000)
  t.is(s.max[82], 1.5e9 + 4);
  const others = s.max.filter((m, k) => k !== 82 && m !== null && m > 1.1e9);
  t.deepEqual(others, []);
});

test('zooming keeps the steps aligned: a step has the same values whatever the range', (t) => {
  const a = runQuery([hour], { metric: 'memory_available', fn: 'value', match: {}, start: T0, end: T0 + 3_600_000, budget: 300 });
  const b = runQuery([hour], { metric: 'memory_available', fn: 'value', match: {}, start: T0 + 1_000_007, end: T0 + 2_000_000, budget: 80 });
  t.is(b.step, a.step); // 999 993 / 80 = 12 500 → 15 s
  const s0 = a.series[0];
  const s1 = b.series[0];
  b.t.forEach((x, k) => {
    const at = a.t.indexOf(x);
    t.true(at >= 0, `step ${x} is on the first grid`);
    t.is(s1?.avg[k], s0?.avg[at]);
    t.is(s1?.max[k], s0?.max[at]);
  });
});

test('percentiles and heatmap of a histogram, with a restart', (t) => {
  const track = hostTrack(600, 1000, 300);
  const q = { metric: 'scheduler_runqueue_latency', match: {}, start: T0, end: T0 + 600_000, budget: 60 } as const;
  const r = runQuery([track], { ...q, fn: 'percentiles' });
  t.is(r.step, 10_000);
  t.is(r.unit, 'nanoseconds');
  t.deepEqual(
    r.series.map((s) => s.name),
    ['p50', 'p90', 'p99', 'p99.9', 'max'],
  );
  // brute force: sample i records 1000 + (i % 7)·100 in its interval, which starts at sample
  // i − 1's time T0 + 1000·i; sample 0 and the restart (300) are bases
  const grid0 = Math.floor(T0 / 10_000) * 10_000;
  const perStep = new Map<number, number[]>();
  for (let i = 1; i < 600; i++) {
    if (i === 300) continue;
    const k = Math.floor((T0 + 1000 * i - grid0) / 10_000);
    perStep.set(k, [...(perStep.get(k) ?? []), 1000 + (i % 7) * 100]);
  }
  const up = (v: number): number => Number(indexToRange(valueToIndex(v)).upper);
  for (let k = 0; k < r.t.length; k++) {
    const ev = (perStep.get(k) ?? []).sort((a, b) => a - b);
    const p50 = ev.length === 0 ? null : up(ev[Math.max(1, Math.ceil(ev.length / 2)) - 1] as number);
    const max = ev.length === 0 ? null : up(ev[ev.length - 1] as number);
    t.is(r.series[0]?.avg[k], p50, `p50 step ${k}`);
    t.is(r.series[4]?.avg[k], max, `max step ${k}`);
    t.is(r.series[4]?.max[k], max);
  }
  const h = runQuery([track], { ...q, fn: 'heatmap' });
  t.deepEqual(h.series, []);
  const rows = [...new Set([...perStep.values()].flat().map((v) => valueToIndex(v)))].sort((a, b) => a - b);
  t.deepEqual(
    h.heatmap?.lower,
    rows.map((i) => Number(indexToRange(i).lower)),
  );
  t.is(h.heatmap?.counts.length, h.t.length);
  const step30 = perStep.get(30) ?? []; // a step after the restart
  t.deepEqual(
    h.heatmap?.counts[30],
    rows.map((i) => step30.filter((v) => valueToIndex(v) === i).length),
  );
});

test('fn defaults to the kind, a fn of the wrong kind is 400, an unknown metric 404', (t) => {
  const q = { match: {}, start: T0, end: T0 + 60_000, budget: 100 };
  t.is(runQuery([hour], { ...q, metric: 'cpu_usage' }).fn, 'rate');
  t.is(runQuery([hour], { ...q, metric: 'memory_available' }).fn, 'value');
  t.is(runQuery([hour], { ...q, metric: 'scheduler_runqueue_latency' }).fn, 'percentiles');
  const wrong = t.throws(() => runQuery([hour], { ...q, metric: 'cpu_usage', fn: 'value' }), { instanceOf: QueryError });
  t.is(wrong?.status, 400);
  t.regex(wrong?.message ?? '', /rate/);
  t.is(t.throws(() => runQuery([hour], { ...q, metric: 'memory_available', fn: 'percentiles' }), { instanceOf: QueryError })?.status, 400);
  t.is(t.throws(() => runQuery([hour], { ...q, metric: 'scheduler_runqueue_latency', fn: 'rate' }), { instanceOf: QueryError })?.status, 400);
  const unknown = t.throws(() => runQuery([hour], { ...q, metric: 'no_such_metric' }), { instanceOf: QueryError });
  t.is(unknown?.status, 404);
  t.true(unknown instanceof Error);
  t.is(t.throws(() => runQuery([], { ...q, metric: 'cpu_usage' }), { instanceOf: QueryError })?.status, 404);
  t.is(t.throws(() => runQuery([hour], { ...q, metric: 'cpu_usage', end: T0 - 1 }), { instanceOf: QueryError })?.status, 400);
  t.is(t.throws(() => runQuery([hour], { ...q, metric: 'cpu_usage', start: Number.NaN }), { instanceOf: QueryError })?.status, 400);
});

test('a metric is found in any of the tracks; the step follows its track', (t) => {
  const other = new Track();
  const g = info('network_device_bytes', 'counter', 'bytes', { device: 'eth0', direction: 'receive' });
  for (let i = 0; i < 600; i++) other.append(T0 + 100 * i, 1, new Map([[g.id, { info: g, value: i * 50 }]]));
  const r = runQuery([hour, other], { metric: 'network_device_bytes', fn: 'rate', match: {}, start: T0, end: T0 + 60_000, budget: 5000 });
  t.is(r.step, 100); // the native 100 ms of that track, not the 1 s of the other
  t.is(r.series[0]?.name, 'eth0 receive');
  t.is(r.series[0]?.avg[10], 500);
  // a rate belongs to the step where its interval starts: (T0, T0 + 100] is step 0, and the
  // newest sample's interval (T0 + 59 800, T0 + 59 900] the step before the last
  t.is(r.series[0]?.avg[0], 500);
  t.is(r.series[0]?.avg[598], 500);
  t.is(r.series[0]?.avg[599], null);
});

test('the track is not changed by a query', (t) => {
  const track = hostTrack(120, 1000);
  const before = JSON.stringify([track.t, track.run, [...track.columns]]);
  runQuery([track], { metric: 'cpu_usage', fn: 'rate', match: {}, start: T0, end: T0 + 120_000, budget: 10 });
  runQuery([track], { metric: 'scheduler_runqueue_latency', fn: 'heatmap', match: {}, start: T0, end: T0 + 120_000, budget: 10 });
  t.is(JSON.stringify([track.t, track.run, [...track.columns]]), before);
});

test('random queries: rates match a brute force over the raw track', (t) => {
  const rand = prng(77);
  for (let n = 0; n < 20; n++) {
    const start = T0 + Math.floor(rand() * 3_000_000);
    const end = start + Math.floor(rand() * (T0 + 3_600_000 - start));
    const budget = 10 + Math.floor(rand() * 1000);
    const r = runQuery([hour], { metric: 'cpu_usage', fn: 'rate', match: { id: '7' }, start, end, budget });
    const s = r.series[0];
    const first = Math.floor(start / r.step) * r.step;
    t.is(r.t[0], first);
    t.is(r.t.length, Math.floor(end / r.step) - Math.floor(start / r.step) + 1);
    for (let k = 0; k < r.t.length; k++) {
      let has = false;
      // sample i's rate covers (t[i − 1], t[i]]: it belongs to the step of t[i − 1]
      for (let i = 1; i < hour.t.length; i++) if (Math.floor((hour.t[i - 1] as number) / r.step) * r.step === first + k * r.step) has = true;
      t.is(s?.avg[k], has ? 8e6 : null, `step ${k} of ${start}..${end} by ${r.step}`);
    }
  }
});
