/**
 * `window.__charts`: every chart on the page with the query it drew and what
 * it drew, for the browser tests (they compare it with GET /api/v1/query);
 * `window.__draws`, a count of chart draws, and `window.__firstDrawMs`, when
 * the first chart was drawn (performance.now(), for the benchmarks). Nothing
 * else reads them.
 */
import type { QueryFn, QueryResult } from '../api.js';
import type { DrawnMark } from './alert-marks.js';
import type { ChartKind } from './chart-plan.js';

export interface ChartRecord {
  readonly id: string;
  readonly source: string;
  readonly host: string;
  readonly metric: string;
  readonly fn: QueryFn;
  readonly kind: ChartKind;
  /** the last query's URL (relative to the page) and answer */
  url: string;
  result: QueryResult | undefined;
  /** what the chart holds: uPlot's data for lines, the grid for heatmaps */
  data: unknown;
  /** the plotting area's width in CSS pixels: the next query's budget */
  width: number | undefined;
  /** times the chart was drawn */
  draws: number;
  /** the alert markers of the last draw (a chart without them: undefined) */
  marks: readonly DrawnMark[] | undefined;
}

declare global {
  interface Window {
    __charts: ChartRecord[];
    __draws: number;
    __firstDrawMs: number | undefined;
  }
}

window.__charts = [];
window.__draws = 0;
window.__firstDrawMs = undefined;

let next = 0;

export function registerChart(r: Omit<ChartRecord, 'id' | 'url' | 'result' | 'data' | 'draws' | 'width' | 'marks'>): ChartRecord {
  const record: ChartRecord = { ...r, id: `c${next++}`, url: '', result: undefined, data: undefined, draws: 0, width: undefined, marks: undefined };
  window.__charts.push(record);
  return record;
}

export function unregisterChart(record: ChartRecord): void {
  window.__charts = window.__charts.filter((r) => r !== record);
}

export function countDraw(record: ChartRecord | undefined): void {
  window.__draws++;
  window.__firstDrawMs ??= performance.now();
  if (record !== undefined) record.draws++;
}
