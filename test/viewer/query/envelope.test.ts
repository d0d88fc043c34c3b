import test from 'ava';
import { gaugeEnvelope } from '../../../src/viewer/query/envelope.js';
import { binSamples, chooseStep, nativeSpacing, stepGrid } from '../../../src/viewer/query/steps.js';
import { T0, prng } from './helpers.js';

/** Per step start, the values of the samples in it, grouped by a plain map (the brute force). */
function groups(ts: readonly number[], vs: readonly number[], step: number): Map<number, number[]> {
  const out = new Map<number, number[]>();
  ts.forEach((x, i) => {
    const v = vs[i] as number;
    if (Number.isNaN(v)) return;
    const key = Math.floor(x / step) * step;
    const list = out.get(key) ?? [];
    list.push(v);
    out.set(key, list);
  });
  return out;
}

test('a one-sample spike in an hour at 1 s is the max of its step at budget 300', (t) => {
  const rand = prng(1);
  const ts: number[] = [];
  const vs: number[] = [];
  const spikeAt = 2345;
  for (let i = 0; i < 3600; i++) {
    ts.push(T0 + 1000 * (i + 1) - 3 * rand()); // jitter of the sample's end
    vs.push(i === spikeAt ? 9000 : 40 + 10 * rand());
  }
  const step = chooseStep(ts[0] as number, ts[3599] as number, 300, nativeSpacing(ts) ?? 0);
  t.is(step, 15_000);
  const grid = stepGrid(ts[0] as number, ts[3599] as number, step);
  const env = gaugeEnvelope(vs, binSamples(ts, grid));
  const k = Math.floor(((ts[spikeAt] as number) - grid.start) / step);
  t.is(env.max[k], 9000);
  // the other steps stay below 50
  t.true(env.max.every((m, at) => at === k || (m !== null && m < 50)));
  // the avg of the spike's step is diluted by the other 14 samples, not lost
  const g = groups(ts, vs, step).get(grid.start + k * step) as number[];
  t.is(g.length, 15);
  t.is(env.avg[k], g.reduce((a, b) => a + b, 0) / g.length);
});

test('min, max and avg match a grouping of the samples by step', (t) => {
  const rand = prng(2);
  const ts: number[] = [];
  const vs: number[] = [];
  let now = T0;
  for (let i = 0; i < 5000; i++) {
    now += rand() < 0.01 ? 40_000 : 100 + 900 * rand(); // a few gaps longer than a step
    ts.push(now);
    vs.push(rand() < 0.05 ? Number.NaN : Math.round(1000 * rand() - 300));
  }
  const step = 10_000;
  const grid = stepGrid(T0 + 100_000, now - 100_000, step);
  const env = gaugeEnvelope(vs, binSamples(ts, grid));
  const byStep = groups(ts, vs, step);
  let empty = 0;
  for (let k = 0; k < grid.count; k++) {
    const g = byStep.get(grid.start + k * step);
    if (g === undefined) {
      empty++;
      t.is(env.avg[k], null);
      t.is(env.min[k], null);
      t.is(env.max[k], null);
      continue;
    }
    const sorted = [...g].sort((a, b) => a - b);
    t.is(env.min[k], sorted[0]);
    t.is(env.max[k], sorted[sorted.length - 1]);
    const mean = g.reduce((a, b) => a + b, 0) / g.length;
    t.true(Math.abs((env.avg[k] as number) - mean) < 1e-9, `step ${k}: ${env.avg[k]} vs ${mean}`);
  }
  t.true(empty > 0, 'the data has empty steps');
});

test('hand example: NaN is absent, an empty step is null', (t) => {
  // step 1000 from 0: step 0 has 5 and 7; step 1 only NaN; step 2 has -2
  const ts = [100, 900, 1500, 2000];
  const vs = [5, 7, Number.NaN, -2];
  const env = gaugeEnvelope(vs, binSamples(ts, stepGrid(0, 2999, 1000)));
  t.deepEqual(env.avg, [6, null, -2]);
  t.deepEqual(env.min, [5, null, -2]);
  t.deepEqual(env.max, [7, null, -2]);
});

test('samples outside the grid are left out', (t) => {
  const ts = [500, 1500, 2500, 3500];
  const vs = [1, 2, 3, 4];
  const env = gaugeEnvelope(vs, binSamples(ts, stepGrid(1200, 2800, 1000)));
  t.deepEqual(env.max, [2, 3]);
});
