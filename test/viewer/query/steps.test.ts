import test from 'ava';
import {
  MAX_BUDGET,
  MIN_BUDGET,
  binSamples,
  chooseStep,
  NATIVE_SLACK,
  clampBudget,
  lowerBound,
  nativeSpacing,
  niceStep,
  stepGrid,
  stepTimes,
} from '../../../src/viewer/query/steps.js';
import { T0, prng } from './helpers.js';

test('niceStep rounds up to 1-2-5 ms below 10 s and to clock steps above', (t) => {
  const cases: [number, number][] = [
    [0.2, 1],
    [1, 1],
    [3, 5],
    [7, 10],
    [11, 20],
    [999, 1000],
    [1000.5, 2000],
    [4000, 5000],
    [5001, 10_000],
    [12_000, 15_000],
    [16_000, 30_000],
    [45_000, 60_000],
    [61_000, 120_000],
    [200_000, 300_000],
    [360_000, 600_000],
    [700_000, 900_000],
    [1_000_000, 1_800_000],
    [3_600_000, 3_600_000],
    [3_600_001, 7_200_000],
    [8_000_000, 10_800_000],
    [20_000_000, 21_600_000],
    [40_000_000, 43_200_000],
    [86_400_000, 86_400_000],
    [86_400_001, 172_800_000],
    [3 * 86_400_000, 5 * 86_400_000],
    [6 * 86_400_000, 10 * 86_400_000],
    [11 * 86_400_000, 20 * 86_400_000],
  ];
  for (const [raw, nice] of cases) t.is(niceStep(raw), nice, `niceStep(${raw})`);
});

test('chooseStep: the range over the budget, rounded up', (t) => {
  const hour = 3_600_000;
  // 3 600 000 / 300 = 12 000 → 15 s
  t.is(chooseStep(T0, T0 + hour, 300, 1000), 15_000);
  // 3 600 000 / 5000 = 720 ms, but never finer than the 1 s native spacing
  t.is(chooseStep(T0, T0 + hour, 5000, 1000), 1000);
  // no native spacing known: 720 → 1000 (the next nice step)
  t.is(chooseStep(T0, T0 + hour, 5000, 0), 1000);
  t.is(chooseStep(T0, T0 + hour, 5000, Number.NaN), 1000);
  // native 100 ms, one minute at budget 1000: 60 ms → 100 ms native
  t.is(chooseStep(T0, T0 + 60_000, 1000, 100), 100);
  // native spacing between nice steps rounds up: 1.5 s → 2 s
  t.is(chooseStep(T0, T0 + 60_000, 1000, 1500), 2000);
  // frame ends a millisecond or two past the ticks: 100.3 ms is a 100 ms step, 1001.5 ms a 1 s one; 103 ms is not
  t.is(chooseStep(T0, T0 + 60_000, 1000, 100.3), 100);
  t.is(chooseStep(T0, T0 + 60_000, 5000, 1001.5), 1000);
  t.is(chooseStep(T0, T0 + 60_000, 1000, 103), 200);
  // an empty range: the native spacing alone
  t.is(chooseStep(T0, T0, 300, 1000), 1000);
  t.is(chooseStep(T0, T0, 300, 0), 1);
  // a day at budget 1000: 86 400 → 2 min
  t.is(chooseStep(T0, T0 + 24 * hour, 1000, 1000), 120_000);
});

test('chooseStep clamps the budget to [10, 5000]', (t) => {
  const hour = 3_600_000;
  t.is(MIN_BUDGET, 10);
  t.is(MAX_BUDGET, 5000);
  // budget 1 acts as 10: 360 000 → 10 min
  t.is(chooseStep(T0, T0 + hour, 1, 1), 600_000);
  t.is(chooseStep(T0, T0 + hour, -5, 1), 600_000);
  // budget 10^6 acts as 5000: 720 → 1 s
  t.is(chooseStep(T0, T0 + hour, 1e6, 1), 1000);
  t.is(clampBudget(Number.NaN), 5000);
  t.is(clampBudget(299.7), 299);
});

