/**
 * A comparison chart's lines: each series of A and of B on the axis of seconds
 * from each source's start (A solid, B dashed, one colour per series name),
 * and A − B per series for the small chart under it. Pure.
 */
import type { QueryResult } from '../api.js';
import { binOnto, difference, type OffsetGrid, offsetGrid } from './compare-align.js';
import { type LineChartData, type LineSpec, legendName } from './series-shape.js';

export interface CompareLines {
  readonly grid: OffsetGrid;
  readonly main: LineChartData;
  readonly diff: LineChartData;
}


type Answer = Pick<QueryResult, 't' | 'step' | 'series'> & { readonly metric?: string };

export function compareLines(a: Answer, originA: number, b: Answer, originB: number, sides: { readonly a: string; readonly b: string } = { a: 'A', b: 'B' }): CompareLines {
  const nameOf = (s: Answer['series'][number]) => legendName(s, a.metric || b.metric);
  const ta = { origin: originA, t: a.t, step: a.step };
  const tb = { origin: originB, t: b.t, step: b.step };
  const grid = offsetGrid(ta, tb);
  const names: string[] = [];
  for (const s of [...a.series, ...b.series]) if (!names.includes(nameOf(s))) names.push(nameOf(s));
  const main: LineSpec[] = [];
  const diff: LineSpec[] = [];
  names.forEach((name, i) => {
    const sa = a.series.find((s) => nameOf(s) === name);
    const sb = b.series.find((s) => nameOf(s) === name);
    const va = sa === undefined ? grid.x.map(() => null) : binOnto(ta, sa.avg, grid, 'avg');
    const vb = sb === undefined ? grid.x.map(() => null) : binOnto(tb, sb.avg, grid, 'avg');
    main.push({ label: `${sides.a} ${name}`, values: va, role: 'main', series: i });
    main.push({ label: `${sides.b} ${name}`, values: vb, role: 'b', series: i });
    diff.push({ label: `${sides.a} − ${sides.b} ${name}`, values: difference(va, vb), role: 'main', series: i });
  });
  return { grid, main: { x: grid.x, lines: main, bands: [] }, diff: { x: grid.x, lines: diff, bands: [] } };
}
