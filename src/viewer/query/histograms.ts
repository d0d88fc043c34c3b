/**
 * Histograms per step: the events recorded inside each step, merged over
 * every matched series, and what a chart draws of them (percentile lines or
 * a heatmap).
 *
 * Columns hold CUMULATIVE histograms, so the events of a step are the last
 * histogram in the step minus the last one before it. A change of agent run
 * restarts the histograms: no difference spans it, and the new run's first
 * sample is the base of its events (what it recorded before that sample is
 * not known to belong to this step). When a bucket goes down without a run
 * change (a reset), the step's events are summed sample by sample instead,
 * leaving out the differences that went down.
 */
import type { HeatmapData } from '../api.js';
import { type SparseHistogram, indexToRange, percentiles, subtract } from '../../metrics/histogram.js';
import type { SampleBins } from './steps.js';

/** One histogram column of a track, with the track's runs and its samples placed on the grid. */
export interface HistogramInput {
  readonly run: readonly number[];
  readonly h: readonly (SparseHistogram | undefined)[];
  readonly bins: SampleBins;
}

const sameConfig = (a: SparseHistogram, b: SparseHistogram): boolean =>
  a.groupingPower === b.groupingPower && a.maxValuePower === b.maxValuePower;

const empty = (like: SparseHistogram): SparseHistogram => ({
  groupingPower: like.groupingPower,
  maxValuePower: like.maxValuePower,
  index: [],
  count: [],
});

/** Bucket-wise sum of two sparse histograms; undefined when their configs differ. */
export function mergeSparse(a: SparseHistogram, b: SparseHistogram): SparseHistogram | undefined {
  if (!sameConfig(a, b)) return undefined;
  if (b.index.length === 0) return a;
  if (a.index.length === 0) return b;
  const index: number[] = [];
  const count: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.index.length || j < b.index.length) {
    const ai = i < a.index.length ? (a.index[i] as number) : Number.POSITIVE_INFINITY;
    const bj = j < b.index.length ? (b.index[j] as number) : Number.POSITIVE_INFINITY;
    if (ai === bj) {
      index.push(ai);
      count.push((a.count[i++] as number) + (b.count[j++] as number));
    } else if (ai < bj) {
      index.push(ai);
      count.push(a.count[i++] as number);
    } else {
      index.push(bj);
      count.push(b.count[j++] as number);
    }
  }
  return { groupingPower: a.groupingPower, maxValuePower: a.maxValuePower, index, count };
}

/**
 * Events between sample `base` and sample `last` of one run (base ≤ last,
 * both defined). Normally last − base; when a bucket went down in between,
 * the sum of the differences of consecutive samples, leaving out those that
 * went down.
 */
function segmentEvents(h: readonly (SparseHistogram | undefined)[], base: number, last: number): SparseHistogram {
  const to = h[last] as SparseHistogram;
  const from = h[base] as SparseHistogram;
  if (base === last) return empty(to);
  const whole = subtract(to, from);
  if (whole !== undefined) return whole;
  let sum = empty(to);
  let prev = from;
  for (let j = base + 1; j <= last; j++) {
    const cur = h[j];
    if (cur === undefined) continue;
    const d = subtract(cur, prev);
    if (d !== undefined) sum = mergeSparse(sum, d) ?? sum;
    prev = cur;
  }
  return sum;
}

/** The last index before `i` where `h` has a histogram, or −1. */
function definedBefore(h: readonly (SparseHistogram | undefined)[], i: number): number {
  let j = Math.min(i, h.length) - 1;
  while (j >= 0 && h[j] === undefined) j--;
  return j;
}

/**
 * Per step of a grid with `count` steps, the events of every series merged.
 * A step where no series had a sample is undefined; one with samples but no
 * events is an empty histogram. Every series must have bins on the same
 * grid. Series whose configuration differs from the first one seen are left
 * out (their buckets could not be added).
 */
export function stepHistograms(series: readonly HistogramInput[], count: number): (SparseHistogram | undefined)[] {
  const out = new Array<SparseHistogram | undefined>(count).fill(undefined);
  let config: SparseHistogram | undefined;
  const add = (k: number, d: SparseHistogram): void => {
    config ??= d;
    if (!sameConfig(config, d)) return;
    const have = out[k];
    out[k] = have === undefined ? d : (mergeSparse(have, d) ?? have);
  };
  for (const { run, h, bins } of series) {
    let prev = definedBefore(h, bins.lo);
    let segStep = -1;
    let segBase = -1;
    let segLast = -1;
    for (let i = bins.lo; i < bins.hi; i++) {
      if (h[i] === undefined) continue;
      const c = bins.col[i - bins.lo] as number;
      if (segLast < 0 || c !== segStep || run[i] !== run[segLast]) {
        if (segLast >= 0) add(segStep, segmentEvents(h, segBase, segLast));
        segStep = c;
        segBase = prev >= 0 && run[prev] === run[i] ? prev : i;
      }
      segLast = i;
      prev = i;
    }
    if (segLast >= 0) add(segStep, segmentEvents(h, segBase, segLast));
  }
  return out;
}

