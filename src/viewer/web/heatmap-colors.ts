/**
 * Heatmap colours: a sequential ramp from pale yellow (few) to dark violet
 * (many), cut into a fixed number of levels, and the mapping of a cell's value
 * to a level (log for bucket counts, which span decades; linear for per-CPU
 * values). Pure.
 */

/** [position 0..1, r, g, b] */
const STOPS: readonly (readonly [number, number, number, number])[] = [
  [0, 255, 245, 214],
  [0.25, 253, 196, 107],
  [0.5, 242, 115, 75],
  [0.75, 184, 50, 109],
  [1, 59, 15, 112],
];

export const LEVELS = 32;

/** The ramp's colour at t (clamped to 0..1) as `rgb(r,g,b)`. */
export function rampColor(t: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0));
  let i = 1;
  while (i < STOPS.length - 1 && (STOPS[i]?.[0] ?? 1) < x) i++;
  const a = STOPS[i - 1] ?? STOPS[0]!;
  const b = STOPS[i] ?? a;
  const f = b[0] === a[0] ? 0 : (x - a[0]) / (b[0] - a[0]);
  const mix = (k: 1 | 2 | 3) => Math.round(a[k] + (b[k] - a[k]) * f);
  return `rgb(${mix(1)},${mix(2)},${mix(3)})`;
}

/** `levels` colours from the ramp's start to its end. */
export function palette(levels = LEVELS): string[] {
  return Array.from({ length: levels }, (_, i) => rampColor(levels === 1 ? 1 : i / (levels - 1)));
}

export type ColorScale = 'log' | 'linear';

/**
 * The palette level of a cell's value, or -1 when the cell is not drawn (null,
 * NaN, or zero on a log scale: an empty bucket stays blank).
 * - `log`: level = log(1 + v) / log(1 + max) of the top level, and any v > 0
 *   gets at least level 1, so one event in a column of millions still shows;
 * - `linear`: v / max, zero drawn as level 0 (an idle CPU is a cell, not a hole).
 */
export function colorLevel(v: number | null | undefined, max: number, scale: ColorScale, levels = LEVELS): number {
  if (v === null || v === undefined || !Number.isFinite(v)) return -1;
  const top = levels - 1;
  if (scale === 'log') {
    if (v <= 0) return -1;
    if (!(max > 0)) return top;
    const level = Math.round((Math.log1p(v) / Math.log1p(max)) * top);
    return Math.min(top, Math.max(1, level));
  }
  if (!(max > 0) || v <= 0) return 0;
  return Math.min(top, Math.max(0, Math.round((v / max) * top)));
}

/** The largest finite value of a grid (0 when there is none). */
export function gridMax(values: readonly (readonly (number | null)[])[]): number {
  let max = 0;
  for (const col of values) for (const v of col) if (v !== null && Number.isFinite(v) && v > max) max = v;
  return max;
}
