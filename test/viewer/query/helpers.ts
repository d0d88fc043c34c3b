/** Builders shared by the query tests (not a test file itself). */
import type { MetricKind } from '../../../src/metrics/metric.js';
import type { SeriesInfo } from '../../../src/viewer/track.js';

export { prng } from '../../helpers/prng.js';

/** Series info with the id `metric/value/value…` a recording would give it. */
export function info(metric: string, kind: MetricKind, unit: string, labels: Record<string, string> = {}): SeriesInfo {
  const id = [metric, ...Object.values(labels)].join('/');
  return { id, metric, kind, unit, labels };
}

/** A 10-minute-aligned unix ms base for tracks (a multiple of every step up to 10 min). */
export const T0 = 1_700_000_400_000;
