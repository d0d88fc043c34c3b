import test from 'ava';
import { counterIncrease, nearestRank, oversampledIndexes, RateWindow } from '../../src/exporter/rates.js';
import { ExporterState } from '../../src/exporter/state.js';
import { SECOND, T0, m, makeDescriptor, makeFrame } from '../helpers/frames.js';

const MS = 1_000_000n;
const cpu = makeDescriptor(
  'cpu_usage',
  {
    cpu_usage: m('counter', 'nanoseconds', ['state', 'id'], 'CPU time'),
    cpu_frequency: m('gauge', 'count', ['id'], 'Not a counter'),
  },
  [
    ['cpu_usage', ['user', '0']],
    ['cpu_frequency', ['0']],
    ['cpu_usage', ['user', '1']],
  ],
);

test('counterIncrease: numbers, bigints and mixes; a decrease or a non-counter is NaN', (t) => {
  t.is(counterIncrease(5, 12), 7);
  t.is(counterIncrease(2n ** 60n, 2n ** 60n + 3n), 3);
  t.is(counterIncrease(4_000_000_000, 2n ** 32n + 5n), 294_967_301);
  t.is(counterIncrease(0, 0), 0);
  t.true(Number.isNaN(counterIncrease(12, 5)), 'reset');
  t.true(Number.isNaN(counterIncrease(2n ** 64n - 1n, 3n)), 'wrap');
  t.true(Number.isNaN(counterIncrease(undefined, 3)));
  t.true(Number.isNaN(counterIncrease(1.5, 3n)), 'a fraction is no integer counter');
  t.true(Number.isNaN(counterIncrease({ groupingPower: 3, maxValuePower: 64, index: [], count: [] }, 3)));
});

test('nearestRank: rank max(1, ceil(q·N)) over exact values, NaN left out', (t) => {
  const samples = [5, Number.NaN, 1, 4, 2, 3, Number.NaN];
  t.deepEqual(nearestRank(samples, [0, 0.2, 0.5, 0.9, 1]), [1, 1, 3, 5, 5]);
  t.deepEqual(nearestRank([7], [0.5, 1]), [7, 7]);
  t.deepEqual(nearestRank([3, 1, 2, 10], [0.75, 0.76]), [3, 10]);
  t.is(nearestRank([Number.NaN], [0.5]), undefined);
  t.is(nearestRank([], [0.5]), undefined);
});

test('oversampledIndexes: only counters named in the set', (t) => {
  t.deepEqual(oversampledIndexes(cpu, new Set(['cpu_usage', 'cpu_frequency'])), [0, 2]);
  t.deepEqual(oversampledIndexes(cpu, new Set(['other'])), []);
});

test('RateWindow: per-second rates between consecutive frames, windowed by end time', (t) => {
  const w = new RateWindow(cpu, [0, 2]);
  const f = (seq: number, endNs: bigint, a: number | bigint, b: number | bigint) =>
    makeFrame({ host: 'h', descriptor: cpu, seq, endNs, values: [a, 0, b] });
  const f1 = f(1, T0, 0, 1000);
  const f2 = f(2, T0 + 100n * MS, 100_000_000, 1000); // 0.1 s busy in 0.1 s
  const f3 = f(3, T0 + 300n * MS, 110_000_000, 500); // 0.01 s in 0.2 s; series 2 went down
  t.true(w.add(f1, f2));
  t.true(w.add(f2, f3));
  t.false(w.add(f3, f3), 'no time between them');
  const other = makeFrame({ host: 'h', descriptor: makeDescriptor('cpu_usage', cpu.metrics, cpu.series), seq: 4, values: [1, 0, 1] });
  t.false(w.add(f3, other), 'another descriptor');
  t.is(w.size, 2);
  t.deepEqual(w.samples(0, T0, []), [50_000_000, 1e9]);
  const s2 = w.samples(1, T0, []);
  t.is(s2[0], Number.NaN);
  t.is(s2[1], 0);
  t.deepEqual(w.samples(0, T0 + 100n * MS, []), [50_000_000], 'the window starts after sinceNs');
  w.trim(T0 + 100n * MS);
  t.is(w.size, 1);
  t.deepEqual(w.samples(0, 0n, []), [50_000_000]);
});

