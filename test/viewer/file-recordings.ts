/**
 * Recordings for the viewer's file tests: written by the recorder's own
 * ParquetStream (what `rezolus record` writes), or by hyparquet-writer's
 * generic writer with the same schema and metadata (pages and encodings
 * the recorder does not use: bit-packed levels, several pages a chunk,
 * SNAPPY, DELTA), so both of the loader's decoding paths are exercised.
 */
import { writeFileSync } from 'node:fs';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import { toDense, type SparseHistogram } from '../../src/metrics/histogram.js';
import type { ColumnSpec } from '../../src/parquet/columns.js';
import type { Cell, ColumnarGroup } from '../../src/parquet/group.js';
import { columnMetadata, type FileMetadata, ParquetStream } from '../../src/parquet/parquet.js';

export const T0 = 1_735_689_600_000_000_000n; // 2025-01-01T00:00:00Z, ns

export interface Row {
  readonly ns: bigint;
  readonly host: string;
}

/** A series and its cell in each row (null: none). */
export interface Series {
  readonly spec: ColumnSpec;
  readonly cell: (row: number) => Cell;
}

export function spec(name: string, kind: ColumnSpec['kind'], labels: Record<string, string> = {}, unit = 'count'): ColumnSpec {
  const metric = name.split('/')[0] as string;
  const s: ColumnSpec = { name, metric, kind, unit, labels };
  return kind === 'histogram' ? { ...s, groupingPower: 3, maxValuePower: 64 } : s;
}

export function meta(hosts: readonly string[], over: Partial<FileMetadata> = {}): FileMetadata {
  return { source: 'rezolus-nats', version: '0.1.0-test', hosts, samplingIntervalMs: 1000, descriptions: {}, ...over };
}

/**
 * Writes rows with ParquetStream, `groupRows` rows a row group; a series
 * whose cells in a group are all null is left out of that group (as the
 * recorder does for a series that is not there yet).
 */
export async function writeRecording(path: string, rows: readonly Row[], series: readonly Series[], fileMeta: FileMetadata, groupRows = 600): Promise<void> {
  const file = new ParquetStream(path, 'viewer file test');
  for (let from = 0; from < rows.length; from += groupRows) {
    const to = Math.min(rows.length, from + groupRows);
    const group: ColumnarGroup = { timestamps: [], hosts: [], columns: new Map() };
    for (let r = from; r < to; r++) {
      group.timestamps.push((rows[r] as Row).ns);
      group.hosts.push((rows[r] as Row).host);
    }
    for (const s of series) {
      const cells: Cell[] = [];
      for (let r = from; r < to; r++) cells.push(s.cell(r));
      if (cells.some((c) => c !== null)) (group.columns as Map<string, { spec: ColumnSpec; cells: Cell[] }>).set(s.spec.name, { spec: s.spec, cells });
    }
    file.write(group);
  }
  await file.finish(fileMeta);
}

/**
 * The same recording through hyparquet-writer's own column writer: SNAPPY,
 * small pages, and `delta` columns DELTA_BINARY_PACKED (which the loader's
 * fast path leaves to hyparquet).
 */
export async function writeGeneric(path: string, rows: readonly Row[], series: readonly Series[], fileMeta: FileMetadata, options: { groupRows?: number; pageSize?: number; delta?: readonly string[] } = {}): Promise<void> {
  const schema: ConstructorParameters<typeof ParquetWriter>[0]['schema'] = [
    { name: 'root', num_children: series.length + 2 },
    { name: 'timestamp', type: 'INT64', repetition_type: 'REQUIRED', converted_type: 'UINT_64' },
    { name: 'host', type: 'BYTE_ARRAY', repetition_type: 'REQUIRED', converted_type: 'UTF8' },
  ];
  for (const { spec: c } of series) {
    if (c.kind === 'histogram') {
      schema.push(
        { name: c.name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'INT64', repetition_type: 'REQUIRED', converted_type: 'UINT_64' },
      );
    } else if (c.kind === 'counter') schema.push({ name: c.name, type: 'INT64', repetition_type: 'OPTIONAL', converted_type: 'UINT_64' });
    else schema.push({ name: c.name, type: 'DOUBLE', repetition_type: 'OPTIONAL' });
  }
  const writer = new ByteWriter();
  const w = new ParquetWriter({ writer, schema, codec: 'SNAPPY', kvMetadata: kvOf(fileMeta), statistics: false });
  const cellOf = (s: Series, r: number): unknown => {
    const c = s.cell(r);
    if (c === null) return null;
    if (s.spec.kind === 'histogram') return toDense(c as SparseHistogram).map(BigInt);
    return s.spec.kind === 'counter' ? BigInt(c as number | bigint) : c;
  };
  const columnData = [
    { name: 'timestamp', data: rows.map((r) => r.ns) },
    { name: 'host', data: rows.map((r) => r.host) },
    ...series.map((s) => ({
      name: s.spec.name,
      data: rows.map((_, r) => cellOf(s, r)),
      ...(options.delta?.includes(s.spec.name) ? { encoding: 'DELTA_BINARY_PACKED' as const } : {}),
    })),
  ];
  await w.write({ columnData: columnData as never, rowGroupSize: options.groupRows ?? 600, pageSize: options.pageSize ?? 1024 });
  const specs = new Map(series.map((s) => [s.spec.name, s.spec]));
  for (const group of w.row_groups) {
    for (const chunk of group.columns) {
      const s = specs.get(chunk.meta_data?.path_in_schema[0] ?? '');
      if (s !== undefined && chunk.meta_data !== undefined) chunk.meta_data.key_value_metadata = columnMetadata(s);
    }
  }
  await w.finish();
  writeFileSync(path, new Uint8Array(writer.getBuffer()));
}

function kvOf(m: FileMetadata): { key: string; value: string }[] {
  return [
    { key: 'source', value: m.source },
    { key: 'version', value: m.version },
    { key: 'hosts', value: JSON.stringify(m.hosts) },
    { key: 'sampling_interval_ms', value: String(m.samplingIntervalMs) },
    { key: 'descriptions', value: JSON.stringify(m.descriptions) },
  ];
}