/**
 * The quantiles drawn as lines, with their names and as exact fractions
 * num/den; `max` is added after them.
 */
export const STEP_QUANTILES: readonly { readonly name: string; readonly q: number; readonly num: number; readonly den: number }[] = [
  { name: 'p50', q: 0.5, num: 1, den: 2 },
  { name: 'p90', q: 0.9, num: 9, den: 10 },
  { name: 'p99', q: 0.99, num: 99, den: 100 },
  { name: 'p99.9', q: 0.999, num: 999, den: 1000 },
];

/** One percentile line: a value per step, null where the step had no events. */
export interface PercentileLine {
  readonly name: string;
  readonly values: (number | null)[];
}

/** Bucket upper bounds as numbers, per configuration, filled as they are asked for. */
const uppers = new Map<string, number[]>();

/** The upper bound of bucket `index` as a number (the bigint of indexToRange, converted once). */
function upperOf(index: number, g: number, m: number): number {
  const key = `${g}/${m}`;
  let table = uppers.get(key);
  if (table === undefined) uppers.set(key, (table = []));
  let u = table[index];
  if (u === undefined) table[index] = u = Number(indexToRange(index, g, m).upper);
  return u;
}

/** Above this many events, num · N might not be exact in a double: use `percentiles` (bigint). */
const EXACT_EVENTS = Number.MAX_SAFE_INTEGER / 1000;

/**
 * STEP_QUANTILES of `h` by the rule of `percentiles` (rank max(1, ceil(q·N)),
 * the upper bound of the bucket reaching it), in plain numbers: the ranks
 * come from the exact fractions, and one walk serves them all (the bigint
 * version costs ~10 µs a histogram, a lot for 3600 steps).
 */
function quantileUppers(h: SparseHistogram, total: number): number[] {
  if (total > EXACT_EVENTS) return (percentiles(h, STEP_QUANTILES.map((s) => s.q)) ?? []).map(Number);
  const out: number[] = [];
  let cumulative = 0;
  let b = 0;
  for (const { num, den } of STEP_QUANTILES) {
    const rank = Math.max(1, Math.floor((num * total + den - 1) / den));
    while (cumulative < rank && b < h.count.length) cumulative += h.count[b++] as number;
    out.push(upperOf(h.index[b - 1] as number, h.groupingPower, h.maxValuePower));
  }
  return out;
}

/**
 * Per step, the quantiles of STEP_QUANTILES of its events (each the upper
 * bound of the bucket holding the rank, as `percentiles` defines it) and the
 * max, the upper bound of the highest non-empty bucket; as numbers (the
 * bigint bounds are converted, exact below 2^53). Lines p50, p90, p99,
 * p99.9, max in that order.
 */
export function stepPercentiles(steps: readonly (SparseHistogram | undefined)[]): PercentileLine[] {
  const lines: PercentileLine[] = [...STEP_QUANTILES.map((s) => s.name), 'max'].map((name) => ({
    name,
    values: new Array<number | null>(steps.length).fill(null),
  }));
  const maxLine = lines[STEP_QUANTILES.length] as PercentileLine;
  steps.forEach((h, k) => {
    if (h === undefined) return;
    let total = 0;
    for (const c of h.count) total += c;
    if (total === 0) return;
    quantileUppers(h, total).forEach((v, at) => {
      (lines[at] as PercentileLine).values[k] = v;
    });
    maxLine.values[k] = upperOf(h.index[h.index.length - 1] as number, h.groupingPower, h.maxValuePower);
  });
  return lines;
}

/**
 * The heatmap of the steps' events: one row per bucket that has events in
 * some step (lowest bucket first), its bounds as numbers, and counts[step][row].
 */
export function stepHeatmap(steps: readonly (SparseHistogram | undefined)[]): HeatmapData {
  const config = steps.find((h) => h !== undefined);
  const used = new Set<number>();
  for (const h of steps) if (h !== undefined) for (const idx of h.index) used.add(idx);
  const buckets = [...used].sort((a, b) => a - b);
  const row = new Map<number, number>();
  buckets.forEach((idx, r) => row.set(idx, r));
  const lower: number[] = [];
  const upper: number[] = [];
  if (config !== undefined) {
    for (const idx of buckets) {
      lower.push(Number(indexToRange(idx, config.groupingPower, config.maxValuePower).lower));
      upper.push(upperOf(idx, config.groupingPower, config.maxValuePower));
    }
  }
  const counts = steps.map((h) => {
    const cells = new Array<number>(buckets.length).fill(0);
    if (h !== undefined) h.index.forEach((idx, at) => (cells[row.get(idx) as number] = h.count[at] as number));
    return cells;
  });
  return { lower, upper, counts };
}
