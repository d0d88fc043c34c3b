/**
 * The samples one alert looks at: (end time, value) of each frame of its
 * host that carried the rule's series, summed over the matched series (a
 * summed rule) or of one series (a rule per series), for the rule's window
 * plus the one sample before it (the base a rate or a windowed histogram
 * starts from). Counters and histograms are cumulative; a new agent run or
 * a counter that went down starts the window again, so no rate is ever
 * negative. Pure.
 */
import { indexToRange, type SparseHistogram } from '../metrics/histogram.js';
import type { Reduce } from './rules.js';

export type SampleValue = number | SparseHistogram;

/**
 * The value of a window: a number, null when there is nothing to measure
 * (a histogram with no events in the window: the condition is not met), or
 * undefined when the window has too few samples to say (the alert holds).
 */
export type WindowValue = number | null | undefined;

/** Adds two cumulative sparse histograms of one layout (bucket-wise). */
export function addHistograms(a: SparseHistogram, b: SparseHistogram): SparseHistogram {
  const index: number[] = [];
  const count: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.index.length || j < b.index.length) {
    const ai = a.index[i];
    const bj = b.index[j];
    if (bj === undefined || (ai !== undefined && ai < bj)) {
      index.push(ai as number);
      count.push(a.count[i++] as number);
    } else if (ai === undefined || bj < ai) {
      index.push(bj);
      count.push(b.count[j++] as number);
    } else {
      index.push(ai);
      count.push((a.count[i++] as number) + (b.count[j++] as number));
    }
  }
  return { groupingPower: a.groupingPower, maxValuePower: a.maxValuePower, index, count };
}

export class SampleWindow {
  readonly t: number[] = [];
  readonly v: SampleValue[] = [];
  /** the agent run the samples come from */
  instance: number | undefined;
  /** the last value() and the reduction it was for, until the next sample */
  #cached: { readonly reduce: Reduce; readonly value: WindowValue } | undefined;

  constructor(private readonly windowMs: number) {}

  /** Adds a sample (ms); an older or equal time is ignored, a new run or a counter that went down starts over. */
  push(tMs: number, value: SampleValue, instance: number, cumulative: boolean): void {
    const n = this.t.length;
    if (instance !== this.instance) this.clear(instance);
    else if (n > 0 && tMs < (this.t[n - 1] as number) - this.windowMs) this.clear(instance); // the clock stepped back by more than the window: start again
    else if (n > 0 && tMs <= (this.t[n - 1] as number)) return;
    else if (n > 0 && cumulative && wentDown(this.v[n - 1] as SampleValue, value)) this.clear(instance);
    this.#cached = undefined;
    this.t.push(tMs);
    this.v.push(value);
    // keep one sample at or before the window's start: the base
    const start = tMs - this.windowMs;
    let drop = 0;
    while (drop + 1 < this.t.length && (this.t[drop + 1] as number) <= start) drop++;
    if (drop > 0) {
      this.t.splice(0, drop);
      this.v.splice(0, drop);
    }
  }

  clear(instance: number | undefined): void {
    this.t.length = 0;
    this.v.length = 0;
    this.instance = instance;
    this.#cached = undefined;
  }

