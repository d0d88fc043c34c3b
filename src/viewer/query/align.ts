/**
 * A/B comparison: two recordings taken at different times are compared by
 * the time since each one's start, and a difference line is drawn on A's
 * steps from B's nearest step.
 */
import type { QueryResult, QuerySeries } from '../api.js';

/**
 * The same result with its times (`t`, `start`, `end`) as ms since
 * `sourceStartMs`, the start of the source it came from.
 */
export function alignToOffset(result: QueryResult, sourceStartMs: number): QueryResult {
  return {
    ...result,
    start: result.start - sourceStartMs,
    end: result.end - sourceStartMs,
    t: result.t.map((x) => x - sourceStartMs),
  };
}

/** The spacing of a grid of step starts, or undefined with fewer than two. */
const spacing = (t: readonly number[]): number | undefined => (t.length >= 2 ? (t[1] as number) - (t[0] as number) : undefined);

/**
 * a − b on a's grid. For each step of a (times `aT`), the step of b (times
 * `bT`, sorted) nearest to it, if it is within half a step (a's step, or b's
 * when a has a single step; `stepMs` overrides both); a step of a with no
 * such step of b, or a null on either side, is null. Each of avg, min and
 * max is the difference of that field (max: A's peak minus B's peak).
 * The id and labels are a's; the name is a's, or `a − b` when they differ.
 */
export function difference(a: QuerySeries, b: QuerySeries, aT: readonly number[], bT: readonly number[], stepMs?: number): QuerySeries {
  const half = (stepMs ?? spacing(aT) ?? spacing(bT) ?? 0) / 2;
  const n = aT.length;
  const avg = new Array<number | null>(n).fill(null);
  const min = new Array<number | null>(n).fill(null);
  const max = new Array<number | null>(n).fill(null);
  const sub = (x: number | null | undefined, y: number | null | undefined): number | null =>
    x === null || x === undefined || y === null || y === undefined ? null : x - y;
  let j = 0; // aT is increasing, so the nearest step of b only moves forward
  for (let i = 0; i < n; i++) {
    const at = aT[i] as number;
    while (j + 1 < bT.length && Math.abs((bT[j + 1] as number) - at) <= Math.abs((bT[j] as number) - at)) j++;
    const bt = bT[j];
    if (bt === undefined || Math.abs(bt - at) > half) continue;
    avg[i] = sub(a.avg[i], b.avg[j]);
    min[i] = sub(a.min[i], b.min[j]);
    max[i] = sub(a.max[i], b.max[j]);
  }
  return { id: a.id, name: a.name === b.name ? a.name : `${a.name} − ${b.name}`, labels: a.labels, avg, min, max };
}
