/**
 * Where a heatmap's cells go: a grid of columns (time steps) and rows
 * (h2 buckets on a log axis, or CPUs on a linear one) to pixel rectangles,
 * given the chart's value-to-pixel mappings. Pure: the chart passes uPlot's
 * valToPos in, tests pass plain functions.
 */

export interface Grid {
  /** column starts, in the chart's x unit */
  readonly x: readonly number[];
  /** column width, in the chart's x unit */
  readonly step: number;
  /** row bounds, in the chart's y unit */
  readonly lower: readonly number[];
  readonly upper: readonly number[];
  /** values[col][row]; null: nothing there */
  readonly values: readonly (readonly (number | null)[])[];
}

export interface Mapping {
  /** value -> pixel along x and y (pixels grow to the right and downwards) */
  readonly xPos: (v: number) => number;
  readonly yPos: (v: number) => number;
  /** the plotting area, in the same pixels */
  readonly left: number;
  readonly width: number;
  /** the y value drawn for a row bound at or below zero (log axes have no zero) */
  readonly yFloor?: number;
  /** the least height of a cell, grown about its middle (an h2 bucket is a sliver of a log axis over decades) */
  readonly minHeight?: number;
}

export interface Cell {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly col: number;
  readonly row: number;
  readonly value: number;
}

/**
 * The rectangles of every cell with a value, snapped to whole pixels and at
 * least 1 px wide (a one-sample column of an hour still shows) and
 * `minHeight` tall; columns wholly outside the plotting area are left out.
 */
export function cellRects(grid: Grid, map: Mapping): Cell[] {
  const cells: Cell[] = [];
  const right = map.left + map.width;
  const floor = map.yFloor;
  const yOf = (v: number) => map.yPos(floor !== undefined && v <= floor ? floor : v);
  const minH = Math.max(1, map.minHeight ?? 1);
  const rowTop: number[] = [];
  const rowBottom: number[] = [];
  for (let r = 0; r < grid.lower.length; r++) {
    const a = yOf(grid.upper[r] ?? 0);
    const b = yOf(grid.lower[r] ?? 0);
    let top = Math.round(Math.min(a, b));
    let bottom = Math.round(Math.max(a, b));
    if (bottom - top < minH) {
      top = Math.round((a + b) / 2 - minH / 2);
      bottom = top + minH;
    }
    rowTop.push(top);
    rowBottom.push(bottom);
  }
  for (let c = 0; c < grid.x.length; c++) {
    const t = grid.x[c];
    const col = grid.values[c];
    if (t === undefined || col === undefined) continue;
    const x0 = Math.round(map.xPos(t));
    // the next column's start, when it follows on (sample times jitter): neighbours share an edge, no seam
    const next = grid.x[c + 1];
    const end = next !== undefined && next > t && next - t <= 1.5 * grid.step ? next : t + grid.step;
    const x1 = Math.round(map.xPos(end));
    if (x1 < map.left || x0 > right) continue;
    const w = Math.max(1, x1 - x0);
    for (let r = 0; r < col.length; r++) {
      const value = col[r];
      if (value === null || value === undefined || !Number.isFinite(value)) continue;
      const y = rowTop[r];
      const bottom = rowBottom[r];
      if (y === undefined || bottom === undefined) continue;
      cells.push({ x: x0, y, w, h: bottom - y, col: c, row: r, value });
    }
  }
  return cells;
}

/**
 * The lowest y a log axis can show for these rows: the smallest positive
 * lower bound, else half the smallest positive upper bound, else 1.
 */
export function logFloor(lower: readonly number[], upper: readonly number[]): number {
  let lo = Number.POSITIVE_INFINITY;
  for (const v of lower) if (v > 0 && v < lo) lo = v;
  if (Number.isFinite(lo)) {
    // a bucket starting at 0 sits below the smallest positive one, not on it
    if (lower.some((v) => v <= 0)) {
      let up = Number.POSITIVE_INFINITY;
      for (let i = 0; i < lower.length; i++) if ((lower[i] ?? 1) <= 0 && (upper[i] ?? 0) > 0) up = Math.min(up, upper[i] ?? up);
      if (Number.isFinite(up)) return Math.min(lo, up) / 2;
    }
    return lo;
  }
  let up = Number.POSITIVE_INFINITY;
  for (const v of upper) if (v > 0 && v < up) up = v;
  return Number.isFinite(up) ? up / 2 : 1;
}

/** The y range covering every row: [floor, max upper] on a log axis, [min lower, max upper] on a linear one. */
export function rowRange(lower: readonly number[], upper: readonly number[], log: boolean): [number, number] {
  if (lower.length === 0) return log ? [1, 10] : [0, 1];
  const top = Math.max(...upper);
  const bottom = log ? logFloor(lower, upper) : Math.min(...lower);
  if (top > bottom) return [bottom, top];
  return log ? [bottom, bottom * 10] : [bottom, bottom + 1];
}

/** The row whose [lower, upper] holds y (the lowest such row), or -1. */
export function rowAt(y: number, lower: readonly number[], upper: readonly number[]): number {
  for (let r = 0; r < lower.length; r++) {
    const lo = lower[r] ?? 0;
    const up = upper[r] ?? 0;
    if (y >= lo && y <= up) return r;
  }
  return -1;
}

/** The column whose [x, x + step) holds v, or -1. Columns are in time order. */
export function colAt(v: number, x: readonly number[], step: number): number {
  let lo = 0;
  let hi = x.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = x[mid] ?? 0;
    if (v < start) hi = mid - 1;
    else if (v >= start + step) lo = mid + 1;
    else return mid;
  }
  return -1;
}
