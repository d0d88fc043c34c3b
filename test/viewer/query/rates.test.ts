import test from 'ava';
import { counterRates } from '../../../src/viewer/query/rates.js';
import { binSamples, stepGrid } from '../../../src/viewer/query/steps.js';
import { T0, prng } from './helpers.js';

test('a 300 ms burst at 10x in 100 ms samples: 5 s steps show the mean as avg and the burst as max', (t) => {
  // 60 s of a counter sampled every 100 ms growing 100 per sample (1000/s),
  // except three samples (300 ms) starting at sample 223 that grow 1000 each (10 000/s).
  const ts: number[] = [];
  const vs: number[] = [];
  let v = 5_000_000;
  for (let i = 0; i <= 600; i++) {
    if (i > 0) v += i >= 223 && i < 226 ? 1000 : 100;
    ts.push(T0 + 100 * i);
    vs.push(v);
  }
  const grid = stepGrid(T0, T0 + 59_999, 5000);
  const r = counterRates(ts, new Array(ts.length).fill(1), vs, binSamples(ts, grid));
  t.is(grid.count, 12);
  // samples 223..225 end at 22.3-22.5 s: step 4 (20-25 s), whose 50 samples grew
  // 47·100 + 3·1000 = 7700 in 5 s = 1540/s
  t.true(Math.abs((r.avg[4] as number) - 1540) < 1e-9, String(r.avg[4]));
  t.true(Math.abs((r.max[4] as number) - 10_000) < 1e-9, String(r.max[4]));
  t.true(Math.abs((r.min[4] as number) - 1000) < 1e-9, String(r.min[4]));
  // step 0 holds samples 1..49 (sample 0 has no rate): 1000/s everywhere
  for (const k of [0, 1, 2, 3, 5, 11]) {
    t.true(Math.abs((r.avg[k] as number) - 1000) < 1e-9, `avg[${k}] = ${r.avg[k]}`);
    t.true(Math.abs((r.max[k] as number) - 1000) < 1e-9, `max[${k}] = ${r.max[k]}`);
  }
});

test('avg weights each sample by its duration', (t) => {
  // one step [10 000, 20 000); its samples: at 10 000 (+0 over 10 s), 11 000 (+100 over 1 s),
  // 19 000 (+0 over 8 s): 100 over 19 s. The plain mean of the three rates would be 33.3/s.
  const ts = [0, 10_000, 11_000, 19_000];
  const vs = [0, 0, 100, 100];
  const r = counterRates(ts, [1, 1, 1, 1], vs, binSamples(ts, stepGrid(10_000, 19_999, 10_000)));
  t.is(r.avg.length, 1);
  t.true(Math.abs((r.avg[0] as number) - 100 / 19) < 1e-12, String(r.avg[0]));
  t.is(r.max[0], 100);
  t.is(r.min[0], 0);
});

test('no rate across a run change, a NaN or a reset', (t) => {
  // one sample per second; steps of 2 s from 0
  const ts = [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000];
  const run = [1, 1, 1, 1, 2, 2, 2, 2, 2, 2];
  const vs = [0, 5, 10, 15, 900, 910, Number.NaN, 950, 3, 13];
  //   rate of sample: 1: 5, 2: 5, 3: 5, 4: run change, 5: 10, 6: NaN, 7: after NaN, 8: reset (−947), 9: 10
  const r = counterRates(ts, run, vs, binSamples(ts, stepGrid(0, 9999, 2000)));
  t.deepEqual(r.avg, [5, 5, 10, null, 10]);
  t.deepEqual(r.max, [5, 5, 10, null, 10]);
  t.deepEqual(r.min, [5, 5, 10, null, 10]);
});

test('rates match a brute-force computation on an irregular counter', (t) => {
  const rand = prng(5);
  const ts: number[] = [];
  const vs: number[] = [];
  const run: number[] = [];
  let now = T0;
  let v = 0;
  let r = 1;
  for (let i = 0; i < 4000; i++) {
    now += 50 + Math.floor(400 * rand());
    if (rand() < 0.005) {
      r++;
      v = Math.floor(100 * rand());
    } else v += Math.floor(rand() * rand() * 10_000);
    ts.push(now);
    run.push(r);
    vs.push(rand() < 0.02 ? Number.NaN : v);
  }
  const step = 15_000;
  const grid = stepGrid(T0 + 30_000, now, step);
  const got = counterRates(ts, run, vs, binSamples(ts, grid));

  // brute force: a list of (step start, delta, dt) per sample with a valid rate, then sums per step
  const per = new Map<number, { delta: number; dt: number; rates: number[] }>();
  for (let i = 1; i < ts.length; i++) {
    const [a, b] = [vs[i - 1] as number, vs[i] as number];
    if (run[i] !== run[i - 1] || Number.isNaN(a) || Number.isNaN(b) || b < a) continue;
    const key = Math.floor((ts[i] as number) / step) * step;
    if (key < grid.start) continue;
    const e = per.get(key) ?? { delta: 0, dt: 0, rates: [] };
    const dt = (ts[i] as number) - (ts[i - 1] as number);
    e.delta += b - a;
    e.dt += dt;
    e.rates.push((b - a) / (dt / 1000));
    per.set(key, e);
  }
  for (let k = 0; k < grid.count; k++) {
    const e = per.get(grid.start + k * step);
    if (e === undefined) {
      t.is(got.avg[k], null);
      continue;
    }
    const close = (x: number | null | undefined, y: number): boolean => x !== null && x !== undefined && Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(y));
    t.true(close(got.avg[k], e.delta / (e.dt / 1000)), `avg ${k}`);
    t.true(close(got.max[k], Math.max(...e.rates)), `max ${k}`);
    t.true(close(got.min[k], Math.min(...e.rates)), `min ${k}`);
  }
});