test('state: rates are folded in at ingest, restart and reorder never give a negative or spiked rate', (t) => {
  const s = new ExporterState({ intervalNs: 10n * SECOND, oversample: ['cpu_usage'] });
  const ingest = (instance: number, seq: number, endNs: bigint, user0: number | bigint) =>
    s.ingest(makeFrame({ host: 'h', descriptor: cpu, instance, seq, endNs, values: [user0, 0, 0] }));
  ingest(1, 1, T0, 0);
  ingest(1, 2, T0 + 100n * MS, 90_000_000); // 0.9 core
  ingest(1, 3, T0 + 200n * MS, 95_000_000); // 0.05 core
  ingest(1, 2, T0 + 150n * MS, 1); // out of order: ignored
  let v = s.view(10n * SECOND)[0];
  t.deepEqual(v?.rates?.samples(0, v.sinceNs, []), [50_000_000, 900_000_000]);
  // the agent restarts 30 s later (past the takeover quiet time) with counters from 0 (a new instance): no sample spans the two runs
  ingest(2, 1, T0 + 30n * SECOND, 10);
  v = s.view(10n * SECOND)[0];
  t.is(v?.rates?.size, 0);
  ingest(2, 2, T0 + 30n * SECOND + 100n * MS, 20_000_010);
  v = s.view(10n * SECOND)[0];
  t.deepEqual(v?.rates?.samples(0, v.sinceNs, []), [200_000_000]);
  // a counter that goes down within one run (a wrap) gives a NaN sample, left out of the percentiles
  ingest(2, 3, T0 + 30n * SECOND + 200n * MS, 5);
  v = s.view(10n * SECOND)[0];
  t.deepEqual(nearestRank(v?.rates?.samples(0, v.sinceNs, []) ?? [], [0, 1]), [200_000_000, 200_000_000]);
});

test('state: the rate window covers one interval back from the latest frame', (t) => {
  const s = new ExporterState({ intervalNs: SECOND, oversample: ['cpu_usage'] });
  for (let i = 0; i <= 30; i++) {
    s.ingest(makeFrame({ host: 'h', descriptor: cpu, seq: i + 1, endNs: T0 + BigInt(i) * 100n * MS, values: [i * 1_000_000 * (i % 2), 0, 0] }));
  }
  const v = s.view(SECOND)[0];
  // frames end every 100 ms; the window (latest − 1 s, latest] holds the last 10 rates
  t.is(v?.rates?.samples(0, v.sinceNs, []).length, 10);
  t.true((v?.rates?.size ?? 0) <= 11, 'older rates are trimmed at ingest');
});

test('state: no oversampling configured keeps no rates', (t) => {
  const s = new ExporterState();
  s.ingest(makeFrame({ host: 'h', descriptor: cpu, seq: 1, values: [0, 0, 0] }));
  s.ingest(makeFrame({ host: 'h', descriptor: cpu, seq: 2, values: [1, 0, 0] }));
  t.is(s.view(SECOND)[0]?.rates, undefined);
});

test('RateWindow.serve: once three rates were in a window, for as long as it holds any', (t) => {
  const w = new RateWindow(cpu, [0]);
  const frames = [0, 1, 2, 3].map((i) => makeFrame({ host: 'h', descriptor: cpu, seq: i + 1, endNs: T0 + BigInt(i) * SECOND, values: [i, 0, 0] }));
  w.add(frames[0]!, frames[1]!);
  w.add(frames[1]!, frames[2]!);
  t.false(w.serve(T0), 'two rates: an agent sampling about once per interval gets no view');
  w.add(frames[2]!, frames[3]!);
  t.true(w.serve(T0));
  t.true(w.serve(T0 + 2n * SECOND), 'one rate in the window, but the view was served before');
  t.false(w.serve(T0 + 3n * SECOND), 'nothing in the window');
});
