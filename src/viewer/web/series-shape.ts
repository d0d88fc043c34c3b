/**
 * A query answer as chart lines: x in seconds (uPlot's time unit), and for
 * each series the lines its kind draws:
 * - rate: the rate over the step (solid) and, where the frames are denser than
 *   the step, the burst: the highest per-sample rate in it (dashed, lighter);
 * - value: the value (solid) and, where a step holds several samples, its min
 *   and max as a band;
 * - percentiles: one line per percentile.
 * Lines carry the series' index, so a series keeps one colour. Pure.
 */
import type { QueryResult, QuerySeries } from '../api.js';

/** main: the value; burst: the step's highest per-sample rate; min/max: a band; b: source B in a comparison */
export type LineRole = 'main' | 'burst' | 'min' | 'max' | 'b';

export interface LineSpec {
  readonly label: string;
  readonly values: (number | null)[];
  readonly role: LineRole;
  /** the query series it comes from: its colour */
  readonly series: number;
}

export interface LineChartData {
  /** step starts, unix seconds */
  readonly x: number[];
  readonly lines: LineSpec[];
  /** [upper line, lower line] indices of the bands to fill */
  readonly bands: [number, number][];
}

/** Whether `hi` rises above `lo` anywhere by more than rounding noise. */
export function differs(hi: readonly (number | null)[], lo: readonly (number | null)[]): boolean {
  for (let i = 0; i < hi.length; i++) {
    const a = hi[i];
    const b = lo[i];
    if (a === null || a === undefined || b === null || b === undefined) continue;
    if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))) return true;
  }
  return false;
}

const copy = (v: readonly (number | null)[]): (number | null)[] => v.map((x) => (x === null || Number.isFinite(x) ? x : null));

/**
 * A series' legend name: its label values, as the API names it; a series
 * without labels (the API calls it `total`) is named by its metric, so
 * memory_available's one line does not read as total memory.
 */
export function legendName(s: Pick<QuerySeries, 'name' | 'labels'>, metric: string | undefined): string {
  if (Object.keys(s.labels).length === 0 && (s.name === '' || s.name === 'total')) return metric === undefined || metric === '' ? 'value' : metric;
  return s.name === '' ? 'value' : s.name;
}

export function lineChartData(r: Pick<QueryResult, 't' | 'series'> & { readonly metric?: string }, kind: 'rate' | 'value' | 'percentiles'): LineChartData {
  const x = r.t.map((t) => t / 1000);
  const lines: LineSpec[] = [];
  const bands: [number, number][] = [];
  r.series.forEach((s, i) => {
    const name = legendName(s, r.metric);
    lines.push({ label: name, values: copy(s.avg), role: 'main', series: i });
    if (kind === 'rate' && differs(s.max, s.avg)) {
      lines.push({ label: `${name} burst`, values: copy(s.max), role: 'burst', series: i });
    }
    if (kind === 'value' && (differs(s.max, s.avg) || differs(s.avg, s.min))) {
      lines.push({ label: `${name} max`, values: copy(s.max), role: 'max', series: i });
      lines.push({ label: `${name} min`, values: copy(s.min), role: 'min', series: i });
      bands.push([lines.length - 2, lines.length - 1]);
    }
  });
  return { x, lines, bands };
}

/** For a log axis: values at or below zero cannot be drawn and become gaps. */
export function positiveOnly(values: readonly (number | null)[]): (number | null)[] {
  return values.map((v) => (v !== null && v > 0 ? v : null));
}

/**
 * The indices of the values a line cannot show: a value whose neighbours are
 * both gaps (or the ends) draws no segment, so it must be drawn as a point.
 */
export function isolatedPoints(values: ArrayLike<number | null | undefined>): number[] {
  const out: number[] = [];
  const has = (i: number) => i >= 0 && i < values.length && values[i] !== null && values[i] !== undefined;
  for (let i = 0; i < values.length; i++) if (has(i) && !has(i - 1) && !has(i + 1)) out.push(i);
  return out;
}

/** Whether a line is zero (or empty) at every step: hidden by default in a chart of many lines. */
export function flatZero(values: readonly (number | null)[]): boolean {
  return values.every((v) => v === null || v === 0);
}

/** The lines' values at step `idx`, largest first, gaps left out: the hover list of a chart of many lines. */
export function hoveredValues<L extends { readonly label: string }>(lines: readonly L[], values: readonly (readonly (number | null)[])[], idx: number): { line: L; value: number }[] {
  const out: { line: L; value: number }[] = [];
  lines.forEach((line, i) => {
    const v = values[i]?.[idx];
    if (v !== null && v !== undefined && Number.isFinite(v)) out.push({ line, value: v });
  });
  return out.sort((a, b) => b.value - a.value);
}
