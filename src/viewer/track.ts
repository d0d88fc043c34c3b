/**
 * What the viewer holds of a host: one Track per (host, sampler) for live
 * frames, or one per host for a recording's rows. A track has one time
 * column and one value column per series; every source (the live bus, a
 * Parquet file, an agent's HTTP) fills the same shape, and every query reads
 * it, so a chart does not know where its data came from.
 */
import type { SparseHistogram } from '../metrics/histogram.js';
import type { MetricKind } from '../metrics/metric.js';
import type { Labels } from '../metrics/point.js';

/** A series' identity: the recording's column name (`metric/label value/…`) is its id. */
export interface SeriesInfo {
  readonly id: string;
  readonly metric: string;
  readonly kind: MetricKind;
  readonly unit: string;
  readonly labels: Labels;
  /** the metric's description, where the source carries it */
  readonly description?: string;
}

/** Counters (cumulative) and gauges: a number per sample, NaN where the series had no value. */
export interface ScalarColumn {
  readonly info: SeriesInfo;
  readonly v: number[];
}

/** Histograms: the cumulative histogram per sample, undefined where the series had none. */
export interface HistogramColumn {
  readonly info: SeriesInfo;
  readonly h: (SparseHistogram | undefined)[];
}

export type Column = ScalarColumn | HistogramColumn;

export function isHistogramColumn(c: Column): c is HistogramColumn {
  return c.info.kind === 'histogram';
}

/**
 * Samples of one host (and, live, one sampler) in time order. `t[i]` is the
 * end of sample i's acquisition window in unix ms (fractional); `run[i]` the
 * agent run that produced it (a change restarts every counter, so no rate
 * spans it). Columns are aligned with `t`.
 */
export class Track {
  readonly t: number[] = [];
  readonly run: number[] = [];
  readonly columns = new Map<string, Column>();

  /** Appends one sample; series absent from `values` get NaN / undefined. Times must not go back. */
  append(tMs: number, run: number, values: ReadonlyMap<string, { readonly info: SeriesInfo; readonly value: number | SparseHistogram }>): void {
    const at = this.t.length;
    this.t.push(tMs);
    this.run.push(run);
    for (const [id, { info, value }] of values) {
      let c = this.columns.get(id);
      if (c === undefined) {
        c = info.kind === 'histogram' ? { info, h: new Array<SparseHistogram | undefined>(at).fill(undefined) } : { info, v: new Array<number>(at).fill(Number.NaN) };
        this.columns.set(id, c);
      }
      if (isHistogramColumn(c)) c.h.push(typeof value === 'number' ? undefined : value);
      else c.v.push(typeof value === 'number' ? value : Number.NaN);
    }
    for (const c of this.columns.values()) {
      if (isHistogramColumn(c)) {
        if (c.h.length === at) c.h.push(undefined);
      } else if (c.v.length === at) c.v.push(Number.NaN);
    }
  }

  /** Drops samples older than `beforeMs`, and columns left without a value. */
  trim(beforeMs: number): void {
    let n = 0;
    while (n < this.t.length && (this.t[n] as number) < beforeMs) n++;
    if (n === 0) return;
    this.t.splice(0, n);
    this.run.splice(0, n);
    for (const [id, c] of this.columns) {
      if (isHistogramColumn(c)) {
        c.h.splice(0, n);
        if (c.h.every((h) => h === undefined)) this.columns.delete(id);
      } else {
        c.v.splice(0, n);
        if (c.v.every(Number.isNaN)) this.columns.delete(id);
      }
    }
  }

  get first(): number | undefined {
    return this.t[0];
  }

  get last(): number | undefined {
    return this.t[this.t.length - 1];
  }
}
