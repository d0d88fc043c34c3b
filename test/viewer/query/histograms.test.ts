import test from 'ava';
import { type SparseHistogram, fromDense, fromValues, indexToRange, toDense, valueToIndex } from '../../../src/metrics/histogram.js';
import { type HistogramInput, mergeSparse, stepHeatmap, stepHistograms, stepPercentiles } from '../../../src/viewer/query/histograms.js';
import { binSamples, stepGrid, type StepGrid } from '../../../src/viewer/query/steps.js';
import { T0, prng } from './helpers.js';

const BUCKETS = 496;
const upperOf = (value: number): number => Number(indexToRange(valueToIndex(value)).upper);

/**
 * A simulated histogram series: raw[i] are the values recorded in the interval
 * ending at sample i; the column holds the cumulative histogram since the run
 * began, undefined where the sample was missed (its values still count, in
 * the next sample's cumulative).
 */
interface Sim {
  readonly t: number[];
  readonly run: number[];
  readonly raw: number[][];
  readonly h: (SparseHistogram | undefined)[];
}

function simulate(seed: number, n: number, opts: { readonly spacing: number; readonly offset: number; readonly runChangeP: number; readonly missP: number }): Sim {
  const rand = prng(seed);
  const sim: Sim = { t: [], run: [], raw: [], h: [] };
  let dense = new Array<number>(BUCKETS).fill(0);
  let run = 1;
  for (let i = 0; i < n; i++) {
    if (i > 0 && rand() < opts.runChangeP) {
      run++;
      dense = new Array<number>(BUCKETS).fill(0);
    }
    const values = Array.from({ length: Math.floor(rand() * 12) }, () => Math.floor(Math.exp(rand() * rand() * 22)));
    for (const v of values) dense[valueToIndex(v)] = (dense[valueToIndex(v)] ?? 0) + 1;
    sim.t.push(T0 + opts.offset + i * opts.spacing + rand() * 5);
    sim.run.push(run);
    sim.raw.push(values);
    sim.h.push(rand() < opts.missP ? undefined : fromDense(dense));
  }
  return sim;
}

/** Brute force: the raw values of each step, from the pairs of observed samples of the same run. */
function eventsPerStep(sims: readonly Sim[], grid: StepGrid): number[][] {
  const out = Array.from({ length: grid.count }, () => [] as number[]);
  for (const s of sims) {
    let p = -1;
    for (let i = 0; i < s.t.length; i++) {
      if (s.h[i] === undefined) continue;
      if (p >= 0 && s.run[p] === s.run[i]) {
        const k = Math.floor((s.t[i] as number) / grid.step) - Math.floor(grid.start / grid.step);
        if (k >= 0 && k < grid.count) for (let j = p + 1; j <= i; j++) out[k]?.push(...(s.raw[j] as number[]));
      }
      p = i;
    }
  }
  return out;
}

const inputs = (sims: readonly Sim[], grid: StepGrid): HistogramInput[] => sims.map((s) => ({ run: s.run, h: s.h, bins: binSamples(s.t, grid) }));

test('mergeSparse adds bucket by bucket', (t) => {
  const rand = prng(9);
  for (let n = 0; n < 50; n++) {
    const a = fromValues(Array.from({ length: Math.floor(rand() * 30) }, () => Math.floor(rand() * 1e6)));
    const b = fromValues(Array.from({ length: Math.floor(rand() * 30) }, () => Math.floor(rand() * 1e3)));
    const sum = toDense(a).map((c, i) => c + (toDense(b)[i] as number));
    t.deepEqual(toDense(mergeSparse(a, b) as SparseHistogram), sum);
    t.deepEqual(mergeSparse(a, b), mergeSparse(b, a));
  }
  t.is(mergeSparse(fromValues([1]), fromValues([1], 2, 64)), undefined);
});

test('percentiles per step match a sort of the raw values (two series, runs, missed samples)', (t) => {
  const sims = [
    simulate(21, 3600, { spacing: 1000, offset: 0, runChangeP: 0.003, missP: 0.03 }),
    simulate(22, 3600, { spacing: 1000, offset: 0, runChangeP: 0, missP: 0 }),
  ];
  const grid = stepGrid(T0, T0 + 3_600_000, 15_000);
  const lines = stepPercentiles(stepHistograms(inputs(sims, grid), grid.count));
  t.deepEqual(
    lines.map((l) => l.name),
    ['p50', 'p90', 'p99', 'p99.9', 'max'],
  );
  const perMille = [500, 900, 990, 999];
  const events = eventsPerStep(sims, grid);
  let nonEmpty = 0;
  events.forEach((ev, k) => {
    if (ev.length === 0) {
      for (const l of lines) t.is(l.values[k], null, `${l.name} of empty step ${k}`);
      return;
    }
    nonEmpty++;
    const sorted = [...ev].sort((a, b) => a - b);
    perMille.forEach((pm, at) => {
      const rank = Math.max(1, Math.floor((pm * sorted.length + 999) / 1000));
      t.is(lines[at]?.values[k], upperOf(sorted[rank - 1] as number), `p${pm / 10} of step ${k}`);
    });
    t.is(lines[4]?.values[k], upperOf(sorted[sorted.length - 1] as number), `max of step ${k}`);
  });
  t.true(nonEmpty > 200);
});

