/**
 * Writes a recording as Parquet with hyparquet-writer, one row group at a
 * time as the recording goes (memory holds one group, not the recording):
 * `timestamp` (UInt64 ns) and `host`, then one column per series sorted by
 * name: counters UInt64, gauges Double, histograms a list of UInt64 (dense
 * cumulative bucket counts), and each sampler's frame ends
 * (`timestamp/<sampler>`, UInt64 ns). Column metadata carries each series' identity;
 * file metadata the recording's (source, version, hosts,
 * sampling_interval_ms, descriptions). The file is written under a
 * temporary name, fsynced and renamed when complete (then the directory is
 * fsynced): under its name a file is always whole.
 *
 * `timestamp` and `host` are written by hyparquet-writer; the series
 * columns' chunks by chunks.ts, which is 10-20× faster for them. A series that first appears after
 * some groups were written (a device plugged in, a host joining the fleet)
 * still gets its column: at finish, each earlier group gets an all-null
 * chunk for it, written at the end of the data (a row group's chunks are
 * located by offset, they need not be contiguous).
 *
 * Findings this relies on (hyparquet-writer 0.17.0, read back by DuckDB 1.5.6):
 * UInt64 needs `converted_type: 'UINT_64'` (its INTEGER logical type makes a
 * file DuckDB rejects); column metadata, the added chunks and a growing
 * schema are set through the writer's public fields `schema`, `row_groups`,
 * `num_rows` and `kvMetadata`, as its API has no call for them.
 */
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { threadId } from 'node:worker_threads';
import { fileWriter, ParquetWriter } from 'hyparquet-writer';
import type { SparseHistogram } from '../metrics/histogram.js';
import { isReservedColumn, type ColumnSpec } from './columns.js';
import type { Cell, ColumnarGroup } from './group.js';
import { writeHistogramChunk, writeScalarChunk } from './chunks.js';
import { syncDir, syncFile } from '../files/fsync.js';
import { processAlive } from '../files/lock.js';

type WriterOptions = ConstructorParameters<typeof ParquetWriter>[0];
type SchemaElement = WriterOptions['schema'][number];
type KeyValue = NonNullable<WriterOptions['kvMetadata']>[number];
type ColumnChunk = ParquetWriter['row_groups'][number]['columns'][number];

export interface FileMetadata {
  readonly source: string;
  readonly version: string;
  readonly hosts: readonly string[];
  readonly samplingIntervalMs: number;
  /** metric name -> description */
  readonly descriptions: Readonly<Record<string, string>>;
}

/** The fewest rows per row group (the last one of a file may have fewer). */
export const MIN_ROW_GROUP = 600;

const RESERVED = new Set(['timestamp', 'host']);

