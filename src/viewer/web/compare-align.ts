/**
 * A/B comparison: two sources' steps put on one axis of seconds from each
 * source's own start, so minute 3 of A sits over minute 3 of B whatever their
 * wall clocks, and the difference A − B taken column by column. Pure.
 */

/** One source's query answer: step starts in unix ms, the source's start, the step. */
export interface Timed {
  /** the source's first sample, unix ms: offset 0 */
  readonly origin: number;
  readonly t: readonly number[];
  /** ms */
  readonly step: number;
}

export interface OffsetGrid {
  /** column starts, seconds from each source's start */
  readonly x: number[];
  /** seconds */
  readonly step: number;
  /** the first column's start, ms from the origins */
  readonly firstMs: number;
  readonly stepMs: number;
}

export type Reduce = 'avg' | 'min' | 'max';

/** Where a step goes: its middle's offset from the source's start (steps start on the clock's grid, not at the source's first sample). */
const middle = (src: Timed, t: number) => t + src.step / 2 - src.origin;

/**
 * The columns covering both sources, at the coarser of their two steps (two
 * answers for the same offsets and budget usually have the same step; a
 * shorter source may have a finer one). A step goes to the column holding its
 * middle, so a step that begins 200 ms before a source's first sample still
 * pairs with the other source's first step.
 */
export function offsetGrid(a: Timed, b: Timed): OffsetGrid {
  const stepMs = Math.max(a.step, b.step, 1);
  const offsets = [...a.t.map((t) => middle(a, t)), ...b.t.map((t) => middle(b, t))];
  if (offsets.length === 0) return { x: [], step: stepMs / 1000, firstMs: 0, stepMs };
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const o of offsets) {
    if (o < lo) lo = o;
    if (o > hi) hi = o;
  }
  const firstMs = Math.floor(lo / stepMs) * stepMs;
  const count = Math.floor((hi - firstMs) / stepMs) + 1;
  const x = Array.from({ length: count }, (_, k) => (firstMs + k * stepMs) / 1000);
  return { x, step: stepMs / 1000, firstMs, stepMs };
}

/**
 * One source's values on the grid: each step goes to the column holding its
 * middle's offset; several steps in one column are averaged (avg) or give their
 * extreme (min, max). A column with none is null.
 */
export function binOnto(src: Timed, values: readonly (number | null)[], grid: OffsetGrid, reduce: Reduce): (number | null)[] {
  const out: (number | null)[] = new Array(grid.x.length).fill(null);
  const counts: number[] = new Array(grid.x.length).fill(0);
  for (let i = 0; i < src.t.length; i++) {
    const v = values[i];
    const t = src.t[i];
    if (v === null || v === undefined || t === undefined || !Number.isFinite(v)) continue;
    const k = Math.floor((middle(src, t) - grid.firstMs) / grid.stepMs);
    if (k < 0 || k >= out.length) continue;
    const prev = out[k] ?? null;
    const n = counts[k] ?? 0;
    if (prev === null) out[k] = v;
    else if (reduce === 'avg') out[k] = prev + (v - prev) / (n + 1);
    else if (reduce === 'max') out[k] = Math.max(prev, v);
    else out[k] = Math.min(prev, v);
    counts[k] = n + 1;
  }
  return out;
}

/** A − B per column; null where either side has nothing. */
export function difference(a: readonly (number | null)[], b: readonly (number | null)[]): (number | null)[] {
  const n = Math.max(a.length, b.length);
  const out: (number | null)[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    out.push(x === null || x === undefined || y === null || y === undefined ? null : x - y);
  }
  return out;
}

/** The offsets (ms) a zoom in seconds-from-start asks each source for: [origin + from, origin + to]. */
export function sourceRange(origin: number, fromSec: number, toSec: number): { start: number; end: number } {
  return { start: Math.round(origin + fromSec * 1000), end: Math.round(origin + toSec * 1000) };
}
