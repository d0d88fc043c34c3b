/**
 * Rows into columns: a row group under construction, one array of cells per
 * column, filled as rows arrive (no per-row map). Each series of a
 * descriptor is planned once to its column; the first declaration of a
 * column name wins, and a value of another kind is stored as null; a series
 * named like the recording's own columns (columns.ts, isReservedColumn) is
 * left out. Each frame of a row also gives its sampler's frame end column
 * its end time. Pure.
 */
import type { Descriptor, FrameValue } from '../frame/types.js';
import { GROUPING_POWER, MAX_VALUE_POWER, type SparseHistogram } from '../metrics/histogram.js';
import { columnsOf, frameEndColumn, isReservedColumn, type ColumnSpec } from './columns.js';
import type { Row, TimedFrame } from './rows.js';

/** A frame as the recorder keeps it: its descriptor by hash, its values positional. */
export interface RecordedFrame extends TimedFrame {
  readonly descriptorHash: string;
  readonly values: readonly FrameValue[];
}

/** A cell: counters a number (a bigint beyond 2^53), gauges a number, histograms sparse (made dense when written); null when missing. */
export type Cell = bigint | number | SparseHistogram | null;

export interface GroupColumn {
  readonly spec: ColumnSpec;
  /** one cell per row of the group */
  readonly cells: Cell[];
}

/** A finished row group: rows in arrival order; only the columns some row had a value for. */
export interface ColumnarGroup {
  readonly timestamps: bigint[];
  readonly hosts: string[];
  readonly columns: ReadonlyMap<string, GroupColumn>;
}

/** A value as a cell of a column of `spec`'s kind; null when it does not fit. */
export function toCell(spec: ColumnSpec, v: FrameValue | undefined): Cell {
  if (v === undefined) return null;
  if (typeof v === 'object') {
    return spec.kind === 'histogram' && v.groupingPower === GROUPING_POWER && v.maxValuePower === MAX_VALUE_POWER ? v : null;
  }
  if (spec.kind === 'histogram' || spec.kind === 'timestamp') return null;
  if (spec.kind === 'gauge') return Number(v);
  if (typeof v === 'bigint') return v >= 0n && v < 1n << 64n ? (v <= MAX_SAFE ? Number(v) : v) : null;
  return Number.isSafeInteger(v) && v >= 0 ? v : null;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

export class GroupBuilder {
  readonly #descriptors = new Map<string, Descriptor>();
  readonly #plans = new Map<string, (ColumnSpec | undefined)[]>();
  /** every column ever planned, by name (the first declaration) */
  readonly #specs = new Map<string, ColumnSpec>();
  /** the frame end column of each sampler */
  readonly #frameEnds = new Map<string, ColumnSpec>();
  #timestamps: bigint[] = [];
  #hosts: string[] = [];
  #columns = new Map<string, GroupColumn>();

  /** Makes a descriptor known (frames refer to it by hash). */
  describe(hash: string, d: Descriptor): void {
    if (!this.#descriptors.has(hash)) this.#descriptors.set(hash, d);
  }

  /** A descriptor made known, by hash. */
  descriptor(hash: string): Descriptor | undefined {
    return this.#descriptors.get(hash);
  }

  /** Rows in the group under construction. */
  get size(): number {
    return this.#timestamps.length;
  }

  /** Every column seen so far, in no particular order. */
  specs(): IterableIterator<ColumnSpec> {
    return this.#specs.values();
  }

  add(row: Row<RecordedFrame>): void {
    const r = this.#timestamps.length;
    this.#timestamps.push(row.timestampNs);
    this.#hosts.push(row.host);
    for (const f of row.frames) {
      const plan = this.#plan(f.descriptorHash, f.sampler);
      for (let i = 0; i < plan.length; i++) {
        const spec = plan[i];
        if (spec !== undefined) this.#set(spec, r, toCell(spec, f.values[i]));
      }
      let end = this.#frameEnds.get(f.sampler);
      if (end === undefined) {
        end = frameEndColumn(f.sampler);
        this.#frameEnds.set(f.sampler, end);
      }
      this.#set(end, r, f.endNs);
    }
  }

  #set(spec: ColumnSpec, r: number, cell: Cell): void {
    let col = this.#columns.get(spec.name);
    if (col === undefined) {
      col = { spec, cells: [] };
      this.#columns.set(spec.name, col);
    }
    // rows before this one that had no value for the column
    while (col.cells.length < r) col.cells.push(null);
    col.cells[r] = cell;
  }

  /** The group so far, every column padded to its length; starts a new one. */
  take(): ColumnarGroup {
    const n = this.#timestamps.length;
    for (const col of this.#columns.values()) while (col.cells.length < n) col.cells.push(null);
    const group = { timestamps: this.#timestamps, hosts: this.#hosts, columns: this.#columns };
    this.#timestamps = [];
    this.#hosts = [];
    this.#columns = new Map();
    return group;
  }

  /** The columns of a descriptor's series; a column new to the recording belongs to `sampler`, whose frame first declared it. */
  #plan(hash: string, sampler: string): readonly (ColumnSpec | undefined)[] {
    let plan = this.#plans.get(hash);
    if (plan !== undefined) return plan;
    const d = this.#descriptors.get(hash);
    if (d === undefined) throw new Error(`descriptor ${hash} was not made known before its frames`);
    plan = columnsOf(d).map((s) => {
      if (s === undefined || isReservedColumn(s.name)) return undefined;
      const known = this.#specs.get(s.name);
      if (known !== undefined) return known;
      const spec = { ...s, sampler };
      this.#specs.set(s.name, spec);
      return spec;
    });
    this.#plans.set(hash, plan);
    return plan;
  }
}
