/**
 * Resampling frames into recording rows: one row per host per interval
 * boundary (unix time multiples of the interval), holding for every series
 * the value of the newest frame of its sampler that ended at or before the
 * boundary. Counters and histograms are cumulative, so taking them at the
 * row time loses nothing. A host gets a row only for a boundary some frame of
 * it ended within (boundary − interval, boundary]: an agent that was down
 * leaves a gap, not repeated values. Pure, no I/O.
 */
import type { Descriptor, Frame, FrameValue } from '../frame/types.js';
import type { SparseHistogram } from '../metrics/histogram.js';
import { GROUPING_POWER, MAX_VALUE_POWER, toDense } from '../metrics/histogram.js';
import { columnsOf, type ColumnSpec } from './columns.js';
import type { Cell, RecordRow } from './parquet.js';

export interface Row {
  readonly timestampNs: bigint;
  readonly host: string;
  /** column name -> value */
  readonly values: ReadonlyMap<string, FrameValue>;
}

interface HostState {
  /** newest applied frame per sampler */
  readonly latest: Map<string, Frame>;
  /** frames not yet applied, sorted by end */
  readonly pending: Frame[];
  /** the next boundary a row may be emitted for; undefined before the first frame */
  next: bigint | undefined;
  maxEndNs: bigint;
}

export class RowBuilder {
  readonly #intervalNs: bigint;
  readonly #lagNs: bigint;
  readonly #hosts = new Map<string, HostState>();
  readonly #columns = new Map<string, ColumnSpec>();
  readonly #plans = new WeakMap<Descriptor, (ColumnSpec | undefined)[]>();

  /**
   * `lagNs` (default 1 s): how long after a boundary a host's frames are
   * waited for (samplers of one tick arrive in any order).
   */
  constructor(intervalNs: bigint, lagNs = 1_000_000_000n) {
    if (intervalNs <= 0n) throw new RangeError(`interval must be positive, got ${intervalNs}`);
    this.#intervalNs = intervalNs;
    this.#lagNs = lagNs;
  }

  /** Takes a frame; returns the rows it completes. */
  add(frame: Frame): Row[] {
    let h = this.#hosts.get(frame.host);
    if (h === undefined) {
      h = { latest: new Map(), pending: [], next: undefined, maxEndNs: frame.endNs };
      this.#hosts.set(frame.host, h);
    }
    let i = h.pending.length;
    while (i > 0 && (h.pending[i - 1] as Frame).endNs > frame.endNs) i--;
    h.pending.splice(i, 0, frame);
    if (frame.endNs > h.maxEndNs) h.maxEndNs = frame.endNs;
    return this.#emit(frame.host, h, h.maxEndNs - this.#lagNs);
  }

  /** The rows still held back (end of the recording). */
  flush(): Row[] {
    const out: Row[] = [];
    for (const [host, h] of this.#hosts) out.push(...this.#emit(host, h, this.#ceil(h.maxEndNs)));
    return out.sort((a, b) => (a.timestampNs === b.timestampNs ? (a.host < b.host ? -1 : 1) : a.timestampNs < b.timestampNs ? -1 : 1));
  }

  /** Every column seen so far, sorted by name. */
  columns(): ColumnSpec[] {
    return [...this.#columns.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  #ceil(ns: bigint): bigint {
    const r = ns % this.#intervalNs;
    return r === 0n ? ns : ns - r + this.#intervalNs;
  }

  /** Rows of one host for every boundary up to `until`. */
  #emit(host: string, h: HostState, until: bigint): Row[] {
    const out: Row[] = [];
    for (;;) {
      const first = h.pending[0];
      if (h.next === undefined) {
        if (first === undefined) return out;
        h.next = this.#ceil(first.endNs);
      }
      // jump over boundaries with no frame at all (a gap)
      if (first !== undefined && first.endNs > h.next) h.next = this.#ceil(first.endNs);
      if (h.next > until) return out;
      let fresh = false;
      while (h.pending.length > 0 && (h.pending[0] as Frame).endNs <= h.next) {
        const f = h.pending.shift() as Frame;
        h.latest.set(f.sampler, f);
        if (f.endNs > h.next - this.#intervalNs) fresh = true;
      }
      if (fresh) out.push({ timestampNs: h.next, host, values: this.#valuesOf(h) });
      h.next += this.#intervalNs;
      if (h.pending.length === 0 && h.next > until) return out;
    }
  }

  #valuesOf(h: HostState): Map<string, FrameValue> {
    const values = new Map<string, FrameValue>();
    for (const f of h.latest.values()) {
      let specs = this.#plans.get(f.descriptor);
      if (specs === undefined) {
        specs = columnsOf(f.descriptor);
        this.#plans.set(f.descriptor, specs);
        for (const s of specs) if (s !== undefined && !this.#columns.has(s.name)) this.#columns.set(s.name, s);
      }
      specs.forEach((s, i) => {
        const v = f.values[i];
        if (s !== undefined && v !== undefined) values.set(s.name, v);
      });
    }
    return values;
  }
}

function isHistogram(v: FrameValue): v is SparseHistogram {
  return typeof v === 'object';
}

/**
 * Rows as cells in the order of `columns`: histograms as dense bucket
 * lists (null when their layout is not the column's), a value of the wrong
 * kind as null.
 */
export function toRecordRows(rows: readonly Row[], columns: readonly ColumnSpec[]): RecordRow[] {
  return rows.map((r) => ({
    timestampNs: r.timestampNs,
    host: r.host,
    cells: columns.map((c): Cell => {
      const v = r.values.get(c.name);
      if (v === undefined) return null;
      if (c.kind === 'histogram') {
        return isHistogram(v) && v.groupingPower === GROUPING_POWER && v.maxValuePower === MAX_VALUE_POWER ? toDense(v) : null;
      }
      return isHistogram(v) ? null : v;
    }),
  }));
}
