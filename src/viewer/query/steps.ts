/**
 * The step of a query and its grid: how many milliseconds one chart column
 * covers, and which samples fall in which column.
 *
 * A step is never finer than the native sample spacing (a column without a
 * sample is a gap, not detail) and never so fine that the range needs more
 * than `budget` steps; it is then rounded up to a "nice" value. Steps start
 * at multiples of the step in unix ms, so the columns of a zoomed or panned
 * view are the same columns as before, holding the same samples: a step's
 * value depends on the step alone, not on where the query range began.
 */

/** The budget (columns a chart can show) is clamped to this range. */
export const MIN_BUDGET = 10;
export const MAX_BUDGET = 5000;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * The nice steps up to a day: 1, 2, 5 × 10^k ms below 10 s, then clock
 * steps. Beyond a day, steps are 1, 2, 5 × 10^k days (see niceStep).
 */
export const NICE_STEPS_MS: readonly number[] = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
];

/** The smallest nice step ≥ `ms` (at least 1 ms). */
export function niceStep(ms: number): number {
  for (const s of NICE_STEPS_MS) if (s >= ms) return s;
  for (let days = 1; ; days *= 10) {
    for (const m of [1, 2, 5]) if (m * days * DAY >= ms) return m * days * DAY;
  }
}

/** At most this many spacings are looked at for the median (evenly strided over the range). */
const SPACING_SAMPLE = 2048;

/**
 * The native sample spacing of `t` (ms): the median of the positive gaps
 * between consecutive samples with indices in [lo, hi). Long tracks are
 * strided so that at most ~2048 gaps are sorted. Undefined when the range
 * holds fewer than two distinct times.
 */
export function nativeSpacing(t: readonly number[], lo = 0, hi: number = t.length): number | undefined {
  const from = Math.max(1, lo + 1);
  const to = Math.min(hi, t.length);
  const stride = Math.max(1, Math.ceil((to - from) / SPACING_SAMPLE));
  const gaps: number[] = [];
  for (let i = from; i < to; i += stride) {
    const gap = (t[i] as number) - (t[i - 1] as number);
    if (gap > 0) gaps.push(gap);
  }
  if (gaps.length === 0) return undefined;
  gaps.sort((a, b) => a - b);
  const mid = gaps.length >> 1;
  return gaps.length % 2 === 1 ? (gaps[mid] as number) : ((gaps[mid - 1] as number) + (gaps[mid] as number)) / 2;
}

/** `budget` clamped to [MIN_BUDGET, MAX_BUDGET] and made an integer; NaN gives MAX_BUDGET. */
export function clampBudget(budget: number): number {
  if (Number.isNaN(budget)) return MAX_BUDGET;
  return Math.min(MAX_BUDGET, Math.max(MIN_BUDGET, Math.floor(budget)));
}

/**
 * How far a native spacing may lie above a nice step and still get it:
 * samples are stamped with their frames' ends, a millisecond or two past
 * the agent's tick, so the median gap of 100 ms ticks can read 100.3 ms,
 * which is a 100 ms step, not 200.
 */
export const NATIVE_SLACK = 0.02;

/**
 * The step (ms) of a query over [startMs, endMs]: the smallest nice step
 * that is at least `nativeMs` (less NATIVE_SLACK) and at least
 * ceil((end − start) / budget), with the budget clamped to [10, 5000]. A
 * non-finite or non-positive `nativeMs` (spacing unknown) imposes nothing.
 */
export function chooseStep(startMs: number, endMs: number, budget: number, nativeMs: number): number {
  const span = Math.max(0, endMs - startMs);
  const byBudget = Math.ceil(span / clampBudget(budget));
  const byNative = Number.isFinite(nativeMs) && nativeMs > 0 ? nativeMs / (1 + NATIVE_SLACK) : 0;
  return niceStep(Math.max(1, byBudget, byNative));
}

/** The columns of a query: `count` steps of `step` ms, the first starting at `start`. */
export interface StepGrid {
  /** the first step's start: floor(startMs / step) · step */
  readonly start: number;
  readonly step: number;
  readonly count: number;
}

/** The aligned steps covering [startMs, endMs] (end inclusive): from the step holding startMs to the one holding endMs. */
export function stepGrid(startMs: number, endMs: number, step: number): StepGrid {
  const first = Math.floor(startMs / step);
  const last = Math.floor(Math.max(startMs, endMs) / step);
  return { start: first * step, step, count: last - first + 1 };
}

/** Each step's start, unix ms. */
export function stepTimes(grid: StepGrid): number[] {
  const out = new Array<number>(grid.count);
  for (let k = 0; k < grid.count; k++) out[k] = grid.start + k * grid.step;
  return out;
}

/** The first index i with t[i] ≥ x (t.length when none); t is sorted ascending. */
export function lowerBound(t: readonly number[], x: number): number {
  let lo = 0;
  let hi = t.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((t[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Which step each sample of a track falls in: the samples with indices in
 * [lo, hi) are those whose time lies inside the grid, and sample i is in
 * step col[i − lo]. Computed once per track and shared by every series of it.
 */
export interface SampleBins {
  readonly grid: StepGrid;
  readonly lo: number;
  readonly hi: number;
  readonly col: Int32Array;
}

/**
 * The start of each sample's interval: sample i covers (t[i−1], t[i]], so
 * its start is t[i−1]; the first sample's is one spacing before it.
 * Sorted like `t`. What rates and histogram events are placed by.
 */
export function intervalStarts(t: readonly number[]): number[] {
  const out = new Array<number>(t.length);
  for (let i = 1; i < t.length; i++) out[i] = t[i - 1] as number;
  if (t.length > 0) out[0] = (t[0] as number) - (t.length > 1 ? (t[1] as number) - (t[0] as number) : 0);
  return out;
}

/** Places the samples of `t` (sorted times) on `grid`; touches only the samples inside it. */
export function binSamples(t: readonly number[], grid: StepGrid): SampleBins {
  const lo = lowerBound(t, grid.start);
  const hi = lowerBound(t, grid.start + grid.count * grid.step);
  const col = new Int32Array(hi - lo);
  for (let i = lo; i < hi; i++) {
    // t − start is exact (both are close doubles), so the floor is exact too.
    const k = Math.floor(((t[i] as number) - grid.start) / grid.step);
    col[i - lo] = k < grid.count ? k : grid.count - 1;
  }
  return { grid, lo, hi, col };
}
