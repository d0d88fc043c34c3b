/**
 * Gauges per step: the min, max and mean of the samples inside each step.
 * The max and min are of the raw samples, so a one-sample spike in an hour
 * of data is still the max of its step however far the view is zoomed out
 * (no LTTB or other point picking: a picked point can miss the spike).
 */
import type { SampleBins } from './steps.js';

/** A value per step (null: nothing in that step). */
export interface StepEnvelope {
  readonly avg: (number | null)[];
  readonly min: (number | null)[];
  readonly max: (number | null)[];
}

/** An envelope of `count` steps, all null. */
export function emptyEnvelope(count: number): StepEnvelope {
  return {
    avg: new Array<number | null>(count).fill(null),
    min: new Array<number | null>(count).fill(null),
    max: new Array<number | null>(count).fill(null),
  };
}

/**
 * Per step, min, max and avg of the samples of `v` (aligned with the
 * track's t, NaN = absent) that fall in it; a step without a sample is null
 * in all three.
 */
export function gaugeEnvelope(v: readonly number[], bins: SampleBins): StepEnvelope {
  const out = emptyEnvelope(bins.grid.count);
  const { avg, min, max } = out;
  let k = -1; // step being accumulated
  let sum = 0;
  let n = 0;
  let lowest = 0;
  let highest = 0;
  const flush = (): void => {
    if (n > 0) {
      avg[k] = sum / n;
      min[k] = lowest;
      max[k] = highest;
    }
  };
  for (let i = bins.lo; i < bins.hi; i++) {
    const x = v[i] as number;
    if (Number.isNaN(x)) continue;
    const c = bins.col[i - bins.lo] as number;
    if (c !== k) {
      flush();
      k = c;
      sum = 0;
      n = 0;
      lowest = x;
      highest = x;
    }
    sum += x;
    n++;
    if (x < lowest) lowest = x;
    if (x > highest) highest = x;
  }
  flush();
  return out;
}