function schemaOf(columns: readonly ColumnSpec[]): SchemaElement[] {
  const schema: SchemaElement[] = [
    { name: 'root', num_children: columns.length + 2 },
    { name: 'timestamp', type: 'INT64', repetition_type: 'REQUIRED', converted_type: 'UINT_64' },
    { name: 'host', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED', converted_type: 'UTF8' },
  ];
  for (const c of columns) {
    if (c.kind === 'histogram') {
      schema.push(
        { name: c.name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'INT64', repetition_type: 'REQUIRED', converted_type: 'UINT_64' },
      );
    } else if (c.kind === 'counter' || c.kind === 'timestamp') {
      schema.push({ name: c.name, type: 'INT64', repetition_type: 'OPTIONAL', converted_type: 'UINT_64' });
    } else {
      schema.push({ name: c.name, type: 'DOUBLE', repetition_type: 'OPTIONAL' });
    }
  }
  return schema;
}

/** The key/value metadata of a column. */
export function columnMetadata(c: ColumnSpec): KeyValue[] {
  if (c.kind === 'timestamp') return [...TIMESTAMP_METADATA, { key: 'sampler', value: c.sampler ?? '' }];
  const kv: KeyValue[] = [
    { key: 'metric', value: c.metric },
    { key: 'metric_type', value: c.kind },
    { key: 'unit', value: c.unit },
    { key: 'labels', value: JSON.stringify(c.labels) },
  ];
  if (c.groupingPower !== undefined) kv.push({ key: 'grouping_power', value: String(c.groupingPower) });
  if (c.maxValuePower !== undefined) kv.push({ key: 'max_value_power', value: String(c.maxValuePower) });
  if (c.sampler !== undefined) kv.push({ key: 'sampler', value: c.sampler });
  return kv;
}

const TIMESTAMP_METADATA: KeyValue[] = [
  { key: 'metric_type', value: 'timestamp' },
  { key: 'unit', value: 'nanoseconds' },
];

function fileKeyValues(meta: FileMetadata): KeyValue[] {
  return [
    { key: 'source', value: meta.source },
    { key: 'version', value: meta.version },
    { key: 'hosts', value: JSON.stringify(meta.hosts) },
    { key: 'sampling_interval_ms', value: String(meta.samplingIntervalMs) },
    { key: 'descriptions', value: JSON.stringify(meta.descriptions) },
  ];
}

function byName(a: ColumnSpec, b: ColumnSpec): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function chunkName(chunk: ColumnChunk): string | undefined {
  return chunk.meta_data?.path_in_schema[0];
}

/**
 * Pages are gzip level 1, by node's zlib: measured on 100 hosts' fixture
 * frames it wrote 2.6× smaller files than hyparquet-writer's own snappy (in
 * JavaScript), 40 % faster; every Parquet reader takes GZIP.
 */
export function gzip(bytes: Uint8Array): Uint8Array {
  return gzipSync(bytes, { level: 1 });
}

let serial = 0;

/** Removes `<path>.tmp-<pid>-…` files whose process is gone (a recorder killed with SIGKILL leaves one). */
function removeStaleTemporaries(path: string): void {
  const prefix = `${basename(path)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid)) rmSync(join(dirname(path), name), { force: true });
  }
}

export class ParquetStream {
  readonly #path: string;
  readonly #tmp: string;
  readonly #writer: ParquetWriter;
  readonly #columns = new Map<string, ColumnSpec>();
  #closed = false;

  /**
   * Opens `${path}.tmp-<pid>-…` for writing; the file appears under `path` at
   * finish(). Temporary files of `path` left by a killed process are removed.
   */
  constructor(path: string, createdBy: string) {
    removeStaleTemporaries(path);
    this.#path = path;
    this.#tmp = `${path}.tmp-${process.pid}-${threadId}-${serial++}`;
    this.#writer = new ParquetWriter({ writer: fileWriter(this.#tmp), schema: schemaOf([]), createdBy, codec: 'GZIP', compressors: { GZIP: gzip } });
  }

  /** Series columns so far (frame end columns not counted). */
  get columns(): number {
    let n = 0;
    for (const c of this.#columns.values()) if (c.kind !== 'timestamp') n++;
    return n;
  }

  /** Bytes written so far. */
  get bytes(): number {
    return this.#writer.writer.offset;
  }

  /** Appends a group as one row group; its new columns join the schema. */
  write(group: ColumnarGroup): void {
    if (this.#closed) throw new Error('the Parquet file is already finished');
    const n = group.timestamps.length;
    if (n === 0) return;
    let grew = false;
    for (const { spec } of group.columns.values()) {
      if (this.#columns.has(spec.name)) continue;
      if (RESERVED.has(spec.name) || (spec.kind !== 'timestamp' && isReservedColumn(spec.name))) throw new Error(`a series column may not be named ${spec.name}`);
      this.#columns.set(spec.name, spec);
      grew = true;
    }
    if (grew) this.#writer.schema = schemaOf([...this.#columns.values()].sort(byName));
    const chunks = [this.#chunk('timestamp', group.timestamps), this.#chunk('host', group.hosts)];
    for (const { spec, cells } of group.columns.values()) {
      const known = this.#columns.get(spec.name) as ColumnSpec;
      if (known.kind !== spec.kind) throw new Error(`column ${spec.name} is a ${known.kind}, not a ${spec.kind}`);
      chunks.push(this.#seriesChunk(known, cells));
    }
    const w = this.#writer;
    w.row_groups.push({
      columns: chunks,
      num_rows: BigInt(n),
      total_byte_size: chunks.reduce((sum, c) => sum + (c.meta_data?.total_uncompressed_size ?? 0n), 0n),
      total_compressed_size: chunks.reduce((sum, c) => sum + (c.meta_data?.total_compressed_size ?? 0n), 0n),
    });
    w.num_rows += BigInt(n);
  }

  /** Completes every row group's columns, writes the footer and renames the file into place. */
  async finish(meta: FileMetadata): Promise<void> {
    if (this.#closed) throw new Error('the Parquet file is already finished');
    this.#closed = true;
    try {
      const w = this.#writer;
      const sorted = [...this.#columns.values()].sort(byName);
      const kv = new Map<string, KeyValue[]>([['timestamp', TIMESTAMP_METADATA]]);
      for (const c of sorted) kv.set(c.name, columnMetadata(c));
      const order = ['timestamp', 'host', ...sorted.map((c) => c.name)];
      for (const group of [...w.row_groups]) {
        const have = new Map(group.columns.map((c) => [chunkName(c), c]));
        group.columns = order.map((name) => have.get(name) ?? this.#nullChunk(name, Number(group.num_rows)));
        for (const chunk of group.columns) {
          const meta = kv.get(chunkName(chunk) ?? '');
          if (chunk.meta_data !== undefined && meta !== undefined) chunk.meta_data.key_value_metadata = meta;
        }
      }
      w.kvMetadata = fileKeyValues(meta);
      await w.finish();
      // durable before it takes the name: a crash never leaves a torn file there
      syncFile(this.#tmp);
      renameSync(this.#tmp, this.#path);
      syncDir(this.#path);
    } catch (error) {
      rmSync(this.#tmp, { force: true });
      throw error;
    }
  }

  /** Gives up: removes the temporary file. */
  abort(): void {
    this.#closed = true;
    rmSync(this.#tmp, { force: true });
  }

  /** An all-null chunk for a group written before column `name` existed. */
  #nullChunk(name: string, rows: number): ColumnChunk {
    return this.#seriesChunk(this.#columns.get(name) as ColumnSpec, new Array<null>(rows).fill(null));
  }

  /** A series column's chunk, by chunks.ts (toCell gave every cell its column's kind, or null). */
  #seriesChunk(spec: ColumnSpec, cells: readonly Cell[]): ColumnChunk {
    const w = this.#writer.writer;
    if (spec.kind === 'histogram') return writeHistogramChunk(w, spec.name, cells as readonly (SparseHistogram | null)[], gzip);
    return writeScalarChunk(w, spec.name, spec.kind === 'gauge' ? 'gauge' : 'counter', cells as readonly (number | bigint | null)[], gzip);
  }

  /**
   * Writes a `timestamp` or `host` chunk with hyparquet-writer and takes it
   * out of the row group the writer made for it (a group is assembled from
   * its chunks).
   */
  #chunk(name: string, data: readonly unknown[]): ColumnChunk {
    const w = this.#writer;
    // min/max statistics only where readers filter: time and host
    void w.write({ columnData: [{ name, data: data as never[], statistics: RESERVED.has(name) }], rowGroupSize: data.length });
    const made = w.row_groups.pop();
    w.num_rows -= made?.num_rows ?? 0n;
    const chunk = made?.columns[0];
    if (chunk === undefined) throw new Error(`hyparquet-writer wrote no chunk for ${name}`);
    return chunk;
  }
}
