/**
 * Counters per step, as rates per second. Each sample gets the rate since
 * the sample before it, (v_i − v_{i−1}) / (t_i − t_{i−1}) s; a sample gets
 * none after a change of agent run (its counters restarted), next to a
 * missing value, when time did not advance, or when the counter went down
 * (a reset). A sample's rate belongs to the step holding its time t_i.
 *
 * Per step: avg is the rate over the step, Σ delta / Σ dt of its samples
 * (each weighted by its duration, so uneven spacing does not skew it); max
 * is the highest per-sample rate (the burst view: a 300 ms burst stays
 * visible in a 5 s step) and min the lowest. No rate in a step: null.
 */
import { type StepEnvelope, emptyEnvelope } from './envelope.js';
import type { SampleBins } from './steps.js';

/**
 * Rates per second of the cumulative counter `v`, per step of `bins`; `t`
 * and `run` are the track's sample times (ms) and agent runs.
 */
export function counterRates(t: readonly number[], run: readonly number[], v: readonly number[], bins: SampleBins): StepEnvelope {
  const out = emptyEnvelope(bins.grid.count);
  const { avg, min, max } = out;
  let k = -1;
  let deltaSum = 0;
  let dtSum = 0;
  let lowest = 0;
  let highest = 0;
  const flush = (): void => {
    if (dtSum > 0) {
      avg[k] = (deltaSum / dtSum) * 1000;
      min[k] = lowest;
      max[k] = highest;
    }
  };
  for (let i = Math.max(1, bins.lo); i < bins.hi; i++) {
    if (run[i] !== run[i - 1]) continue;
    const delta = (v[i] as number) - (v[i - 1] as number);
    const dt = (t[i] as number) - (t[i - 1] as number);
    // NaN on either side makes delta NaN and fails this test too.
    if (!(delta >= 0) || !(dt > 0)) continue;
    const rate = (delta / dt) * 1000;
    const c = bins.col[i - bins.lo] as number;
    if (c !== k) {
      flush();
      k = c;
      deltaSum = 0;
      dtSum = 0;
      lowest = rate;
      highest = rate;
    }
    deltaSum += delta;
    dtSum += dt;
    if (rate < lowest) lowest = rate;
    if (rate > highest) highest = rate;
  }
  flush();
  return out;
}