test('series on tracks with different sample times are merged per step', (t) => {
  const sims = [
    simulate(31, 600, { spacing: 1000, offset: 0, runChangeP: 0.01, missP: 0.05 }),
    simulate(32, 2400, { spacing: 250, offset: 77, runChangeP: 0.002, missP: 0.01 }),
  ];
  const grid = stepGrid(T0 + 20_000, T0 + 580_000, 10_000);
  const steps = stepHistograms(inputs(sims, grid), grid.count);
  const events = eventsPerStep(sims, grid);
  events.forEach((ev, k) => {
    const expected = new Array<number>(BUCKETS).fill(0);
    for (const v of ev) expected[valueToIndex(v)] = (expected[valueToIndex(v)] ?? 0) + 1;
    const got = steps[k];
    t.deepEqual(got === undefined ? new Array<number>(BUCKETS).fill(0) : toDense(got), expected, `step ${k}`);
  });
});

test('hand example: a run change and a reset inside one run', (t) => {
  // one step of 10 s; cumulative histograms of values 1, 2, 3 (buckets 1, 2, 3)
  const h = (ones: number, twos: number, threes: number): SparseHistogram => fromValues([...Array(ones).fill(1), ...Array(twos).fill(2), ...Array(threes).fill(3)]);
  const ts = [0, 10_000, 12_000, 14_000, 16_000, 18_000, 19_000];
  const run = [1, 1, 1, 2, 2, 2, 2];
  //  base (run 1, before the step) 2×1; then +3×1 in the step; run 2 starts at 14 000 with 5×3
  //  (its base); +1×2; then a reset inside run 2 (bucket 3 falls to 1); then +4×2.
  const hs = [h(2, 0, 0), h(5, 0, 0), h(5, 0, 0), h(0, 0, 5), h(0, 1, 5), h(0, 0, 1), h(0, 4, 1)];
  const grid = stepGrid(10_000, 19_999, 10_000);
  const [events] = stepHistograms([{ run, h: hs, bins: binSamples(ts, grid) }], grid.count);
  // events: 3×1 (run 1, 0 → 10 000 → 12 000), 1×2 (14 000 → 16 000), 4×2 (18 000 → 19 000)
  t.deepEqual(events, fromValues([1, 1, 1, 2, 2, 2, 2, 2]));
});

test('a step with samples but no events is null, a step with no samples too', (t) => {
  const same = fromValues([5, 6]);
  const ts = [0, 1000, 2000, 5000];
  const grid = stepGrid(0, 5999, 1000);
  const steps = stepHistograms([{ run: [1, 1, 1, 1], h: [same, same, same, fromValues([5, 6, 900])], bins: binSamples(ts, grid) }], grid.count);
  t.deepEqual(steps[1], { ...same, index: [], count: [] });
  t.is(steps[3], undefined);
  const lines = stepPercentiles(steps);
  t.deepEqual(lines[0]?.values, [null, null, null, null, null, upperOf(900)]);
  t.deepEqual(lines[4]?.values, [null, null, null, null, null, upperOf(900)]);
});

test('the heatmap has a row per bucket used somewhere, counts per step', (t) => {
  const sims = [simulate(41, 900, { spacing: 1000, offset: 0, runChangeP: 0.005, missP: 0.02 }), simulate(42, 900, { spacing: 1000, offset: 300, runChangeP: 0, missP: 0 })];
  const grid = stepGrid(T0, T0 + 900_000, 30_000);
  const map = stepHeatmap(stepHistograms(inputs(sims, grid), grid.count));
  const events = eventsPerStep(sims, grid);
  const used = [...new Set(events.flat().map((v) => valueToIndex(v)))].sort((a, b) => a - b);
  t.deepEqual(
    map.lower,
    used.map((i) => Number(indexToRange(i).lower)),
  );
  t.deepEqual(
    map.upper,
    used.map((i) => Number(indexToRange(i).upper)),
  );
  t.is(map.counts.length, grid.count);
  events.forEach((ev, k) => {
    const row = used.map((i) => ev.filter((v) => valueToIndex(v) === i).length);
    t.deepEqual(map.counts[k], row, `step ${k}`);
  });
});

test('the heatmap of no events is empty', (t) => {
  t.deepEqual(stepHeatmap([undefined, undefined]), { lower: [], upper: [], counts: [[], []] });
});

test('percentiles of more events than doubles count exactly take the bigint path, same rule', (t) => {
  // 5·10^12 events of value 1 and 5·10^12 of value 2: p50 (rank 5·10^12) is 1, the rest 2
  const big: SparseHistogram = { groupingPower: 3, maxValuePower: 64, index: [1, 2], count: [5e12, 5e12] };
  const lines = stepPercentiles([big, undefined]);
  t.deepEqual(
    lines.map((l) => l.values),
    [
      [1, null],
      [2, null],
      [2, null],
      [2, null],
      [2, null],
    ],
  );
  // the top bucket, whose upper bound is 2^64 − 1
  const top: SparseHistogram = { groupingPower: 3, maxValuePower: 64, index: [495], count: [3] };
  t.is(stepPercentiles([top])[4]?.values[0], 2 ** 64);
  t.is(stepPercentiles([top])[0]?.values[0], 2 ** 64);
});
