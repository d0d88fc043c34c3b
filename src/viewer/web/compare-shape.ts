/**
 * A comparison chart's lines: each series of A and of B on the axis of seconds
 * from each source's start (A solid, B dashed, one colour per series name),
 * and A − B per series for the small chart under it. Pure.
 */
import type { QueryResult } from '../api.js';
import { binOnto, difference, type OffsetGrid, offsetGrid } from './compare-align.js';
import type { LineChartData, LineSpec } from './series-shape.js';

export interface CompareLines {
  readonly grid: OffsetGrid;
  readonly main: LineChartData;
  readonly diff: LineChartData;
}

const nameOf = (n: string) => (n === '' ? 'value' : n);

export function compareLines(a: Pick<QueryResult, 't' | 'step' | 'series'>, originA: number, b: Pick<QueryResult, 't' | 'step' | 'series'>, originB: number): CompareLines {
  const ta = { origin: originA, t: a.t, step: a.step };
  const tb = { origin: originB, t: b.t, step: b.step };
  const grid = offsetGrid(ta, tb);
  const names: string[] = [];
  for (const s of [...a.series, ...b.series]) if (!names.includes(nameOf(s.name))) names.push(nameOf(s.name));
  const main: LineSpec[] = [];
  const diff: LineSpec[] = [];
  names.forEach((name, i) => {
    const sa = a.series.find((s) => nameOf(s.name) === name);
    const sb = b.series.find((s) => nameOf(s.name) === name);
    const va = sa === undefined ? grid.x.map(() => null) : binOnto(ta, sa.avg, grid, 'avg');
    const vb = sb === undefined ? grid.x.map(() => null) : binOnto(tb, sb.avg, grid, 'avg');
    main.push({ label: `A ${name}`, values: va, role: 'main', series: i });
    main.push({ label: `B ${name}`, values: vb, role: 'b', series: i });
    diff.push({ label: `A − B ${name}`, values: difference(va, vb), role: 'main', series: i });
  });
  return { grid, main: { x: grid.x, lines: main, bands: [] }, diff: { x: grid.x, lines: diff, bands: [] } };
}