test('chooseStep never gives more columns than the budget allows (+1 for an unaligned start)', (t) => {
  const rand = prng(7);
  for (let n = 0; n < 500; n++) {
    const start = T0 + Math.floor(rand() * 1e9);
    const end = start + Math.floor(rand() * 1e9 * rand());
    const budget = 10 + Math.floor(rand() * 4990);
    const native = rand() < 0.3 ? 0 : Math.floor(rand() * 20_000);
    const step = chooseStep(start, end, budget, native);
    t.true(step * (1 + NATIVE_SLACK) >= native && step >= (end - start) / budget, `step ${step} for ${end - start} ms, budget ${budget}, native ${native}`);
    const count = Math.floor(end / step) - Math.floor(start / step) + 1;
    t.true(count <= budget + 1, `${count} columns for budget ${budget}`);
  }
});

test('nativeSpacing is the median gap', (t) => {
  // gaps 1000, 1000, 500, 1000 → sorted 500 1000 1000 1000 → median 1000
  t.is(nativeSpacing([0, 1000, 2000, 2500, 3500]), 1000);
  // gaps 10, 20 → 15
  t.is(nativeSpacing([0, 10, 30]), 15);
  // gaps 5, 100, 7 → 7
  t.is(nativeSpacing([0, 5, 105, 112]), 7);
  // equal times are not a gap
  t.is(nativeSpacing([0, 0, 0, 40]), 40);
  t.is(nativeSpacing([5]), undefined);
  t.is(nativeSpacing([]), undefined);
  t.is(nativeSpacing([3, 3]), undefined);
  // within an index range: samples 3..5 have gaps 50, 50
  t.is(nativeSpacing([0, 1000, 2000, 2050, 2100, 9000], 2, 5), 50);
});

test('nativeSpacing of a long track with a few outages is its sampling interval', (t) => {
  const ts: number[] = [];
  let now = T0;
  for (let i = 0; i < 100_000; i++) {
    now += i % 997 === 0 ? 60_000 : 250;
    ts.push(now);
  }
  t.is(nativeSpacing(ts), 250);
});

test('stepGrid covers the steps holding start and end, aligned to the step', (t) => {
  t.deepEqual(stepGrid(1500, 4500, 1000), { start: 1000, step: 1000, count: 4 });
  // an end on a boundary is in the step it starts
  t.deepEqual(stepGrid(1000, 5000, 1000), { start: 1000, step: 1000, count: 5 });
  t.deepEqual(stepGrid(T0 + 7, T0 + 7, 15_000), { start: T0, step: 15_000, count: 1 });
  t.deepEqual(stepTimes(stepGrid(1500, 4500, 1000)), [1000, 2000, 3000, 4000]);
});

test('lowerBound matches a linear scan', (t) => {
  const rand = prng(11);
  for (let n = 0; n < 200; n++) {
    const xs = Array.from({ length: Math.floor(rand() * 40) }, () => Math.floor(rand() * 50)).sort((a, b) => a - b);
    const x = Math.floor(rand() * 60) - 5;
    let expected = xs.length;
    for (let i = xs.length - 1; i >= 0; i--) if ((xs[i] as number) >= x) expected = i;
    t.is(lowerBound(xs, x), expected, `${x} in [${xs}]`);
  }
});

test('binSamples puts each sample in the step floor(t / step) · step', (t) => {
  const rand = prng(3);
  const ts: number[] = [];
  let now = T0 - 50_000;
  for (let i = 0; i < 2000; i++) ts.push((now += 1 + rand() * 200));
  const grid = stepGrid(T0, T0 + 180_000, 5000);
  const bins = binSamples(ts, grid);
  const inside: number[] = [];
  ts.forEach((x, i) => {
    if (x >= grid.start && x < grid.start + grid.count * grid.step) inside.push(i);
  });
  t.is(bins.lo, inside[0] as number);
  t.is(bins.hi, (inside[inside.length - 1] as number) + 1);
  for (const i of inside) {
    const stepStart = Math.floor((ts[i] as number) / 5000) * 5000;
    t.is(bins.col[i - bins.lo], (stepStart - grid.start) / 5000);
  }
});