  /** The window's value under a reduction (`age` is the caller's); computed once per sample. */
  value(reduce: Reduce): WindowValue {
    if (this.#cached?.reduce === reduce) return this.#cached.value;
    const value = this.#compute(reduce);
    this.#cached = { reduce, value };
    return value;
  }

  #compute(reduce: Reduce): WindowValue {
    const n = this.t.length;
    if (n === 0) return undefined;
    const lastT = this.t[n - 1] as number;
    const start = lastT - this.windowMs;
    switch (reduce.kind) {
      case 'last':
        return this.v[n - 1] as number;
      case 'min':
      case 'max':
      case 'avg': {
        // the samples inside the window (the base only when it is the only one)
        let sum = 0;
        let min = Infinity;
        let max = -Infinity;
        let k = 0;
        for (let i = n - 1; i >= 0 && (i === n - 1 || (this.t[i] as number) > start); i--) {
          const x = this.v[i] as number;
          sum += x;
          if (x < min) min = x;
          if (x > max) max = x;
          k++;
        }
        return reduce.kind === 'min' ? min : reduce.kind === 'max' ? max : sum / k;
      }
      case 'rate':
      case 'increase': {
        if (n < 2) return undefined;
        const dv = (this.v[n - 1] as number) - (this.v[0] as number);
        if (reduce.kind === 'increase') return dv;
        const dt = (lastT - (this.t[0] as number)) / 1000;
        return dt > 0 ? dv / dt : undefined;
      }
      case 'rate_max': {
        if (n < 2) return undefined;
        let max = -Infinity;
        for (let i = 1; i < n; i++) {
          const dt = ((this.t[i] as number) - (this.t[i - 1] as number)) / 1000;
          if (dt > 0) max = Math.max(max, ((this.v[i] as number) - (this.v[i - 1] as number)) / dt);
        }
        return max === -Infinity ? undefined : max;
      }
      case 'count':
      case 'quantile': {
        if (n < 2) return undefined;
        return windowQuantile(this.v[n - 1] as SparseHistogram, this.v[0] as SparseHistogram, reduce.kind === 'count' ? undefined : reduce.q);
      }
      case 'age':
        return undefined;
    }
  }
}

function wentDown(prev: SampleValue, next: SampleValue): boolean {
  if (typeof prev === 'number' || typeof next === 'number') return typeof prev === 'number' && typeof next === 'number' && next < prev;
  return histogramWentDown(prev, next);
}

/** subtract(next, prev) === undefined without building the difference: another layout, a bucket gone or a count lower. */
function histogramWentDown(prev: SparseHistogram, next: SparseHistogram): boolean {
  if (prev.groupingPower !== next.groupingPower || prev.maxValuePower !== next.maxValuePower) return true;
  let j = 0;
  for (let i = 0; i < prev.index.length; i++) {
    const idx = prev.index[i] as number;
    while (j < next.index.length && (next.index[j] as number) < idx) j++;
    if (j === next.index.length || next.index[j] !== idx || (next.count[j] as number) < (prev.count[i] as number)) return true;
  }
  return false;
}

/** q as the exact fraction it prints as (0.999 = 999/1000), so a rank is exact integer arithmetic. */
const fractions = new Map<number, readonly [number, number]>();
function fractionOf(q: number): readonly [number, number] {
  let f = fractions.get(q);
  if (f === undefined) {
    const digits = /\.(\d+)$/.exec(String(q))?.[1] ?? '';
    const den = 10 ** digits.length;
    f = [Math.round(q * den), den];
    fractions.set(q, f);
  }
  return f;
}

/**
 * The events between two cumulative histograms (base before last), without
 * building their difference: their count (q undefined), or the upper bound
 * of the bucket where rank max(1, ceil(q·N)) falls (percentiles()'s answer);
 * null when no event, undefined when the counts went down (a reset).
 */
function windowQuantile(last: SparseHistogram, base: SparseHistogram, q: number | undefined): number | null | undefined {
  if (histogramWentDown(base, last)) return undefined;
  let total = 0;
  let j = 0;
  for (let i = 0; i < last.index.length; i++) {
    let c = last.count[i] as number;
    if (base.index[j] === last.index[i]) c -= base.count[j++] as number;
    total += c;
  }
  if (q === undefined) return total;
  if (total === 0) return null;
  const [num, den] = fractionOf(q);
  const rank = Math.max(1, Math.ceil((num * total) / den));
  let cumulative = 0;
  j = 0;
  for (let i = 0; i < last.index.length; i++) {
    let c = last.count[i] as number;
    if (base.index[j] === last.index[i]) c -= base.count[j++] as number;
    cumulative += c;
    if (cumulative >= rank) return Number(indexToRange(last.index[i] as number, last.groupingPower, last.maxValuePower).upper);
  }
  return null;

}
